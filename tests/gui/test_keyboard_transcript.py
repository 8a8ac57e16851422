"""Message keys on a focused message of the transcript: move (arrows, j/k), copy (c),
edit (e), fork (f), retry/resume (r), expand/collapse (Space), from the keymap in force."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QVBoxLayout, QWidget

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.gui.commands.keymap import Keymap
from parley.gui.text.long_text import PART_SLACK, SHOWN_CHARS, ZWSP, next_part
from parley.gui.transcript import TranscriptView
from parley.gui.transcript.specs import TEXT_EARLIER_HREF, TEXT_MORE_HREF
from tests.gui.transcript_reading import show_turns

K = Qt.Key


def user(text: str, tid: str) -> Turn:
    return Turn("user", [TextBlock(text)], id=tid)


def assistant(text: str, tid: str, **kw) -> Turn:
    return Turn("assistant", [TextBlock(text)], id=tid, model="anthropic:claude-x", **kw)


class Host(QWidget):
    """Stands in for the main window: the transcript reads ``window().keymap``."""

    def __init__(self) -> None:
        super().__init__()
        self.keymap = Keymap()
        self.view = TranscriptView(self)
        QVBoxLayout(self).addWidget(self.view)


@pytest.fixture
def host(qtbot):
    h = Host()
    qtbot.addWidget(h)
    h.resize(760, 560)
    h.show()
    qtbot.waitExposed(h)
    return h


@pytest.fixture
def view(host, qtbot):
    v = host.view
    show_turns(v, [user("please **fix**", "u1"), assistant("Sure: **done**", "a1"),
                 user("and the tests?", "u2"), assistant("All green.", "a2")])
    v.list_view.setFocus()
    qtbot.waitUntil(v.list_view.hasFocus, timeout=1000)
    return v


def keys(qtbot, view, *names) -> None:
    for name in names:
        combo = QKeySequence(name)[0]
        qtbot.keyClick(view.list_view, combo.key(), combo.keyboardModifiers())


def test_arrows_and_j_k_move_between_messages(view, qtbot):
    assert view.focused_turn_id() == "a2"  # focus starts on the newest message
    keys(qtbot, view, "K")
    assert view.focused_turn_id() == "u2"
    keys(qtbot, view, "Up")
    assert view.focused_turn_id() == "a1"
    keys(qtbot, view, "J")
    assert view.focused_turn_id() == "u2"
    keys(qtbot, view, "Home")
    assert view.focused_turn_id() == "u1"
    keys(qtbot, view, "K")  # stays on the first
    assert view.focused_turn_id() == "u1"
    keys(qtbot, view, "End")
    assert view.focused_turn_id() == "a2"


def test_c_copies_e_edits_f_forks(view, qtbot):
    edits, forks = [], []
    view.editRequested.connect(edits.append)
    view.forkRequested.connect(forks.append)
    keys(qtbot, view, "K")  # u2
    keys(qtbot, view, "C")
    assert QGuiApplication.clipboard().text() == "and the tests?"
    keys(qtbot, view, "E", "F")
    assert edits == ["u2"] and forks == ["u2"]
    keys(qtbot, view, "K")  # a1: an answer cannot be edited
    keys(qtbot, view, "E")
    assert edits == ["u2"]
    keys(qtbot, view, "C")
    assert QGuiApplication.clipboard().text() == "Sure: done"
    keys(qtbot, view, "Shift+C")
    assert QGuiApplication.clipboard().text() == "Sure: **done**"
    QGuiApplication.clipboard().setText("")
    keys(qtbot, view, "Ctrl+C")
    assert QGuiApplication.clipboard().text() == "Sure: done"


def test_r_resumes_an_aborted_reply_or_retries_after_an_error(host, qtbot):
    view = host.view
    show_turns(view, [user("story please", "u1"), assistant("Once upon", "a1", aborted=True)])
    resumed, retried = [], []
    view.resumeRequested.connect(resumed.append)
    view.retryRequested.connect(lambda: retried.append(True))
    view.list_view.setFocus()
    keys(qtbot, view, "R")
    assert resumed == ["a1"] and not retried
    keys(qtbot, view, "K", "R")  # not the last message: nothing to retry there
    assert resumed == ["a1"] and not retried

    show_turns(view, [user("are you there?", "u1")])
    view.show_error("The provider rejected the API key.")
    keys(qtbot, view, "R")
    assert retried == [True]
    show_turns(view, [user("hello", "u1"), assistant("hi", "a1")])
    keys(qtbot, view, "R")  # a finished answer: r does nothing
    assert retried == [True] and resumed == ["a1"]


def test_space_expands_and_collapses_a_summary_card(host, qtbot):
    view = host.view
    show_turns(view, [
        user("old question", "o1"), assistant("old answer", "o2"),
        Turn("user", [CompactSummaryBlock("They talked.", 2, "o1", "o2")], id="s1"),
        user("new question", "n1"),
    ])
    view.list_view.setFocus()
    keys(qtbot, view, "Home")
    assert view.focused_turn_id() == "s1"
    keys(qtbot, view, "Space")
    assert [n.key for n in view.model.rows] == ["s1", "o1", "o2", "n1"]
    keys(qtbot, view, "J")
    assert view.focused_turn_id() == "o1"  # the replaced turns can be walked too
    keys(qtbot, view, "K", "Space")
    assert [n.key for n in view.model.rows] == ["s1", "n1"]


def test_message_keys_follow_the_windows_keymap(host, view, qtbot):
    forks = []
    view.forkRequested.connect(forks.append)
    host.keymap = Keymap().bind("message.fork", ["B"])
    keys(qtbot, view, "F")
    assert forks == []
    keys(qtbot, view, "B")
    assert forks == ["a2"]


def test_the_context_menu_shows_each_entrys_key(view):
    lv = view.list_view
    index = view.model.index(2)  # u2
    rect = lv.visualRect(index)
    lv.menuRequested.emit(index, lv.viewport().mapToGlobal(rect.center()), None)
    view._menu.hide()
    shown = {a.text(): a.shortcut().toString() for a in view._menu.actions() if a.text()}
    assert shown["Copy message"] == "C" and shown["Edit message"] == "E"
    assert shown["Fork from here"] == "F" and shown["Copy as Markdown"] == "Shift+C"


def test_focus_arriving_by_keyboard_shows_the_focused_message(host, qtbot):
    view = host.view
    show_turns(view, [user("hi", "u1"), assistant("hello", "a1")])
    delegate = view.list_view.delegate
    delegate.show_focus = False  # e.g. after a click
    view.list_view.clearFocus()
    view.list_view.setFocus(Qt.FocusReason.ShortcutFocusReason)
    assert delegate.show_focus


def _shown(view, row: int) -> str:
    return "".join(p.piece.doc.toPlainText()
                   for p in view.list_view.layout_of(row, fresh=True).pieces).replace(ZWSP, "")


def _paragraphs(n: int) -> str:
    """A ~1 MB pasted text: numbered lines, each word once (``line 12345 …``)."""
    return "".join(f"line {i:06d} of the pasted text, some words to wrap on\n" for i in range(n))


@pytest.mark.parametrize("key", ["Return", "Enter", "Space"])
def test_enter_or_space_on_a_folded_message_shows_more_and_keeps_the_focus(host, qtbot, key):
    """Fresh-user trial: with the focus on a huge message folded at its first part,
    Enter / Space did nothing (its note had no "Show more"): it shows the next part, as
    its link does, and the focus stays on that message."""
    view = host.view
    text = _paragraphs(18_000)  # ~1 MB
    show_turns(view, [user("short one", "u0"), user(text, "u1"), assistant("Got it.", "a1")])
    view.list_view.setFocus()
    keys(qtbot, view, "K")
    assert view.focused_turn_id() == "u1"
    first = _shown(view, 1)
    assert "line 000000" in first and "Show more" in first and "Show earlier" not in first
    keys(qtbot, view, key)
    second = _shown(view, 1)
    start = next_part(text, 0)
    assert SHOWN_CHARS - PART_SLACK < start <= SHOWN_CHARS and text[start - 1] == "\n"
    assert "line 000000" not in second and text[start:start + 500] in second
    assert f"{start:,} earlier characters not shown here. · Show earlier" \
        + text[start:start + 100] in second  # the part begins with a whole line
    assert "Show earlier" in second and "Show more" in second
    assert view.focused_turn_id() == "u1" and view.list_view.hasFocus()
    top = view.list_view.visualRect(view.model.index(1)).top()
    assert top == 0  # the new part is shown from its start

    point = view.anchor_point("u1", TEXT_EARLIER_HREF)
    assert point is not None
    qtbot.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert "line 000000" in _shown(view, 1)
    point = view.anchor_point("u1", TEXT_MORE_HREF)
    qtbot.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert text[SHOWN_CHARS:SHOWN_CHARS + 500] in _shown(view, 1)

    view.list_view.setFocus()
    for _ in range(len(text) // SHOWN_CHARS + 2):  # to the last part; then no more
        keys(qtbot, view, "Return")
    last = _shown(view, 1)
    assert last.rstrip().endswith(text.rstrip()[-200:]) and "Show more" not in last
    keys(qtbot, view, "J", "Return")  # a short message: Enter does nothing
    assert view.focused_turn_id() == "a1"


def test_enter_on_an_open_summary_card_reads_its_older_entries(host, qtbot):
    """The card's own "Show more" (older entries not read yet) answers Enter too."""
    view = host.view
    show_turns(view, [
        Turn("user", [CompactSummaryBlock("They talked.", 2, "o1", "o2")], id="s1"),
        user("new question", "n1"),
    ], spans={"s1": None})
    wanted: list[str] = []
    view.compactedTurnsWanted.connect(wanted.append)
    node = view.model.rows[0]
    node.expanded, node.missing = True, 5
    view.list_view.setFocus()
    keys(qtbot, view, "Home")
    assert view.focused_turn_id() == "s1"
    keys(qtbot, view, "Return")
    assert wanted == ["s1"]
