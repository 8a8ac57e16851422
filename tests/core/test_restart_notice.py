"""The restart notice says what the previous run really left.

After a kill during an automatic compaction only an unanswered message was
left, and the notice spoke of "the cut-off reply". Here the store is real and
the compaction marks are written through the run loop's own events; the kill
is the process leaving without its clean exit or the compaction's end.

The tests taking ``any_target`` run on a sessions.db file and on PostgreSQL, where
each machine sharing the database has its own run (``parley.core.app_state.COMPACTING``).
"""

from __future__ import annotations

from parley.core import machine
from parley.core.app_state import COMPACTING
from parley.core.compaction.types import CompactEvent
from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.events import Events
from parley.core.recovery import previous_run
from parley.core.recovery.restart_notice import (
    COMPACTION,
    COMPACTION_UNANSWERED,
    CUT_OFF,
    UNANSWERED,
    restart_notice,
)
from parley.core.store import AsyncStore


async def _crashed_run(path, *, cut: bool, unanswered: bool, compacting: bool):
    """A run that left what is asked, then died (no clean exit, no compact:end)."""
    store = await AsyncStore.open(path)
    try:
        await previous_run.mark_running(store, pid=1, now_ms=1)
        events = Events()
        marks = previous_run.CompactionMarks(store, events)
        if cut:
            sid = (await store.create_session(title="cut")).id
            await store.append_turn(sid, Turn("user", [TextBlock("tell me")]))
            await store.append_turn(sid, Turn("assistant", [TextBlock("Once")], aborted=True,
                                                    cut_off=True))  # as journalled
        if unanswered or compacting:
            sid = (await store.create_session(title="waiting")).id
            if unanswered:
                await store.append_turn(sid, Turn("user", [TextBlock("hello?")]))
            if compacting:
                events.emit(CompactEvent("compact:start", sid, "auto"))
                await marks.wait()
    finally:
        await store.close()


async def _next_start(path) -> previous_run.PreviousRun:
    store = await AsyncStore.open(path)
    try:
        previous = await previous_run.mark_running(store, pid=2)
        assert previous is not None
        compacting = COMPACTING.row(store)
        assert await store.get_state(compacting) is None
        return previous
    finally:
        await store.close()


async def test_kill_during_auto_compaction_tells_an_unanswered_message_not_a_cut_off_reply(
    any_target,
):
    path = any_target
    await _crashed_run(path, cut=False, unanswered=True, compacting=True)
    previous = await _next_start(path)
    assert [i.kind for i in previous.interrupted] == ["unanswered"]
    assert previous.compacting == [previous.interrupted[0].session_id]
    notice = previous.notice()
    assert notice == COMPACTION_UNANSWERED
    assert "cut-off" not in notice and "Continue" not in notice


async def test_each_kind_of_leftover_gets_its_own_words(tmp_path):
    cases = {
        "cut": (dict(cut=True, unanswered=False, compacting=False), CUT_OFF),
        "unanswered": (dict(cut=False, unanswered=True, compacting=False), UNANSWERED),
        "compaction": (dict(cut=False, unanswered=False, compacting=True), COMPACTION),
    }
    for name, (left, words) in cases.items():
        path = tmp_path / f"{name}.db"
        await _crashed_run(path, **left)
        assert (await _next_start(path)).notice() == words, name


async def test_a_compaction_that_ended_leaves_no_mark(any_target):
    path = any_target
    store = await AsyncStore.open(path)
    events = Events()
    marks = previous_run.CompactionMarks(store, events)
    await previous_run.mark_running(store, pid=1, now_ms=1)
    events.emit(CompactEvent("compact:start", "s1", "manual"))
    events.emit(CompactEvent("compact:end", "s1", "manual"))
    await marks.wait()
    assert await store.get_state(COMPACTING.row(store)) is None
    await store.close()
    previous = await _next_start(path)
    assert previous.compacting == [] and previous.notice() is None


