"""Window integrations: manual compaction with progress and its summary card, the
crash notice, a damaged sessions.db, long chats opened in part, the cache timer and
the context meter, Settings."""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta

import pytest
from PySide6.QtCore import Qt

from parley.core import paths
from parley.core.app_state import RUN_MARKER
from parley.core.compaction.types import CompactEvent
from parley.core.content import TextBlock, Turn
from parley.core.events import CacheUpdated
from parley.core.store import Store
from parley.gui.chat import paging
from parley.gui.main_window import INTERRUPTED_NOTICE
from tests.gui.chats import long_chat
from tests.gui.helpers import progress_text

pytestmark = pytest.mark.timeout(60)


def _env(fake_provider) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL":
            fake_provider.anthropic_base_url}


def test_compact_now_shows_progress_then_the_summary_card(driver, fake_provider):
    w = driver.configured()
    sid, _turns = long_chat(driver, w, 12)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    seen: list[tuple[bool, str]] = []
    w.runner.events.on(CompactEvent,
                       lambda e: e.name == "compact:start" and seen.append(
                           (w.statusBar().isVisible(), progress_text(w.chat.editor))))
    fake_provider.script("<summary>The user counted messages from 0 to 7, five times each."
                         "</summary>")
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message, timeout=10)
    assert seen and seen[0][0] and seen[0][1].startswith("Compacting")
    assert progress_text(w.chat.editor) == "" and not w.chat.editor.progress_bar.isVisible()
    w.statusBar().showMessage("later news")  # the status bar still shows messages
    assert w.statusBar().isVisible() and w.statusBar().currentMessage() == "later news"
    driver.until(lambda: any(r.kind == "card" for r in w.transcript.model.rows))
    assert len(driver.run(w.store.list_compactions(sid))) == 1
    assert len(driver.run(w.store.get_turns(sid))) == 13  # nothing deleted: a summary added


def test_compact_now_compacts_a_chat_over_its_window(driver, fake_provider):
    """Fresh-user trial 15: two pasted ~3,000-word messages on a 20,000-token model, the
    meter over the window, and Compact now said "There is nothing to compact yet"."""
    w = driver.configured()
    driver.run(w.store.set_setting(
        "model_overrides", {"claude-sonnet-4-6": {"context_window": 20_000}}))
    driver.run(w.hub.load())
    s = driver.run(w.store.create_session(title="Two pastes", model="anthropic:claude-sonnet-4-6"))
    for tag in ("alpha", "beta"):
        paste = " ".join(f"{tag}{k % 97}" for k in range(6_000))
        driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock(paste)])))
        driver.run(w.store.append_turn(s.id, Turn("assistant", [TextBlock(f"Read {tag}.")])))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    fake_provider.script("<summary>Two pastes of words, alpha and beta, were read.</summary>")
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message or "nothing" in w.toast.message,
                 timeout=20)
    assert w.toast.message.startswith("Compacted"), w.toast.message
    assert len(driver.run(w.store.list_compactions(s.id))) == 1


def test_compact_now_says_why_nothing_was_compacted(driver, fake_provider):
    w = driver.configured()
    sid, _turns = long_chat(driver, w, 2, title="Short")
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    w.window_commands.compact_now()
    driver.until(lambda: "nothing to compact" in w.toast.message)
    assert fake_provider.model_requests == []
    w.window_commands.new_session()
    driver.until(lambda: w.session_id is None)
    assert w.window_commands.compact_now() is False
    assert "not saved yet" in w.toast.message


def test_compact_now_that_would_not_make_the_chat_smaller_says_so_and_changes_nothing(
        driver, fake_provider):
    """A short chat: a summary of its two oldest turns would be longer than they are."""
    from parley.gui.chat.compact_notice import WOULD_NOT_REDUCE

    w = driver.configured()
    sid, turns = long_chat(driver, w, 6, title="Short")
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.transcript.model.rows)
    shown = [n.key for n in w.transcript.model.rows]
    fake_provider.script("<summary>" + "The user counted messages, five times each. " * 40
                         + "</summary>")
    assert w.window_commands.compact_now() is True
    driver.until(lambda: w.toast.message == WOULD_NOT_REDUCE and w.tasks.pending == 0,
                 timeout=10)
    assert WOULD_NOT_REDUCE == "Compacting would not make this chat smaller — nothing changed."
    assert driver.run(w.store.list_compactions(sid)) == []
    assert [t.id for t in driver.run(w.store.get_turns(sid))] == [t.id for t in turns]
    assert [n.key for n in w.transcript.model.rows] == shown  # no card


