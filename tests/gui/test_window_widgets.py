"""The window's parts on their own: composer keys, sidebar order, set-up panel, actions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt

from parley.core.providers.base import ModelInfo
from parley.core.providers.errors import AuthenticationFailed, NetworkError
from parley.gui.commands import actions
from parley.gui.composer.widget import ComposerBar
from parley.gui.header.context_meter import ContextMeter, short_count
from parley.gui.sidebar.model import SessionTreeModel
from parley.gui.startup.setup_panel import SetupAnswers, SetupPanel


# -- composer ---------------------------------------------------------------
@pytest.fixture
def bar(qtbot):
    bar = ComposerBar()
    qtbot.addWidget(bar)
    bar.show()
    calls: list[str] = []

    def dispatch(action):
        calls.append(action.id)
        if action.id == "composer.newline":
            bar.editor.insertPlainText("\n")
        if action.id == "composer.edit_last":
            return False if bar.editor.text() else None
        if action.id == "run.stop":
            return bar.busy
        return None

    bar.editor.on_action = dispatch
    bar.calls = calls
    return bar


def test_enter_sends_and_shift_enter_adds_a_line(bar, qtbot):
    qtbot.keyClicks(bar.editor, "hello")
    qtbot.keyClick(bar.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(bar.editor, "world")
    assert bar.editor.text() == "hello\nworld"
    qtbot.keyClick(bar.editor, Qt.Key.Key_Return)
    assert bar.calls == ["composer.newline", "composer.send"]
    qtbot.keyClick(bar.editor, Qt.Key.Key_Enter, Qt.KeyboardModifier.KeypadModifier)
    assert bar.calls[-1] == "composer.send"


def test_up_only_edits_when_empty_and_esc_stops(bar, qtbot):
    qtbot.keyClick(bar.editor, Qt.Key.Key_Up)
    assert bar.calls == ["composer.edit_last"]
    qtbot.keyClicks(bar.editor, "a")
    qtbot.keyClick(bar.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(bar.editor, "b")
    qtbot.keyClick(bar.editor, Qt.Key.Key_Up)  # falls through: the cursor moves up a line
    assert bar.editor.textCursor().blockNumber() == 0
    bar.set_busy(True)
    qtbot.keyClick(bar.editor, Qt.Key.Key_Escape)
    assert bar.calls[-1] == "run.stop"


def test_send_button_follows_text_and_busy_state(bar, qtbot):
    assert not bar.button.isEnabled() and bar.button.accessibleName() == "Send"
    qtbot.keyClicks(bar.editor, "x")
    assert bar.button.isEnabled()
    bar.set_busy(True)
    assert bar.button.accessibleName() == "Stop"
    with qtbot.waitSignal(bar.stop_clicked, timeout=1000):
        qtbot.mouseClick(bar.button, Qt.MouseButton.LeftButton)


def test_composer_grows_with_lines_up_to_a_limit(bar, qtbot):
    one = bar.editor.height()
    bar.editor.set_text("line\n" * 4)
    assert bar.editor.height() > one
    bar.editor.set_text("line\n" * 100)
    tall = bar.editor.height()
    bar.editor.set_text("line\n" * 200)
    assert bar.editor.height() == tall


# -- sidebar model ----------------------------------------------------------
@dataclass(frozen=True)
class _Space:
    id: str
    name: str


@dataclass(frozen=True)
class _Session:  # the fields of parley.core.store.models.Session the sidebar reads
    id: str
    space_id: str
    title: str | None
    pinned: bool
    updated_at: int


def _model() -> SessionTreeModel:
    m = SessionTreeModel()
    m.set_spaces([_Space("sp", "General"), _Space("w", "Work")])
    m.add_sessions("sp", [_Session("p", "sp", "Pinned", True, 1),
                          _Session("b", "sp", "B", False, 20),
                          _Session("a", "sp", None, False, 10)], has_more=True)
    m.add_sessions("w", [_Session("w1", "w", "W1", False, 5)], has_more=False)
    return m


def test_sidebar_keeps_pinned_first_then_newest():
    m = _model()
    assert m.session_ids() == ["p", "b", "a", "w1"]
    assert m.index_of("a").data() == "New chat"
    m.upsert(_Session("a", "sp", "A", False, 30))
    assert m.session_ids() == ["p", "a", "b", "w1"]
    m.upsert(_Session("c", "sp", "C", False, 25))
    assert m.session_ids() == ["p", "a", "c", "b", "w1"]
    m.remove("a")
    assert m.session_ids() == ["p", "c", "b", "w1"]
    assert m.loaded_count("sp") == 3


def test_sidebar_pages_replace_the_show_more_row():
    m = _model()
    space = m.item(0)
    assert space.child(space.rowCount() - 1).text() == "Show more"
    m.add_sessions("sp", [_Session("old", "sp", "Old", False, 0)], has_more=False)
    assert space.child(space.rowCount() - 1).text() == "Old"
    assert m.session_ids()[:4] == ["p", "b", "a", "old"]


# -- set-up panel -----------------------------------------------------------
MODELS = [ModelInfo("model-a", 200_000, 8_000, display_name="Model A"),
          ModelInfo("model-b", 100_000, 4_000)]


def test_setup_lists_models_then_completes(qtbot, until):
    seen = []

    async def tester(kind, base_url, key):
        seen.append((kind, base_url, key))
        return MODELS

    panel = SetupPanel(tester=tester)
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.start_button.isEnabled()
    qtbot.keyClicks(panel.key_edit, "sk-test")
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    until(lambda: panel.model_combo.count() == 2)
    assert "2 models" in panel.status.text()
    assert seen == [("anthropic", None, "sk-test")]
    panel.model_combo.setCurrentIndex(1)
    with qtbot.waitSignal(panel.completed, timeout=1000) as sig:
        qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    # the models the test listed go with the answers (kept as the provider's list)
    assert sig.args[0] == SetupAnswers("anthropic", None, "sk-test", "model-b", tuple(MODELS))
    qtbot.keyClicks(panel.key_edit, "2")  # another key than the one tested
    assert panel.answers() == SetupAnswers("anthropic", None, "sk-test2", "model-b")


def test_setup_shows_the_error_in_words(qtbot, until):
    async def tester(kind, base_url, key):
        raise AuthenticationFailed("OpenAI")

    panel = SetupPanel(tester=tester)
    qtbot.addWidget(panel)
    panel.show()
    panel.kind_buttons[1].click()
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    assert "Paste your OpenAI API key" in panel.status.text()  # no request without a key
    qtbot.keyClicks(panel.key_edit, "sk-bad")
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    until(lambda: "The key was refused" in panel.status.text())
    assert "conversation" not in panel.status.text()  # set-up words, not a chat's
    assert panel.status.property("state") == "error"
    assert not panel.start_button.isEnabled()


def test_setup_names_the_address_it_could_not_reach(qtbot, until):
    async def tester(kind, base_url, key):
        raise NetworkError("Local server", base_url)

    panel = SetupPanel(tester=tester)
    qtbot.addWidget(panel)
    panel.show()
    panel.kind_buttons[2].click()  # OpenAI-compatible server
    panel.url_edit.setText("http://127.0.0.1:9/v1")
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    until(lambda: "could not reach http://127.0.0.1:9/v1" in panel.status.text())
    assert "server is running" in panel.status.text()


def test_setup_compatible_server_needs_no_key_and_takes_a_typed_model(qtbot, until):
    async def tester(kind, base_url, key):
        return []

    panel = SetupPanel(tester=tester)
    qtbot.addWidget(panel)
    panel.show()
    panel.kind_buttons[2].click()
    assert panel.url_edit.isVisible() and panel.key_label.text() == "API key (optional)"
    qtbot.keyClicks(panel.url_edit, "http://127.0.0.1:8080/v1")
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    until(lambda: "type one" in panel.status.text())
    qtbot.keyClicks(panel.model_combo.lineEdit(), "llama3")
    assert panel.answers() == SetupAnswers("openai_compatible", "http://127.0.0.1:8080/v1",
                                           None, "llama3")


def test_setup_prefills_a_key_from_the_environment(qtbot):
    panel = SetupPanel(env={"OPENAI_API_KEY": "sk-from-env"})
    qtbot.addWidget(panel)
    panel.kind_buttons[1].click()
    assert panel.key_edit.text() == "sk-from-env"
    assert "OPENAI_API_KEY" in panel.key_hint.text()


# -- actions and the meter --------------------------------------------------
def test_actions_are_declared_once_with_unique_ids_and_shortcuts():
    ids = [a.id for a in actions.ACTIONS]
    assert len(ids) == len(set(ids))
    keys = [(a.context, k) for a in actions.ACTIONS for k in a.shortcuts]
    assert len(keys) == len(set(keys))
    assert actions.composer_keymap()["Return"].id == "composer.send"
    assert actions.by_id("session.new").shortcuts == ("Ctrl+N",)


def test_context_meter_text_and_tooltip(qtbot):
    meter = ContextMeter()
    qtbot.addWidget(meter)
    meter.set_usage(12_345, 200_000, cache_read=10_000)
    assert meter.label.text() == "12.3k / 200k"
    assert "6%" in meter.toolTip() and "10,000" in meter.toolTip()
    meter.set_usage(950, None)
    assert meter.label.text() == "950 tokens"
    assert [short_count(n) for n in (999, 1000, 150_000, 1_200_000)] == \
        ["999", "1k", "150k", "1.2M"]


def test_setup_keeps_what_was_typed_for_each_kind_apart(qtbot):
    """Trial 18: Anthropic's key and custom URL stayed in the fields when the compatible
    kind was chosen, so that key would have gone to the local server."""
    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.custom_url.setChecked(True)
    qtbot.keyClicks(panel.url_edit, "https://gateway.example/anthropic")
    qtbot.keyClicks(panel.key_edit, "sk-ant-typed-for-anthropic")
    panel.kind_buttons[2].setChecked(True)  # an OpenAI-compatible server
    assert panel.key_edit.text() == "" and panel.url_edit.text() == ""
    qtbot.keyClicks(panel.url_edit, "http://127.0.0.1:11434/v1")
    answers = panel.answers()
    assert (answers.kind, answers.base_url, answers.api_key) == (
        "openai_compatible", "http://127.0.0.1:11434/v1", None)
    panel.kind_buttons[0].setChecked(True)  # back: what was typed for Anthropic is there
    assert panel.custom_url.isChecked()
    assert panel.answers().api_key == "sk-ant-typed-for-anthropic"
    assert panel.answers().base_url == "https://gateway.example/anthropic"
    panel.kind_buttons[2].setChecked(True)
    assert panel.url_edit.text() == "http://127.0.0.1:11434/v1"
