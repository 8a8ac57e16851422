"""The Backups page's head: where the automatic backups are, when the last was made.

Shown above the generated ``backups.*`` fields of the Settings dialog. The
figures come from the window's ``parley.core.recovery.backup_schedule.BackupScheduler`` when
there is one (else from the folder, read off the GUI thread); "Back up now"
asks it for a backup at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from parley.core.errors import ParleyError
from parley.core.tasks import TaskSet
from parley.gui.settings.widgets import hint

RESTORE_HINT = ("To restore one: quit Parley, then start it again — if sessions.db is ever "
                "damaged, Parley offers each backup in one click. By hand: quit Parley and "
                "copy a backup over sessions.db.")


def last_text(backup: Any) -> str:
    """"Last backup: today 14:05 (28 messages in 3 chats)", or that there is none yet."""
    if backup is None:
        return "No backup yet: the first is made after a change, within a minute or two."
    from parley.core.store.sqlite.backups import age_text
    from parley.gui.database.recovery_page import holds

    what = f" ({holds(backup.turns, backup.chats)})" if backup.turns is not None else ""
    return f"Last backup: {age_text(backup.made_at)}{what}."


class BackupsInfo(QWidget):
    """Where the backups are and when the last one was made, with "Back up now".

    Args:
        db: sessions.db (the backups are in ``backups/`` beside it).
        scheduler: the window's ``BackupScheduler``, or None.
        tasks: the dialog's task set.
    """

    def __init__(self, db: Path, scheduler: Any, tasks: TaskSet,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from parley.core.store.sqlite.backups import folder_of

        self.db, self.scheduler, self.tasks = db, scheduler, tasks
        self.folder = folder_of(db)
        self.where = QLabel(f"Backups are kept in {self.folder}", self)
        self.where.setObjectName("BackupsFolder")
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.last = QLabel("Last backup: …", self)
        self.last.setObjectName("BackupsLast")
        self.now_button = QPushButton("Back up now", self)
        self.now_button.setAccessibleName("Back up now")
        self.now_button.setEnabled(scheduler is not None)
        self.now_button.clicked.connect(
            lambda: self.tasks.spawn(self.back_up_now(), name="backup-now"))
        row = QHBoxLayout()
        row.addWidget(self.last, 1)
        row.addWidget(self.now_button)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 8)
        col.addWidget(self.where)
        col.addLayout(row)
        col.addWidget(hint(RESTORE_HINT, self))
        self.loaded = self.tasks.spawn(self.refresh(), name="backups-info")

    async def refresh(self) -> None:
        """Show the newest backup (the scheduler's, or the folder's)."""
        from parley.core.store.sqlite.backups import describe, last_backup

        newest = getattr(self.scheduler, "last", None)
        if newest is None:
            newest = await asyncio.to_thread(last_backup, self.db)
        if newest is not None and newest.turns is None:
            newest = await asyncio.to_thread(describe, newest)
        self.last.setText(last_text(newest))
        error = getattr(self.scheduler, "last_error", None)
        if error:
            self.last.setText(f"{self.last.text()} {error}")

    async def back_up_now(self) -> None:
        """Make a backup at once (on its own thread) and show it."""
        self.now_button.setEnabled(False)
        self.last.setText("Backing up…")
        try:
            made = await self.scheduler.backup_now()
            if made is None and self.scheduler.last_error:
                raise ParleyError(self.scheduler.last_error)
        finally:
            self.now_button.setEnabled(True)
            await self.refresh()