def test_compact_now_says_in_words_why_a_summary_was_refused(driver, fake_provider):
    w = driver.configured()
    sid, turns = long_chat(driver, w, 12)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    shown: list = []
    w.show_problem = w.tasks.on_user_error = shown.append
    said: list[str] = []
    w.runner.events.on(CompactEvent, lambda e: e.name == "compact:progress" and said.append(
        progress_text(w.chat.editor)))
    # Not a summary, however often and however it is asked for (the fake's knob: every
    # summary request answered chattily, without tags).
    fake_provider.summary_answers = "chatty"
    assert w.window_commands.compact_now() is True
    bar = w.statusBar()
    driver.until(lambda: bar.currentMessage() and w.tasks.pending == 0, timeout=10)
    assert shown == []  # one line in the status bar, not a dialog of paragraphs
    line = bar.currentMessage()
    assert line.startswith("Couldn't summarize this chat — ") and "\n" not in line
    assert "did not answer with a summary" in line and "anthropic:" not in line
    details = "\n".join(bar.details().lines)
    assert "Nothing was lost" in details and "anthropic:" not in details
    assert driver.run(w.store.list_compactions(sid)) == []
    assert len(driver.run(w.store.get_turns(sid))) == len(turns)
    assert progress_text(w.chat.editor) == ""
    assert any(re.fullmatch(r"Compacting a long conversation: summarizing part 1 of \d+…", t)
               for t in said)
    assert not any(r.kind == "card" for r in w.transcript.model.rows)


def test_a_refused_automatic_compaction_is_told_and_the_message_still_goes(
    driver, fake_provider
):
    w = driver.configured()
    driver.run(w.store.set_setting("compaction.threshold", 0.25))  # 50k of a 200k window
    s = driver.run(w.store.create_session(title="Big", model="anthropic:claude-opus-4-1"))

    async def fill() -> None:
        for i in range(12):  # ~6k tokens each
            role = "user" if i % 2 == 0 else "assistant"
            await w.store.append_turn(s.id, Turn(role, [TextBlock(f"part {i} " * 3_000)]))

    driver.run(fill(), timeout=30)
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    fake_provider.summary_answers = "chatty"  # no summary, however it is asked for
    driver.send("And now?", w, wait=True)
    bar = w.statusBar()
    driver.until(lambda: bar.currentMessage().startswith("Couldn't summarize this chat"),
                 timeout=10)
    assert not w.toast.isVisible()  # one line in the status bar, no paragraph over the box
    assert "did not answer with a summary" in bar.currentMessage()
    assert driver.run(w.store.list_compactions(s.id)) == []
    assert driver.run(w.store.get_turns(s.id))[-1].text() == "You said: And now?"  # answered


def test_a_refused_automatic_compaction_stays_said_and_is_not_retried_at_every_send(
    driver, fake_provider
):
    """The tester's slow local model: minutes per refused try, the words on screen for
    seconds only, and the try made again at every send."""
    w = driver.configured()
    driver.run(w.store.set_setting("compaction.threshold", 0.25))
    s = driver.run(w.store.create_session(title="Big", model="anthropic:claude-opus-4-1"))

    async def fill() -> None:
        for i in range(12):
            role = "user" if i % 2 == 0 else "assistant"
            await w.store.append_turn(s.id, Turn(role, [TextBlock(f"part {i} " * 3_000)]))

    driver.run(fill(), timeout=30)
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    fake_provider.summary_answers = "chatty"  # no summary, however it is asked for
    driver.send("And now?", w, wait=True)
    bar = w.statusBar()
    driver.until(lambda: bar.currentMessage().startswith("Couldn't summarize this chat"),
                 timeout=10)
    details = "\n".join(bar.details().lines)
    assert "will not try again on its own in this chat until it has grown" in details
    assert "Compact now" in details
    sent = len(fake_provider.model_requests)
    fake_provider.script("Second answer.")
    driver.send("And then?", w, wait=True)
    assert len(fake_provider.model_requests) == sent + 1  # no summary asked for again
    assert driver.run(w.store.get_turns(s.id))[-1].text() == "Second answer."


def test_a_reply_cut_off_by_a_crash_is_announced(driver, fake_provider, home):
    with Store.open(paths.db_path(home)) as store:
        s = store.create_session(title="Interrupted")
        store.append_turn(s.id, Turn("user", [TextBlock("Tell me a story")]))
        store.append_turn(s.id, Turn("assistant", [TextBlock("Once upon a")], aborted=True,
                                         cut_off=True))  # as journalled while it streamed
        store.set_state(RUN_MARKER.name, {"pid": 1, "started_at": 0})  # no clean exit
    w = driver.open(env=_env(fake_provider))
    assert w.toast.isVisible() and w.toast.message == INTERRUPTED_NOTICE
    assert [r.session_id for r in w.previous_run.interrupted] == [s.id]
    driver.close(w)
    with Store.open(paths.db_path(home)) as store:
        assert store.get_state(RUN_MARKER.name) is None  # this run ended cleanly
    again = driver.open(env=_env(fake_provider))
    assert again.previous_run is None and not again.toast.isVisible()