async def test_a_parley_starting_beside_another_machines_tells_nothing_of_its_run(
    postgres_url, monkeypatch
):
    """Two machines on one PostgreSQL database: each start and exit is its own machine's."""
    monkeypatch.setattr(machine, "machine_name", lambda: "laptop")
    laptop = await AsyncStore.open(postgres_url)
    desktop = await AsyncStore.open(postgres_url)
    try:
        assert await previous_run.mark_running(laptop, pid=1, now_ms=1) is None
        events = Events()
        marks = previous_run.CompactionMarks(laptop, events)
        sid = (await laptop.create_session(title="streaming on the laptop")).id
        await laptop.append_turn(sid, Turn("user", [TextBlock("asked, the reply on its way")]))
        events.emit(CompactEvent("compact:start", sid, "auto"))
        await marks.wait()

        monkeypatch.setattr(machine, "machine_name", lambda: "desktop")
        assert await previous_run.mark_running(desktop, pid=2) is None  # the laptop runs on
        await previous_run.mark_clean_exit(desktop)

        monkeypatch.setattr(machine, "machine_name", lambda: "laptop")
        previous = await previous_run.mark_running(laptop, pid=3)  # the laptop was killed
        assert previous is not None and previous.pid == 1
        assert [i.session_id for i in previous.interrupted] == [sid]
        assert previous.compacting == [sid]
    finally:
        await laptop.close()
        await desktop.close()


def test_mixed_leftovers_are_all_named():
    class Item:
        def __init__(self, sid: str, kind: str) -> None:
            self.session_id, self.kind = sid, kind

    both = restart_notice([Item("a", "partial"), Item("b", "unanswered")])
    assert both is not None and both.startswith(CUT_OFF) and "without a reply" in both
    assert restart_notice([]) is None


async def _compacted(store, title: str, texts: list[str]) -> tuple[str, list[Turn]]:
    """A chat of ``texts`` (user and assistant in turn) compacted: its summary stored last."""
    sid = (await store.create_session(title=title)).id
    stored = [await store.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                                [TextBlock(text)]))
              for i, text in enumerate(texts)]
    summary = Turn("user", [CompactSummaryBlock("<summary>So far.</summary>", 2)])
    await store.record_compaction(sid, summary, first_turn_id=stored[0].id,
                                  last_turn_id=stored[1].id, replaced_count=2)
    return sid, stored


async def test_compacted_chats_and_a_stopped_reply_are_no_leftovers(any_target):
    """The trial: after compacting two chats, every start said "2 messages were left
    without a reply" (the summary is stored last, with role user), and a kill during one
    reply told "closed while replying in 2 chats" (a reply stopped earlier counted)."""
    store = await AsyncStore.open(any_target)
    try:
        await previous_run.mark_running(store, pid=1, now_ms=1)
        await _compacted(store, "one", ["a", "b", "c", "d"])
        await _compacted(store, "two", ["e", "f", "g", "h"])
        stopped = (await store.create_session(title="stopped")).id
        await store.append_turn(stopped, Turn("user", [TextBlock("tell me")]))
        await store.append_turn(stopped, Turn("assistant", [TextBlock("Once")], aborted=True))
    finally:
        await store.close()
    store = await AsyncStore.open(any_target)
    try:
        previous = await previous_run.mark_running(store, pid=2)  # killed, nothing was left
        assert previous is not None and previous.interrupted == []
        assert previous.notice() is None
        # killed while replying in one chat: one cut-off reply told, nothing else
        cut = (await store.create_session(title="cut")).id
        await store.append_turn(cut, Turn("user", [TextBlock("go on")]))
        reply = await store.append_turn(cut, Turn("assistant", [TextBlock("Half")],
                                                  aborted=True, cut_off=True))
        previous = await previous_run.mark_running(store, pid=3)
        assert previous is not None
        assert [(i.session_id, i.turn_id, i.kind) for i in previous.interrupted] == [
            (cut, reply.id, "partial")]
        assert previous.notice() == CUT_OFF
    finally:
        await store.close()


async def test_a_message_waiting_behind_a_summary_is_still_unanswered(any_target):
    """A compaction made before a reply (automatic), then a kill before the reply: the
    message before the summary waits, and is told."""
    store = await AsyncStore.open(any_target)
    try:
        await previous_run.mark_running(store, pid=1, now_ms=1)
        sid, stored = await _compacted(store, "waiting", ["a", "b", "c", "d", "e?"])
        previous = await previous_run.mark_running(store, pid=2)
        assert previous is not None
        assert [(i.session_id, i.turn_id, i.kind) for i in previous.interrupted] == [
            (sid, stored[-1].id, "unanswered")]
    finally:
        await store.close()
