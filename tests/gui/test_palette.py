"""The command palette and the shortcut help: matching, keys, focus, what is listed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QMainWindow, QVBoxLayout, QWidget

from parley.core.store.models import SearchHit
from parley.gui.commands.actions import ACTIONS
from parley.gui.commands.keymap import Keymap
from parley.gui.commands.message_search import Found
from parley.gui.commands.palette import open_palette
from parley.gui.commands.palette_entries import (
    Entry,
    action_entries,
    fuzzy_match,
    hit_entries,
    segments,
)
from parley.gui.commands.registry import Commands
from parley.gui.commands.shortcut_help import open_shortcut_help
from tests.gui.helpers import shortcut_rows
from tests.gui.keys_table import markdown_table

pytestmark = pytest.mark.timeout(60)


# -- matching ---------------------------------------------------------------------------
def score(query: str, text: str) -> float:
    m = fuzzy_match(query, text)
    assert m is not None, f"{query!r} should match {text!r}"
    return m.score


def test_fuzzy_ranks_exact_prefix_word_start_then_scattered():
    ranked = ["Chat", "Chat history", "New chat", "Webchat", "Change that"]
    scores = [score("chat", text) for text in ranked]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    assert score("ren", "Rename chat…") > score("ren", "Current chat")  # prefix beats inside
    assert score("fh", "Fork here") > score("fh", "Follow the path")  # word starts
    assert fuzzy_match("xyz", "New chat") is None
    assert fuzzy_match("chat new", "New chat") is not None  # words in any order
    assert fuzzy_match("", "anything").score == 0
    assert fuzzy_match("rc", "Rename chat…").marks == (0, 7)


def test_snippet_matches_and_fuzzy_marks_become_bold_runs():
    hit = Entry("message", "…the \x02old town\x03 of \x02Zanzibar\x03", "", "t1")
    assert segments(hit) == [("…the ", False), ("old town", True), (" of ", False),
                             ("Zanzibar", True)]
    action = Entry("action", "New chat", "Ctrl+N", "session.new", marks=(0, 4))
    assert segments(action) == [("N", True), ("ew ", False), ("c", True), ("hat", False)]


def test_title_hits_become_chats_and_turn_hits_messages():
    hits = [SearchHit("s1", None, "Trip", "Trip", 0.0, 0),
            SearchHit("s2", None, "Known", "K", 0.0, 0),
            SearchHit("s1", "t9", None, "x", 0.0, 0),
            SearchHit("s1", "t8", "Trip", "y", 0.0, 0, fork_copies=2, off_path=True)]
    rows = hit_entries([Found(h) for h in hits], {"s2"})
    assert [(e.kind, e.ref, e.detail) for e in rows] == [
        ("session", "s1", "Chat"), ("message", "t9", "in “New chat”"),
        ("message", "t8", "in “Trip” · another branch · also in 2 forks")]


def test_a_command_matches_its_other_words_by_their_starts_only():
    """"durian" listed "Import conversation…": its letters are scattered over the
    command's other words (claude, webui, history, conversations.json, markdown)."""
    every = SimpleNamespace(commands=SimpleNamespace(available=lambda _id: True))

    def labels(query):
        return [e.label for e in action_entries(every, query, Keymap())]

    assert labels("durian") == [] and labels("mango kiwi") == []
    assert "Import conversation…" in labels("webui")  # a whole other word
    assert "Import conversation…" in labels("chatg")  # the start of one
    assert "Settings…" in labels("pref")


