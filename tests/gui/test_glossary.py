"""One name for one thing, on every surface (issue 35, item 3).

The glossary (``parley.gui.text.words.GLOSSARY``) lists the words the window does not use
for its actions and objects. These tests walk every surface of a real window — the menu
bar and its tips, the command palette, the shortcut help, Settings (every section), the
sidebar's menus, the buttons over a message and their tooltips, every widget's tooltip,
and the transcript's marks — and fail on such a word, and check that a command is called
by its label wherever it is named. Then the fixes the walk asked for: the main key is
"Enter" in the menus, the help and the line under the message box alike; Ctrl+W
"Archive chat" and "Unarchive chat" instead of two overlapping archive commands; a
reply cut off by Parley's end and taken up by Continue still says "cut off"; the line
standing for Continue's message says what happened.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QWidget,
)

from parley.core.content import TextBlock, Turn
from parley.gui.commands.actions import ACTIONS, by_id
from parley.gui.commands.shortcut_help import open_shortcut_help
from parley.gui.sidebar.menus import session_menu, space_menu
from parley.gui.text.words import GLOSSARY, composer_hint
from parley.gui.transcript.specs import (
    COMPACT_AGAIN,
    CONTINUED_LINE,
    CONTINUED_MARK,
    CUT_OFF_CONTINUED_MARK,
    CUT_OFF_MARK,
    RESUME_HREF,
    STOPPED_MARK,
)
from tests.gui.answers import click_anchor, until_answered
from tests.gui.helpers import shortcut_rows
from tests.gui.keys_table import markdown_table
from tests.gui.transcript_reading import text_of_last

README = Path(__file__).resolve().parents[2] / "README.md"
LABELS = {a.label for a in ACTIONS}

_COMPILED = tuple((w, tuple(re.compile(p, re.IGNORECASE) for p in w.not_)) for w in GLOSSARY)


def off_glossary(text: str) -> list[tuple[str, str]]:
    """The words of ``text`` the glossary says are not used: ``[(found, use instead)]``."""
    found: list[tuple[str, str]] = []
    for word, patterns in _COMPILED:
        for pattern in patterns:
            found += [(m.group(0), word.use) for m in pattern.finditer(text)]
    return found



def widget_texts(root: QWidget) -> list[str]:
    """Every text ``root`` and its children show: labels, buttons, group titles, combo
    entries, placeholders, tooltips, accessible names, status tips, actions."""
    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        out += [w.toolTip(), w.accessibleName(), w.statusTip(), w.whatsThis()]
        if isinstance(w, QAbstractButton | QLabel):
            out.append(w.text())
        if isinstance(w, QGroupBox):
            out.append(w.title())
        if isinstance(w, QLineEdit):
            out.append(w.placeholderText())
        if isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
    for a in root.findChildren(QAction):
        out += [a.text(), a.statusTip(), a.toolTip()]
    return [t for t in out if t]


def menu_texts(menu: QMenu) -> list[str]:
    out: list[str] = []
    for a in menu.actions():
        out += [a.text(), a.statusTip(), a.toolTip()]
        if a.menu() is not None:
            out += menu_texts(a.menu())
    return [t for t in out if t]


def readme_for_people() -> str:
    """The README up to its measurements and development notes, code left out (file
    names like sessions.db and commands are not words the window shows)."""
    text = README.read_text(encoding="utf-8")
    text = text[:text.index("\n## Performance")]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def off(texts: list[str]) -> list[tuple[str, str, str]]:
    return [(t, found, use) for t in texts for found, use in off_glossary(t)]


def test_the_glossary_catches_the_words_it_lists() -> None:
    """The checker itself: each old word is caught, the words used are not."""
    caught = ["Fork here", "Regenerate reply", "Archive and close chat",
              "Archive or unarchive chat", "Continue the reply", "Resume",
              "Import a conversation…", "Send message\tReturn", "Shift+Return",
              "anthropic:claude-sonnet-4-6", "Preferences", "Stopped the session"]
    for text in caught:
        assert off_glossary(text), text
    fine = ["Fork from here", "Regenerate", "Archive chat", "Unarchive chat", "Continue reply",
            "Import conversation…", "Send message\tEnter", "Your chats are in sessions.db",
            "Claude Sonnet 4.6", "Settings…", "(provider:model, or a model id)"]
    assert off("\n".join(fine).split("\n")) == []
    assert all(w.use and w.not_ and w.means for w in GLOSSARY)


def test_every_surface_of_the_window_uses_the_glossarys_words(
    driver: Any, fake_provider: Any, qtbot: Any
) -> None:
    w = driver.configured()
    fake_provider.script("An answer.")
    driver.send("Hello", wait=True)
    texts = widget_texts(w)  # menu bar, tips, header, composer, sidebar buttons

    # The buttons over a message, with their tooltips (the pointer on the reply).
    lv = w.transcript.list_view
    rect = lv.visualRect(lv.model().index(w.transcript.model.row_of(w.chat.turns[-1].id), 0))
    QTest.mouseMove(lv.viewport(), rect.center() + QPoint(3, 1))  # a move, wherever it was
    QTest.mouseMove(lv.viewport(), rect.center())
    bar = lv.viewport().findChild(QWidget, "MessageActions")
    driver.until(lambda: bar is not None and bar.isVisible())
    texts += widget_texts(bar)
    shown_tips = [b.toolTip() for b in bar.findChildren(QAbstractButton) if b.isVisible()]
    assert shown_tips and all(t.split(" (")[0] in LABELS | {COMPACT_AGAIN} for t in shown_tips)

    # The command palette, every command listed.
    qtbot.keyClick(w.composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = w.command_palette
    entries = [e for e in palette.entries() if e.kind == "action"]
    assert entries and all(e.label == by_id(e.ref).label for e in entries)
    texts += [f"{e.label}\t{e.detail}" for e in entries]
    qtbot.keyClick(palette, Qt.Key.Key_Escape)

    # The shortcut help.
    help_ = open_shortcut_help(w, w)
    tree = help_.tree
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        texts.append(group.text(0))
        for i in range(group.childCount()):
            item = group.child(i)
            assert item.text(0) == by_id(item.data(0, Qt.ItemDataRole.UserRole)).label
            texts += [item.text(0), item.text(1), item.toolTip(0)]
    help_.close()

    # The sidebar's menus: a chat's, a space's, and the "⋯" menu.
    side = w.sidebar
    model = side.model
    chat_menu = session_menu(side, model.index_of(w.chat.session_id))
    space = model.space_index(model.space_ids()[0])
    texts += menu_texts(chat_menu) + menu_texts(space_menu(side, space))
    for button in side.findChildren(QAbstractButton):
        if button.menu() is not None:
            texts += menu_texts(button.menu())
            imports = [a.text() for a in button.menu().actions() if "Import" in a.text()]
            assert imports in ([], [by_id("session.import").label])

    # Settings, every section.
    dialog = w.window_commands.open_settings()
    driver.until(lambda: dialog.ready and dialog.tasks.pending == 0)
    for row in range(dialog.nav.count()):
        dialog.nav.setCurrentRow(row)
        texts += widget_texts(dialog)
    dialog.close()

    # The menu bar's entries say their command's label.
    for action in ACTIONS:
        qa = w.qactions[action.id]
        assert qa.text().split("\t")[0] == action.label

    texts += [text_of_last(w.transcript), markdown_table(w.keymap), readme_for_people()]
    assert off(texts) == []


def test_the_main_key_is_enter_in_the_menus_the_help_and_under_the_message_box(
    driver: Any, qtbot: Any
) -> None:
    w = driver.configured()
    assert w.qactions["composer.send"].text() == "Send message\tEnter"
    assert w.qactions["composer.newline"].text().startswith("New line")
    help_ = open_shortcut_help(w, w)
    rows = shortcut_rows(help_)
    help_.close()
    assert rows["composer.send"] == "Enter"  # Return and the keypad's Enter, shown once
    assert rows["composer.newline"] == "Shift+Enter"
    assert w.composer_bar.hint.text() == composer_hint("Enter", "Shift+Enter", "Esc")
    assert "| Send message | `Enter` |" in markdown_table(w.keymap)

    # The line under the message box follows the keys in force.
    from parley.gui.commands.install import apply_keymap

    qtbot.keyClicks(w.composer, "draft")  # the send button is on, its tooltip its key
    assert w.composer_bar.button.toolTip() == "Send (Enter)"
    assert w.sidebar.new_button.toolTip() == "New chat (Ctrl+N)"
    keymap = w.keymap.bind("composer.send", ["Ctrl+Return"]).bind("session.new", ["Ctrl+J"])
    apply_keymap(w, keymap.bind("composer.attach", []))
    assert w.composer_bar.hint.text().startswith("Ctrl+Enter to send  ·  Shift+Enter")
    assert w.qactions["composer.send"].text() == "Send message\tCtrl+Enter"
    assert w.composer_bar.button.toolTip() == "Send (Ctrl+Enter)"
    assert w.sidebar.new_button.toolTip() == "New chat (Ctrl+J)"
    assert w.composer_bar.attach_button.toolTip() == "Attach images, PDFs or text files"


def test_ctrl_w_archives_and_unarchive_is_offered_only_for_an_archived_chat(
    driver: Any, fake_provider: Any, qtbot: Any
) -> None:
    w = driver.configured()
    fake_provider.script("An answer.")
    driver.send("Keep me", wait=True)
    sid = w.chat.session_id
    assert by_id("session.close").label == "Archive chat"
    assert by_id("session.archive").label == "Unarchive chat"
    assert not w.commands.available("session.archive")  # the open chat is not archived
    qtbot.keyClick(w.composer, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: driver.run(w.store.get_session(sid)).archived)
    assert w.qactions["session.archive"].text() == "Unarchive chat"

    w.sidebar.set_show_archived(True)
    driver.until(lambda: sid in w.sidebar.model.session_ids())
    refresh = next(m for m in w.menuBar().findChildren(QMenu) if m.title() == "&Chat")
    refresh.aboutToShow.emit()
    assert not w.qactions["session.archive"].isEnabled()  # another chat is open
    w.chat.open_session(sid)
    driver.until(lambda: w.chat.session_id == sid)
    chat_menu = next(m for m in w.menuBar().findChildren(QMenu) if m.title() == "&Chat")
    chat_menu.aboutToShow.emit()  # as opening the Chat menu does
    assert w.qactions["session.archive"].isEnabled()
    w.qactions["session.archive"].trigger()
    driver.until(lambda: not driver.run(w.store.get_session(sid)).archived)
    assert not w.commands.available("session.archive")


def test_a_reply_cut_off_by_parleys_end_and_continued_still_says_cut_off(driver: Any) -> None:
    """After a crash, Continue on the cut-off reply: the part above says it was cut off
    and continued, not that the person stopped it; the line for Continue's message says
    what it is."""
    w = driver.configured()
    s = driver.run(w.store.create_session(title="Cut", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Long story please")])))
    cut = driver.run(w.store.append_turn(s.id, Turn(
        "assistant", [TextBlock("Once upon a time, in a far")], aborted=True, cut_off=True)))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    assert CUT_OFF_MARK in text_of_last(w.transcript)

    driver.fake.script("away land, a story went on.")
    click_anchor(driver, w, cut.id, RESUME_HREF)
    until_answered(driver, w, "away land, a story went on.")
    view = w.transcript
    ids = view.turn_ids()
    under = view.list_view.layout_of(ids.index(cut.id), fresh=True).plain_text()
    assert CUT_OFF_CONTINUED_MARK in under
    assert CONTINUED_MARK not in under and STOPPED_MARK not in under
    line = view.list_view.layout_of(ids.index(cut.id) + 1, fresh=True).plain_text()
    assert CONTINUED_LINE in line and "Parley asked the model to go on" in line
    assert not off([under, line])


def test_the_errors_a_person_reads_call_a_chat_a_chat() -> None:
    """Errors from the core are shown as they are: they use the window's words too."""
    from parley.core.attachments import limits
    from parley.core.providers.errors import ContextOverflow, ServerError

    texts = [str(ContextOverflow("Anthropic", 250_000, 200_000)),
             str(limits.MediaRefused("local:llama3", "image", ServerError("Local"))),
             limits._SEND_ADVICE]  # noqa: SLF001 - the advice every file refusal ends with
    assert all("new chat" in t for t in texts)
    assert [f for t in texts for f, _use in off_glossary(t) if "session" in f.lower()] == []
