"""The restart notice says what the previous run really left.

After a kill during an automatic compaction only an unanswered message was
left, and the notice spoke of "the cut-off reply". Here the store is real and
the compaction marks are written through the run loop's own hooks; the kill
is the process leaving without its clean exit or the compaction's end.

The tests taking ``any_target`` run on a sessions.db file and on PostgreSQL, where
each machine sharing the database has its own run (``recovery.machine_key``).
"""

from __future__ import annotations

from parley.core import recovery
from parley.core.content import TextBlock, Turn
from parley.core.hooks import Hooks
from parley.core.restart_notice import (
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
        await recovery.mark_running(store, pid=1, now_ms=1)
        hooks = Hooks()
        marks = recovery.CompactionMarks(store, hooks)
        if cut:
            sid = (await store.create_session(title="cut")).id
            await store.append_turn(sid, Turn("user", [TextBlock("tell me")]))
            await store.append_turn(sid, Turn("assistant", [TextBlock("Once")], aborted=True))
        if unanswered or compacting:
            sid = (await store.create_session(title="waiting")).id
            if unanswered:
                await store.append_turn(sid, Turn("user", [TextBlock("hello?")]))
            if compacting:
                hooks.fire("compact:start", session_id=sid, trigger="auto")
                await marks.wait()
    finally:
        await store.close()


async def _next_start(path) -> recovery.PreviousRun:
    store = await AsyncStore.open(path)
    try:
        previous = await recovery.mark_running(store, pid=2)
        assert previous is not None
        assert await store.get_state(recovery.machine_key(store, recovery.COMPACTING)) is None
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
    hooks = Hooks()
    marks = recovery.CompactionMarks(store, hooks)
    await recovery.mark_running(store, pid=1, now_ms=1)
    hooks.fire("compact:start", session_id="s1", trigger="manual")
    hooks.fire("compact:end", session_id="s1", trigger="manual")
    await marks.wait()
    assert await store.get_state(recovery.machine_key(store, recovery.COMPACTING)) is None
    await store.close()
    previous = await _next_start(path)
    assert previous.compacting == [] and previous.notice() is None


async def test_a_parley_starting_beside_another_machines_tells_nothing_of_its_run(
    postgres_url, monkeypatch
):
    """Two machines on one PostgreSQL database: each start and exit is its own machine's."""
    monkeypatch.setattr(recovery, "machine_name", lambda: "laptop")
    laptop = await AsyncStore.open(postgres_url)
    desktop = await AsyncStore.open(postgres_url)
    try:
        assert await recovery.mark_running(laptop, pid=1, now_ms=1) is None
        hooks = Hooks()
        marks = recovery.CompactionMarks(laptop, hooks)
        sid = (await laptop.create_session(title="streaming on the laptop")).id
        await laptop.append_turn(sid, Turn("user", [TextBlock("asked, the reply on its way")]))
        hooks.fire("compact:start", session_id=sid, trigger="auto")
        await marks.wait()

        monkeypatch.setattr(recovery, "machine_name", lambda: "desktop")
        assert await recovery.mark_running(desktop, pid=2) is None  # the laptop runs on
        await recovery.mark_clean_exit(desktop)

        monkeypatch.setattr(recovery, "machine_name", lambda: "laptop")
        previous = await recovery.mark_running(laptop, pid=3)  # the laptop was killed
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