# -- the palette on a small window ---------------------------------------------------------
class Window(QMainWindow):
    """A window handling a few of the commands: the palette lists what it can run."""

    def __init__(self) -> None:
        super().__init__()
        self.keymap = Keymap()
        self.calls: list[str] = []
        self.transcript = None
        body = QWidget(self)
        self.composer = QLineEdit(body)
        self.composer.setAccessibleName("Message")
        QVBoxLayout(body).addWidget(self.composer)
        self.setCentralWidget(body)
        self.commands = Commands()
        self.commands.handle("session.new", self.new_session)
        self.commands.handle("session.rename", self.rename_session)
        self.commands.handle("help.shortcuts", lambda: open_shortcut_help(self, self))
        self.commands.handle("focus.next_pane", self.composer.setFocus)

    def new_session(self) -> None:
        self.calls.append("new")

    def rename_session(self) -> None:
        self.calls.append("rename")


@pytest.fixture
def window(qtbot):
    w = Window()
    qtbot.addWidget(w)
    w.resize(900, 640)
    w.show()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=2000)
    w.composer.setFocus()
    qtbot.waitUntil(w.composer.hasFocus, timeout=1000)
    return w


def test_palette_lists_what_the_window_can_run_with_keys(window, qtbot):
    palette = open_palette(window, window)
    rows = {e.ref: e.detail for e in palette.entries()}
    assert rows["session.new"] == "Ctrl+N" and rows["session.rename"] == "F2"
    assert "session.pin" not in rows  # no handler in this window: not offered
    assert "composer.newline" not in rows  # keys that only make sense in place
    assert "help.shortcuts" in rows and "focus.next_pane" in rows
    assert QApplication.focusWidget() is palette.input
    assert palette.input.accessibleName() and palette.list.accessibleName()


def test_typing_filters_arrows_choose_enter_runs_and_focus_comes_back(window, qtbot):
    palette = open_palette(window, window)
    qtbot.keyClicks(palette.input, "rename")
    assert palette.current_entry().ref == "session.rename"
    qtbot.keyClicks(palette.input, "zzzz")
    assert palette.entries() == []
    palette.input.clear()
    qtbot.keyClicks(palette.input, "chat")
    first = palette.current_entry()
    qtbot.keyClick(palette.input, Qt.Key.Key_Down)
    second = palette.current_entry()
    assert second != first
    assert second.label in palette.input.accessibleDescription()  # said to screen readers
    qtbot.keyClick(palette.input, Qt.Key.Key_Up)
    assert palette.current_entry() == first
    palette.input.clear()
    qtbot.keyClicks(palette.input, "new chat")
    qtbot.keyClick(palette.input, Qt.Key.Key_Return)
    assert window.calls == ["new"] and not palette.isVisible()
    assert QApplication.focusWidget() is window.composer


def test_escape_and_leaving_the_palette_close_it(window, qtbot):
    palette = open_palette(window, window, "ren")
    assert palette.input.text() == "ren" and palette.input.selectedText() == "ren"
    qtbot.keyClick(palette.input, Qt.Key.Key_Escape)
    assert not palette.isVisible() and QApplication.focusWidget() is window.composer
    assert window.calls == []
    open_palette(window, window)
    window.composer.setFocus()  # e.g. a click elsewhere
    qtbot.waitUntil(lambda: not palette.isVisible(), timeout=1000)


def test_palette_follows_the_window_size(window, qtbot):
    palette = open_palette(window, window)
    assert palette.geometry().center().x() == pytest.approx(window.width() / 2, abs=2)
    window.resize(500, 400)
    qtbot.waitUntil(lambda: palette.width() <= 460, timeout=1000)
    assert palette.geometry().bottom() < window.height()


