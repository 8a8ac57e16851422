"""Small gestures and readers shared by the GUI tests: files dropped, settings picked, a search
typed, what the window shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image
from PySide6.QtCore import QMimeData, QPoint, QPointF, QRect, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QMessageBox,
    QWidget,
)

from parley.gui.sidebar.model import ID, KIND


def png(path: Path, size: tuple[int, int] = (40, 30), color: str = "#c15f3c") -> Path:
    Image.new("RGB", size, color).save(path, "PNG")
    return path


def drop(widget: QWidget, paths: list[Path]) -> bool:
    """Drag files over ``widget`` and drop them, as a file manager does; True if taken."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    target = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
    pos = target.rect().center()
    copy, left, none = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton, \
        Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(pos, copy, mime, left, none)
    QApplication.sendEvent(target, enter)
    dropped = QDropEvent(QPointF(pos), copy, mime, left, none)
    QApplication.sendEvent(target, dropped)
    return enter.isAccepted() and dropped.isAccepted()


def ready(w: Any) -> list[Any]:
    return [p for p in w.chat.attachments.pending() if p.ready]


def open_appearance(driver: Any, w: Any) -> Any:
    dialog = w.window_commands.open_settings()
    driver.until(lambda: dialog.ready and dialog.tasks.pending == 0)
    show_section(dialog, "Appearance")
    return dialog


def choose(driver: Any, dialog: Any, key_: str, label: str) -> None:
    combo = dialog.editors[key_].input
    assert isinstance(combo, QComboBox) and combo.isVisible()
    index = combo.findText(label)
    combo.setCurrentIndex(index)
    combo.activated.emit(index)  # as picked from its list
    driver.until(lambda: dialog.tasks.pending == 0)


def search_for(driver, w, qtbot, text):
    assert w.window_commands.open_search()
    popup = w.search_popup
    popup.edit.clear()
    qtbot.keyClicks(popup.edit, text)
    driver.until(lambda: popup.search.settled)
    return popup


def resume_point(w) -> QPoint:
    """Where the last reply's Resume link is now (viewport coordinates), without scrolling;
    asserts it is in view."""
    view, lv = w.transcript, w.transcript.list_view
    row = view.model.rowCount() - 1
    lv.settle()
    point = lv.layout_of(row, fresh=True).anchor_point("parley:resume")
    assert point is not None
    point += lv.visualRect(view.model.index(row)).topLeft()
    assert 0 <= point.y() < lv.viewport().height(), "the Resume link is not in view"
    return point


#: Emoji and the symbol blocks fonts without emoji lack (Misc Symbols, Dingbats).
EMOJI = [(0x1F000, 0x1FFFF), (0x2600, 0x27BF)]


def emoji_in(text: str) -> list[str]:
    return [c for c in text if any(lo <= ord(c) <= hi for lo, hi in EMOJI)]


def problem_boxes(w: Any) -> list[QMessageBox]:
    return [b for b in w.findChildren(QMessageBox) if b.isVisible()]


def hover(driver: Any, w: Any, row: int) -> tuple[QWidget, QRect]:
    """Point at ``row``; returns the buttons and the row's rectangle (viewport)."""
    lv = w.transcript.list_view
    index = lv.model().index(row, 0)
    lv.scrollTo(index)  # in view first: the row may be below a tall unfolded output
    driver.until(lambda: lv.viewport().rect().contains(lv.visualRect(index).center()))
    rect = lv.visualRect(index)
    bar = lv.viewport().findChild(QWidget, "MessageActions")
    nudge = [QPoint(3, 1), QPoint(0, 0)]

    def pointed() -> bool:
        # The pointer keeps moving over the row while waiting, as a hand on a mouse does:
        # a focus change that arrives late (the window made active) gives the keyboard's
        # row the buttons until the pointer moves again.
        nudge.reverse()
        QTest.mouseMove(lv.viewport(), rect.center() + nudge[0])
        return bar is not None and bar.isVisible() and bar.row == row

    driver.until(pointed)
    return bar, rect


def selected_session_id(sidebar: Any) -> str | None:
    """The id of the session row selected in the sidebar's tree, if a session row is."""
    index = sidebar.tree.currentIndex()
    return index.data(ID) if index.isValid() and index.data(KIND) == "session" else None


def forks_of(model: Any, session_id: str) -> list[str]:
    """Ids of the fork rows nested directly under a session's row, in display order."""
    parent = model.index_of(session_id)
    if not parent.isValid():
        return []
    return [model.index(r, 0, parent).data(ID) for r in range(model.rowCount(parent))]


def show_section(dialog: Any, section: str) -> None:
    """Pick ``section`` (one of ``parley.core.settings.SECTIONS``) in Settings' list of
    sections, as a click on it does: its page shows."""
    items = dialog.nav.findItems(section, Qt.MatchFlag.MatchExactly)
    assert items, f"no {section!r} in the Settings sections"
    dialog.nav.setCurrentItem(items[0])


def progress_text(editor: Any) -> str:
    """What the status bar says about a compaction ('' when none runs)."""
    return str(editor.progress_label.text()) if editor.compacting else ""


def shortcut_rows(help_: Any) -> dict[str, str]:
    """``{action id: keys as shown}`` of the rows the shortcut help shows (its filter
    hides the others)."""
    tree = help_.tree
    rows: dict[str, str] = {}
    for g in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(g)
        for i in range(group.childCount()):
            item = group.child(i)
            if not item.isHidden():
                rows[item.data(0, Qt.ItemDataRole.UserRole)] = item.text(1)
    return rows


def type_and_enter(driver: Any, w: Any, text: str) -> None:
    """Type ``text`` into the message box and press Enter: keys only, no event loop turn
    in between (as xdotool's reach the window)."""
    driver.qtbot.keyClicks(w.composer, text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


@dataclass
class SpaceRow:
    """A space as the sidebar reads it (the fields it uses)."""

    id: str
    name: str


@dataclass
class SessionRow:
    """A chat as the sidebar reads it (the fields it uses)."""

    id: str
    space_id: str
    title: str
    updated_at: int
    parent_session_id: str | None = None
    pinned: bool = False
    archived: bool = False
    parent_exists: bool = True
    forked_from_turn_id: str | None = None