@pytest.mark.parametrize("choice", ["backup", "fresh"])
def test_a_damaged_file_offers_the_backup_or_a_new_file(driver, fake_provider, home, choice):
    from parley.gui.main_window import MainWindow

    db = paths.db_path(home)
    with Store.open(db) as store:
        store.create_session(title="Kept chat")
    shutil.copy(db, db.with_name(db.name + ".parley-pre-v4.bak"))
    data = bytearray(db.read_bytes())
    data[100:8192] = b"\xa5" * (8192 - 100)
    db.write_bytes(bytes(data))
    damaged = bytes(data)

    w = MainWindow(home=home, env=_env(fake_provider))
    driver.windows.append(w)
    w.show()
    w.startup.start_after_first_paint()
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 20)
    page = w.recovery_page
    assert "damaged" in page.findChild(type(w.loading_page)).text()
    newest = page.restore_buttons[0]  # the copy taken before an upgrade, with its counts
    assert newest.isEnabled()
    assert "0 messages in 1 chat (copy taken before an upgrade)" in newest.accessibleName()
    button = newest if choice == "backup" else page.fresh_button
    driver.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 20)
    titles = [s.title for s in driver.run(w.store.list_sessions())]
    assert titles == (["Kept chat"] if choice == "backup" else [])
    aside = [p for p in home.iterdir() if ".corrupt-" in p.name and not p.name.endswith(
        ("-wal", "-shm"))]
    assert len(aside) == 1 and aside[0].read_bytes() == damaged  # never overwritten
    assert "kept as" in w.toast.message


def test_a_long_chat_opens_with_its_last_turns_and_loads_older_on_scroll(driver, monkeypatch):
    monkeypatch.setattr(paging, "OLDER_SETTLE_S", 0.0)
    w = driver.configured()
    sid, turns = long_chat(driver, w, 250)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    assert len(w.chat.turns) == paging.OPEN_TURNS and w.chat.older == 50
    assert w.transcript.turn_ids()[0] == turns[50].id
    driver.until(lambda: w.tasks.pending == 0)
    from parley.gui.header.context_meter import measure

    shape = w.chat.meter.next_request_shape(sid)  # its system prompt and tools count too
    full = measure(turns, None, w.chat.current_model(), w.hub, shape)[0]
    assert w.context_meter.used == full  # the meter counts every turn, not only those shown
    bar = w.transcript.list_view.verticalScrollBar()
    driver.until(lambda: bar.maximum() > 0)
    bar.setValue(0)
    driver.until(lambda: len(w.chat.turns) == 250)
    assert w.chat.older == 0 and w.transcript.turn_ids()[0] == turns[0].id
    assert w.transcript.focused_turn_id() == turns[50].id  # the place is kept


def test_cache_timer_runs_and_the_meter_shows_the_warm_cache(driver, fake_provider, qtbot):
    w = driver.configured()
    assert w.cache_timer is not None
    fake_provider.script("ok")
    driver.send("hello", wait=True)
    sid = w.session_id
    until = datetime.now().astimezone() + timedelta(minutes=5)  # ahead: a past one shows not
    w.runner.events.emit(CacheUpdated(sid, until, None))
    assert f"cache warm until {until:%H:%M}" in w.context_meter.label.text()
    w.runner.events.emit(CacheUpdated(sid, None, None))
    assert "cache" not in w.context_meter.label.text()
    seen = []
    w.cache_timer.activity = seen.append
    qtbot.keyClicks(w.composer, "x")
    assert seen and seen[-1] == sid  # typing calls off a pending cache-timer compaction


def test_settings_open_without_blocking(driver):
    w = driver.configured()
    dlg = w.window_commands.open_settings()
    assert dlg is not None and dlg.isVisible()
    assert dlg.testAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    driver.until(lambda: dlg.ready)  # closing while it still loads: see the report
    dlg.close()


def test_focus_methods(driver):
    w = driver.configured()
    w.window_commands.focus_sidebar()
    driver.until(lambda: w.sidebar.tree.hasFocus())
    w.window_commands.focus_transcript()
    driver.until(lambda: w.transcript.list_view.hasFocus())
    w.window_commands.focus_composer()
    driver.until(lambda: w.composer.hasFocus())