# -- the shortcut help ----------------------------------------------------------------
def test_shortcut_help_lists_every_action_with_its_keys(window, qtbot):
    help_ = open_shortcut_help(window, window)
    qtbot.addWidget(help_)
    rows = shortcut_rows(help_)
    assert set(rows) == {a.id for a in ACTIONS}
    assert rows["session.new"] == "Ctrl+N" and rows["message.next"] == "Down, J"
    assert rows["session.export"] == "—"  # none by default
    qtbot.keyClicks(help_.filter, "fork")
    assert set(shortcut_rows(help_)) == {"session.fork", "message.fork"}
    help_.filter.clear()
    qtbot.keyClicks(help_.filter, "ctrl+k")
    assert "palette.open" in shortcut_rows(help_)
    window.keymap = window.keymap.bind("session.new", ["Ctrl+J"])
    help_ = open_shortcut_help(window, window)  # shown again: the keys in force
    assert shortcut_rows(help_)["session.new"] == "Ctrl+J"
    disabled = {help_.tree.topLevelItem(0).child(i).data(0, Qt.ItemDataRole.UserRole)
                for i in range(help_.tree.topLevelItem(0).childCount())
                if help_.tree.topLevelItem(0).child(i).isDisabled()}
    assert "session.pin" in disabled and "session.new" not in disabled
    table = markdown_table(window.keymap)  # the README's list, from the same keys
    assert "| New chat | `Ctrl+J` |" in table and "| Fork from here | `F` |" in table


# -- in the real window -----------------------------------------------------------------
def test_palette_offers_recent_chats_first_and_opens_them(driver, fake_provider, qtbot):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    for text in ("first chat", "second chat"):
        w.window_commands.new_session()
        driver.until(lambda: w.session_id is None)
        driver.send(text, wait=True)
    first, second = w.sidebar.model.session_ids()[::-1]
    w.composer.setFocus()
    qtbot.keyClick(w.composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = w.command_palette
    kinds = [e.kind for e in palette.entries()]
    assert kinds[:2] == ["session", "session"] and set(kinds[2:]) == {"action"}
    assert palette.entries()[0].ref == second
    qtbot.keyClick(palette.input, Qt.Key.Key_Down)
    qtbot.keyClick(palette.input, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id == first)


def test_every_control_of_the_palette_help_and_keyboard_page_has_a_name(window, qtbot):
    from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QKeySequenceEdit

    from parley.gui.settings.keyboard import KeymapEditor

    editor = KeymapEditor(lambda _keymap: None)
    qtbot.addWidget(editor)
    editor.show()
    help_ = open_shortcut_help(window, window)
    qtbot.addWidget(help_)
    palette = open_palette(window, window)
    kinds = (QAbstractButton, QLineEdit, QAbstractItemView, QKeySequenceEdit)
    for root in (palette, help_, editor):
        for child in root.findChildren(QWidget):
            if isinstance(child, kinds) and child.isVisibleTo(root) and \
                    not isinstance(child.parent(), QAbstractItemView):
                assert child.accessibleName(), f"{type(child).__name__} in {type(root).__name__}"


def test_palette_says_why_nothing_is_listed(driver, fake_provider, qtbot):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    driver.send("a message about teapots", wait=True)
    w.composer.setFocus()
    qtbot.keyClick(w.composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = w.command_palette
    assert not palette.note.isVisible()

    qtbot.keyClicks(palette.input, "zqxjv")  # matches nothing at all
    driver.until(lambda: palette.note.isVisible())
    assert palette.entries() == [] and not palette.list.isVisible()
    assert "No commands, chats or messages match “zqxjv”" in palette.note.text()

    palette.input.setText("?!…")  # no word the search can read: it says so
    driver.until(lambda: palette.note.isVisible() and "match" not in palette.note.text())
    assert palette.note.text()  # the search's own explanation

    palette.input.setText("teapots")  # a hit: the list is back, the note gone
    driver.until(lambda: any(e.kind == "message" for e in palette.entries()))
    assert palette.list.isVisible() and not palette.note.isVisible()


def test_a_search_typed_just_before_the_window_hides_is_not_started(window, qtbot):
    """The message search waits for typing to pause; a window closing meanwhile drops
    it (it ran after the window's event loop had gone: a RuntimeError in another test)."""
    window.store = object()  # a window with chats: typing starts the message search soon
    palette = open_palette(window, window)
    qtbot.keyClicks(palette.input, "something")
    assert palette.search.waiting
    window.hide()
    assert not palette.search.waiting
