"""The Settings dialog, driven like a person: real sessions.db, the fake provider, a fake clock."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QCheckBox, QLabel, QLineEdit

from parley.core.compaction.cache_timer import CacheTimer
from parley.core.content import TextBlock
from parley.core.workspace import Workspace
from parley.gui import dialogs
from parley.gui.commands.actions import ACTIONS
from parley.gui.settings.dialog import EXPERIMENTAL_INTRO, SettingsDialog
from tests.fakes.clock import ManualClock
from tests.gui.hubs import open_hub

LEFT = Qt.MouseButton.LeftButton
MODEL = "anthropic:claude-haiku-4-5"  # 200k window: long from 100k input tokens
EXPERIMENTAL = "experimental.compact_before_cache_expiry"


class App:
    """The core pieces the main window would hold, on the qasync loop."""

    def __init__(self, store, hub, runner, clock) -> None:
        self.store, self.hub, self.runner, self.clock = store, hub, runner, clock
        self.compacted: list[tuple[str, str]] = []

        async def compact(session_id: str, *, reason: str = "manual", keep_turns=None):
            self.compacted.append((session_id, reason))
            return {"compacted": True}

        self.timer = CacheTimer(runner, compact, clock=clock)


@pytest.fixture
def app(run, tmp_path, fake_provider):
    async def build() -> tuple[Workspace, App]:
        ws = await open_hub(tmp_path)
        await ws.hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                                  api_key="sk-ant-test", default_model="claude-haiku-4-5")
        return ws, App(ws.store, ws.hub, ws.runner, ManualClock())

    ws, a = run(build(), timeout=30)
    yield a
    a.timer.close()
    run(ws.close())


@pytest.fixture
def dialog(app, qtbot, until):
    d = SettingsDialog(app.store, app.hub)
    qtbot.addWidget(d)
    d.show()
    # Setup, not the behaviour under test: the first dialog of a test process waits for the
    # anthropic SDK's import (its models are listed), 5-9 s on a loaded 2-core machine.
    until(lambda: d.ready and d.tasks.pending == 0, timeout=30)
    return d


def open_section(qtbot, dialog, name: str) -> None:
    item = dialog.nav.findItems(name, Qt.MatchFlag.MatchExactly)[0]
    rect = dialog.nav.visualItemRect(item)
    qtbot.mouseClick(dialog.nav.viewport(), LEFT, pos=rect.center())
    assert dialog.stack.currentIndex() == dialog.nav.row(item)


def long_request(app, run, fake_provider, sid: str) -> None:
    fake_provider.script("Noted.", usage={"input_tokens": 150_000})
    turn = run(app.runner.send(sid, [TextBlock("And the rest?")], model_ref=MODEL), timeout=20)
    assert turn is not None and turn.usage.total_input_tokens >= 150_000
    run(app.timer.wait_idle())


def test_switching_on_the_experiment_arms_the_timer_after_a_long_request(
    app, dialog, qtbot, until, run, fake_provider
):
    open_section(qtbot, dialog, "Experimental")
    page = dialog.stack.currentWidget()
    assert page.isAncestorOf(dialog.editors[EXPERIMENTAL])
    assert any(w.text() == EXPERIMENTAL_INTRO for w in page.findChildren(QLabel))
    box = dialog.editors[EXPERIMENTAL].input
    assert isinstance(box, QCheckBox) and box.text() == "Compact before the cache expires"
    assert not box.isChecked()  # off by default
    [hint] = dialog.editors[EXPERIMENTAL].findChildren(QLabel, "FieldHint")
    assert "prompt cache expires" in hint.text()

    qtbot.mouseClick(box, LEFT)
    assert box.isChecked()
    until(lambda: dialog.tasks.pending == 0)
    assert run(app.store.get_setting(EXPERIMENTAL)) is True  # persisted in sessions.db

    sid = run(app.store.create_session()).id
    t0 = app.clock.time()
    long_request(app, run, fake_provider, sid)
    armed = app.timer.armed(sid)
    assert armed is not None and armed.timestamp() == t0 + 240
    assert app.timer.expiry(sid).timestamp() == t0 + 300

    qtbot.mouseClick(box, LEFT)  # off again: disarmed at once, nothing left scheduled
    until(lambda: app.timer.armed(sid) is None)
    assert app.clock.pending == []
    assert run(app.store.get_setting(EXPERIMENTAL)) is False


def test_an_invalid_value_is_refused_with_a_message(app, dialog, qtbot, until, run):
    open_section(qtbot, dialog, "Compaction")
    editor = dialog.editors["compaction.threshold"]
    edit = editor.input
    assert isinstance(edit, QLineEdit) and edit.text() == "0.8"

    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "very full")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert editor.error.isVisible()
    assert "must be a number from 0.2 to 0.95" in editor.error.text()
    assert "'very full' is not. The setting was not changed." in editor.error.text()
    assert edit.text() == "0.8"  # the setting in force, not the refused text (trial 17)
    until(lambda: dialog.tasks.pending == 0)
    assert run(app.store.get_setting("compaction.threshold")) is None  # nothing written

    edit.selectAll()
    qtbot.keyClicks(edit, "70%")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert not editor.error.isVisible() and edit.text() == "0.7"
    until(lambda: run(app.store.get_setting("compaction.threshold")) == 0.7)


def test_choices_and_text_apply_at_once(app, dialog, qtbot, until, run):
    open_section(qtbot, dialog, "Compaction")
    strategy = dialog.editors["compaction.strategy"].input
    strategy.setFocus()
    qtbot.keyClick(strategy, Qt.Key.Key_Down)  # Summary → Tail
    until(lambda: run(app.store.get_setting("compaction.strategy")) == "tail")

    open_section(qtbot, dialog, "Chat")
    prompt = dialog.editors["chat.system_prompt"].input
    prompt.setFocus()
    qtbot.keyClicks(prompt, "Answer briefly.")
    dialog.close()  # closing commits what was typed
    until(lambda: run(app.store.get_setting("chat.system_prompt")) == "Answer briefly.")


def test_pages_for_providers_and_keyboard(app, dialog, qtbot, until, run):
    page = dialog.providers
    assert page.list.count() == 1 and "Anthropic" in page.list.item(0).text()
    until(lambda: "saved in Parley's key file" in page.key_hint.text())
    assert "127.0.0.1" in page.url_hint.text() and "set here" in page.url_hint.text()
    assert page.default_model.text() == MODEL

    page.default_model.setFocus()
    page.default_model.selectAll()
    qtbot.keyClicks(page.default_model, "llama")
    dialogs.answers.append(False)  # should any "Remove provider?" question pop up
    qtbot.keyClick(page.default_model, Qt.Key.Key_Return)
    until(lambda: page.default_error.isVisible())
    assert "provider:model" in page.default_error.text()
    assert app.hub.default_model_ref() == MODEL
    # Enter committed the field only: it pressed neither Remove nor Close.
    assert list(dialogs.answers) == [False] and dialog.isVisible()
    dialogs.answers.clear()

    page.default_model.setText("anthropic:claude-opus-4-6")
    qtbot.keyClick(page.default_model, Qt.Key.Key_Return)
    until(lambda: app.hub.default_model_ref() == "anthropic:claude-opus-4-6")
    assert not page.default_error.isVisible()

    open_section(qtbot, dialog, "Keyboard")
    table = dialog.shortcuts
    assert table.rowCount() == len(ACTIONS)
    labels = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert labels["New chat"] == "Ctrl+N" and labels["Send message"] == "Enter"
    assert table.editTriggers() == QAbstractItemView.EditTrigger.NoEditTriggers  # read-only


def test_removing_a_provider_asks_first(app, dialog, qtbot, until):
    page = dialog.providers
    dialogs.answers.append(False)
    qtbot.mouseClick(page.remove_button, LEFT)
    assert page.list.count() == 1 and app.hub.configs
    dialogs.answers.append(True)
    qtbot.mouseClick(page.remove_button, LEFT)
    until(lambda: page.list.count() == 0 and not app.hub.configs)


@pytest.mark.parametrize("section", ["Experimental", "Chat"])
def test_tab_from_the_section_list_goes_to_the_pages_first_field(dialog, qtbot, section):
    """No invisible tab stop: the scroll area around a page never takes the focus."""
    open_section(qtbot, dialog, section)
    dialog.nav.setFocus()
    stops = []
    for _ in range(6):
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Tab)
        stops.append(dialog.focusWidget())
    page = dialog.stack.currentWidget()
    assert page not in stops
    first = stops[0]
    assert page.isAncestorOf(first) and first.isVisible()
    if section == "Experimental":
        assert first is dialog.editors[EXPERIMENTAL].input
