"""At start, sessions.db is missing but backups or rescue copies of it are there: say so.

Parley makes a new, empty sessions.db when there is none — right on a first start,
wrong when the file was deleted or moved away: the window would open empty, as if
every chat were gone, with no word of the backups (``backups/``) or the rescue
copies (``parley.core.recovery.rescued``) that hold them. So when sessions.db is
missing and any of those exists, :func:`show_if_missing` shows this page instead:
what is missing, each rescue copy and backup with when it was made and what it holds,
a "Restore" button on each (a copy of it is put in place:
``parley.core.recovery.damaged_file.restore_backup``; the file itself stays), and
"Start with no chats". Then the chats open as usual.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from parley.core.errors import ParleyError

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStackedWidget

    from parley.core.tasks import TaskSet
    from parley.gui.notices.undo import UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.state import StartupView

log = logging.getLogger(__name__)

#: Files listed on the page (the newest; older ones stay in their folder).
SHOWN = 8

#: The page's title, above what happened.
HEADING = "Your chats file is missing"


def message(path: Path) -> str:
    """What the page says of the missing ``path``: deleted or moved away, or, when ``path``
    is a link to nothing (trial 20: said "deleted or moved away"), where it points."""
    if path.is_symlink():
        target = path.parent / os.readlink(path)
        return (f"{path.name} in {path.parent} is a link to {target}, and there is nothing "
                "there: the file it points to was deleted or moved, or is on a disk that is "
                "not connected. Parley did not start a new, empty one. Restore one of the "
                f"copies below (a copy of it is put in place of the link as {path.name}; the "
                "link is kept beside it), or start with no chats. If the link should work, "
                "quit Parley and put the file it points to back instead.")
    return (f"{path.name} is not in {path.parent}: it was deleted or moved away. Parley did "
            "not start a new, empty one. Restore one of the copies below (a copy of it is "
            f"put in place as {path.name}; the file itself stays), or start with no chats. "
            f"If you moved {path.name} yourself, quit Parley and put it back instead.")


def line(kind: str, made_at: Any, turns: int | None, chats: int | None) -> str:
    """ "Rescue copy, today 14:05:09 — 28 messages in 3 chats"."""
    from parley.core.store.sqlite.backups import age_text
    from parley.gui.database.recovery_page import holds

    what = holds(turns, chats) if turns is not None else "cannot be read"
    return f"{kind}, {age_text(made_at, seconds=True)} — {what}"


class MissingPage(QWidget):
    """The page: what is missing, one row per copy found, "Start with no chats".

    Args:
        path: where sessions.db is missing.
        found: (kind, ``Backup``) of each copy found, rescue copies first.
        tasks: the window's background tasks (the restore runs there).
        chosen: called once the choice is done (a copy put in place, or none), with
            what to tell: the window leaves the page and starts again.

    Attributes:
        heading: the page's title (:data:`HEADING`).
        restore_buttons: one "Restore" button per row (rescue copies first, then
            backups, newest first); ``rows`` their (kind, path) in the same order.
        fresh_button: start with no chats. status: what is being done, or why it failed.
    """

    def __init__(self, path: Path, found: list[tuple[str, Any]], tasks: TaskSet,
                 chosen: Callable[[str], Awaitable[None]]) -> None:
        super().__init__()
        self.setObjectName("MissingPage")
        self.setAccessibleName("Chats file missing")
        self.path, self.tasks, self.chosen = path, tasks, chosen
        self.heading = QLabel(HEADING, self)
        self.heading.setObjectName("RecoveryTitle")
        self.message = QLabel(message(path), self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col = QVBoxLayout(self)
        col.setContentsMargins(60, 30, 60, 30)
        col.addStretch(1)
        col.addWidget(self.heading)
        col.addSpacing(8)
        col.addWidget(self.message)
        col.addSpacing(12)
        self.restore_buttons: list[QPushButton] = []
        self.rows: list[tuple[str, Path]] = []
        for kind, b in found[:SHOWN]:
            row = QHBoxLayout()
            text = line(kind, b.made_at, b.turns, b.chats)
            label = QLabel(text, self)
            label.setToolTip(str(b.path))
            button = QPushButton("Restore", self)
            button.setAccessibleName(f"Restore the {text}")
            button.setEnabled(b.turns is not None)
            button.clicked.connect(lambda _=False, p=b.path, t=text: self._go(p, t))
            self.restore_buttons.append(button)
            self.rows.append((kind, b.path))
            row.addWidget(label, 1)
            row.addWidget(button)
            col.addLayout(row)
        col.addSpacing(8)
        fresh = QHBoxLayout()
        fresh.addWidget(QLabel("Or start again with no chats (the copies above stay).", self), 1)
        self.fresh_button = QPushButton("Start with no chats", self)
        self.fresh_button.clicked.connect(lambda: self._go(None, ""))
        fresh.addWidget(self.fresh_button)
        col.addLayout(fresh)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        col.addWidget(self.status)
        col.addStretch(2)

    def _go(self, source: Path | None, text: str) -> None:
        for b in [*self.restore_buttons, self.fresh_button]:
            b.setEnabled(False)
        self.status.setText("Restoring…" if source is not None else "Starting…")
        self.tasks.spawn(self._run(source, text), name="restore-missing")

    async def _run(self, source: Path | None, text: str) -> None:
        from parley.core.recovery import damaged_file, rescued

        said = "Started with no chats."
        if source is not None:
            try:
                await asyncio.to_thread(damaged_file.restore_backup, self.path, source)
            except ParleyError as exc:
                self.status.setText(exc.message)
                for b in [*self.restore_buttons, self.fresh_button]:
                    b.setEnabled(True)
                return
            await asyncio.to_thread(rescued.handled, self.path, source)
            said = f"Restored the {text[0].lower()}{text[1:]} as {self.path.name}."
        await self.chosen(said)


class MissingWindow(Protocol):
    """What the page uses of the window's state (``parley.gui.window.state.WindowState``):
    its stack of pages, start-up (started again once a choice is made), the undo bar
    (says what was done), the tasks, the sidebar's status line, and where the page and
    the "looked for once" flag are kept."""

    missing_page: MissingPage | None
    missing_checked: bool

    @property
    def stack(self) -> QStackedWidget: ...

    @property
    def loading_page(self) -> QLabel: ...

    @property
    def startup(self) -> StartupView: ...

    @property
    def undo(self) -> UndoManager: ...

    @property
    def tasks(self) -> TaskSet: ...

    @property
    def sidebar(self) -> Sidebar: ...


async def show_if_missing(window: MissingWindow, path: Path) -> bool:
    """Show the page when ``path`` (sessions.db) is missing and copies of it exist.

    Returns:
        True when the page is shown (the window's start waits for a choice);
        False when sessions.db is there or nothing was found (a first start).
    """
    from parley.core.recovery import rescued
    from parley.core.store.sqlite.backups import Backup, describe, list_backups

    if getattr(window, "missing_checked", False) or path.exists():
        return False

    def look() -> list[tuple[str, Any]]:
        copies = [("Rescue copy", describe(Backup(c.path, c.made_at, 0, True)))
                  for c in rescued.found(path)]
        return copies + [("Backup", b) for b in list_backups(path)]

    found = await asyncio.to_thread(look)
    if not found:
        return False
    log.warning("%s is missing; %d copies of it were found", path, len(found))

    async def chosen(said: str) -> None:
        window.missing_page = None
        window.stack.setCurrentWidget(window.loading_page)
        window.stack.removeWidget(page)
        page.deleteLater()
        window.missing_checked = True
        await window.startup.start()
        window.undo.notice(said, 15_000)

    page = MissingPage(path, found, window.tasks, chosen)
    window.missing_page = page
    window.stack.addWidget(page)
    window.stack.setCurrentWidget(page)
    window.sidebar.show_status("")
    return True
