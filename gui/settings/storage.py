"""Settings → Storage: where the chats are, and a PostgreSQL database to keep them in.

The page says where the chats are now (sessions.db, or a database and that
other computers share it). A database address and its password can be tested
("Test connection": the database is opened, set up when empty, and its chats
counted, off the GUI thread) and chosen for the next start ("Use this
database"): the address is saved in the data folder without its password, the
password where API keys go (``parley.core.store.backends.save_database_choice``).
"Use sessions.db" goes back to the file. ``--database`` and
``PARLEY_DATABASE_URL`` still win over the choice saved here. Chats are not
moved by a choice: "Copy my chats there" copies them into an empty database
(``AsyncStore.copy_to``: verified, with progress, the open store only read).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from parley.core.errors import ParleyError
from parley.core.tasks import TaskSet
from parley.gui.settings.widgets import hint

PLACEHOLDER = "postgresql://you@db.example:5432/parley"


def with_password(url: str, password: str) -> str:
    """``url`` with ``password`` put in (an address that has one keeps its own)."""
    from parley.core.store.pg_store import parse_url

    parsed = parse_url(url)
    if password and parsed.password is None:
        parsed = parsed.set(password=password)
    return str(parsed.set(drivername="postgresql").render_as_string(hide_password=False))


def check_database(url: str) -> str:
    """Open the database (set up when empty), count its chats, close it; a sentence."""
    from parley.core.store.pg_store import PgStore

    store = PgStore.open_url(url)
    try:
        chats = len(store.list_sessions(limit=100_000, include_archived=True))
        return (f"Connected to {store.where}: {chats} chat{'s' if chats != 1 else ''} "
                "there.")
    finally:
        store.close()


class StoragePage(QWidget):
    """The Storage page (module docstring).

    Args:
        store: the app's ``AsyncStore``.
        folder: Parley's data folder (where the choice is saved).
        tasks: the dialog's task set.
    """

    def __init__(self, store: Any, folder: Path, tasks: TaskSet,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from parley.core.store.backends import saved_database_url

        self.store, self.folder, self.tasks = store, folder, tasks
        self.where = QLabel(self._where_text(), self)
        self.where.setObjectName("StorageWhere")
        self.where.setWordWrap(True)
        self.url = QLineEdit(saved_database_url(folder) or "", self)
        self.url.setPlaceholderText(PLACEHOLDER)
        self.url.setAccessibleName("Database address")
        self.password = QLineEdit(self)
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setAccessibleName("Database password")
        self.password.setPlaceholderText("password (kept in the keyring, not in the address)")
        self.test_button = QPushButton("Test connection", self)
        self.use_button = QPushButton("Use this database", self)
        self.file_button = QPushButton("Use sessions.db", self)
        self.copy_button = QPushButton("Copy my chats there", self)
        self.status = QLabel("", self)
        self.status.setObjectName("StorageStatus")
        self.status.setWordWrap(True)
        self.test_button.clicked.connect(lambda: self.tasks.spawn(self.test(), name="db-test"))
        self.use_button.clicked.connect(lambda: self.tasks.spawn(self.use(), name="db-use"))
        self.file_button.clicked.connect(
            lambda: self.tasks.spawn(self.use_file(), name="db-file"))
        self.copy_button.clicked.connect(lambda: self.tasks.spawn(self.copy(), name="db-copy"))
        buttons = QHBoxLayout()
        for b in (self.test_button, self.use_button, self.copy_button, self.file_button):
            b.setAccessibleName(b.text())
            buttons.addWidget(b)
        buttons.addStretch(1)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 8)
        col.addWidget(self.where)
        col.addWidget(hint("Keep the chats in a PostgreSQL database to share them between "
                           "computers. The choice applies from the next start. \"Copy my chats "
                           "there\" copies every chat into the (empty) database first, checks "
                           "every message and leaves these unchanged.", self))
        col.addWidget(self.url)
        col.addWidget(self.password)
        col.addLayout(buttons)
        col.addWidget(self.status)

    def _where_text(self) -> str:
        if getattr(self.store, "on_server", False):
            where = getattr(self.store.sync, "where", self.store.path)
            return (f"Your chats are in the PostgreSQL database {where}; other computers "
                    "using it see the same chats.")
        return f"Your chats are in {self.store.path} on this computer."

    def _target(self) -> str:
        return with_password(self.url.text().strip(), self.password.text())

    async def test(self) -> None:
        """Try the address and say what was found (or what went wrong)."""
        self.status.setText("Connecting…")
        try:
            self.status.setText(await asyncio.to_thread(check_database, self._target()))
        except ParleyError as exc:
            self.status.setText(exc.message)

    async def use(self) -> None:
        """Test the address, then keep the chats there from the next start."""
        from parley.core.store.backends import save_database_choice

        try:
            target = self._target()
            found = await asyncio.to_thread(check_database, target)
            await asyncio.to_thread(save_database_choice, self.folder, target)
        except ParleyError as exc:
            self.status.setText(exc.message)
            return
        except OSError as exc:
            self.status.setText(f"The choice could not be saved in {self.folder}: "
                                f"{exc.strerror or exc}. Nothing was changed.")
            return
        self.password.clear()
        self.status.setText(f"{found} Parley keeps the chats there from the next start.")

    async def copy(self) -> None:
        """Copy every chat into the database given (empty), with progress; say what was copied."""
        buttons = (self.test_button, self.use_button, self.copy_button, self.file_button)
        for b in buttons:
            b.setEnabled(False)
        self.status.setText("Copying…")

        def progress(done: int, total: int) -> None:
            self.status.setText(f"Copying… {100 * done // max(1, total)}% "
                                f"({done:,} of {total:,} rows)")

        try:
            report = await self.store.copy_to(self._target(), progress)
        except ParleyError as exc:
            self.status.setText(exc.message)
            return
        finally:
            for b in buttons:
                b.setEnabled(True)
        self.status.setText(f"Copied {report.summary()}; every message checked, the original "
                            "unchanged. \"Use this database\" to keep the chats there.")

    async def use_file(self) -> None:
        """Keep the chats in sessions.db from the next start."""
        from parley.core.store.backends import save_database_choice

        try:
            await asyncio.to_thread(save_database_choice, self.folder, None)
        except OSError as exc:
            self.status.setText(f"The choice could not be saved: {exc.strerror or exc}.")
            return
        self.url.clear()
        self.status.setText("Parley keeps the chats in sessions.db from the next start.")
