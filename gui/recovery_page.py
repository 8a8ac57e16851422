"""What the window shows when sessions.db is damaged: two ways on, nothing overwritten.

"Open the latest backup" copies the newest readable backup into place
(``core.recovery.restore_backup``); "Start a new file" lets Parley create an
empty one (``core.recovery.start_fresh``). Both first move the damaged file
aside as ``sessions.db.corrupt-<timestamp>``; neither writes over it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

Recover = Callable[[Path | None], Awaitable[None]]


class RecoveryPage(QWidget):
    """The damaged-file page.

    Args:
        message: the ``DatabaseCorrupt`` error's text.
        backup: the newest usable backup (``core.recovery.latest_backup``), or None.
        recover: called with the backup to restore, or None to start a new file.
        spawn: runs a coroutine (the window's ``TaskSet.spawn``).
    """

    def __init__(self, message: str, backup: Path | None, recover: Recover,
                 spawn: Callable[..., object]) -> None:
        super().__init__()
        self.setObjectName("RecoveryPage")
        self.setAccessibleName("Damaged chats file")
        text = QLabel(message, self)
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        note = QLabel("Whichever you choose, the damaged file is kept beside it (renamed "
                      "“….corrupt-<date>”); nothing is written over it.", self)
        note.setWordWrap(True)
        self.backup_button = QPushButton(self)
        self.backup_button.setAccessibleName("Open the latest backup")
        if backup is not None:
            when = datetime.fromtimestamp(backup.stat().st_mtime).strftime("%d %b %Y %H:%M")
            self.backup_button.setText(f"Open the latest backup ({backup.name}, {when})")
        else:
            self.backup_button.setText("Open the latest backup (none found)")
            self.backup_button.setEnabled(False)
        self.fresh_button = QPushButton("Start a new file", self)
        self.fresh_button.setAccessibleName("Start a new file")
        self.backup_button.clicked.connect(lambda: self._go(spawn, recover, backup))
        self.fresh_button.clicked.connect(lambda: self._go(spawn, recover, None))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.backup_button)
        buttons.addWidget(self.fresh_button)
        buttons.addStretch(1)
        col = QVBoxLayout(self)
        col.setContentsMargins(60, 40, 60, 40)
        col.addStretch(1)
        col.addWidget(text)
        col.addWidget(note)
        col.addSpacing(12)
        col.addLayout(buttons)
        col.addStretch(2)

    def _go(self, spawn: Callable[..., object], recover: Recover, backup: Path | None) -> None:
        self.backup_button.setEnabled(False)
        self.fresh_button.setEnabled(False)
        spawn(recover(backup), name="recover")


async def show_recovery(window: Any, path: Path, message: str) -> RecoveryPage:
    """Show the damaged-file page in ``window``; a choice recovers, then starts again.

    Args:
        window: the main window (its ``stack``, ``tasks``, ``start``, ``undo``).
        path: the damaged sessions.db.
        message: the ``DatabaseCorrupt`` text.
    """
    backup = await find_backup(path)

    async def chosen(backup: Path | None) -> None:
        aside = await recover(path, backup)
        page, window.recovery_page = window.recovery_page, None
        window.stack.setCurrentWidget(window.loading_page)
        if page is not None:
            window.stack.removeWidget(page)
            page.deleteLater()
        await window.start()
        if aside is not None:
            window.undo.notice(f"The damaged file was kept as {aside.name}.", 12_000)

    page = RecoveryPage(message, backup, chosen, window.tasks.spawn)
    window.recovery_page = page
    window.stack.addWidget(page)
    window.stack.setCurrentWidget(page)
    return page


async def find_backup(path: Path) -> Path | None:
    """The newest readable backup of ``path`` (checked off the GUI thread), or None."""
    from core.recovery import latest_backup

    return await asyncio.to_thread(latest_backup, path)


async def recover(path: Path, backup: Path | None) -> Path | None:
    """Restore ``backup`` to ``path`` (None: start a new file); returns where the
    damaged file went.

    Raises:
        DatabaseCorrupt: the backup is damaged too (nothing was changed).
        CannotOpen: a file could not be moved or written.
    """
    from core.recovery import restore_backup, start_fresh

    if backup is not None:
        return await asyncio.to_thread(restore_backup, path, backup)
    return await asyncio.to_thread(start_fresh, path)
