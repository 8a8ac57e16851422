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
When the chats are in a database, "Copy my chats to a file…" copies them back
out into a new sessions.db (a Save dialog asks where; the data folder's
sessions.db is suggested when there is none, so "Use sessions.db" then keeps
them there). Both copies show a progress dialog with the rows copied and
leave the source unchanged.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.errors import ParleyError
from parley.core.tasks import TaskSet
from parley.gui import dialogs
from parley.gui.settings.widgets import hint

PLACEHOLDER = "postgresql://you@db.example:5432/parley"


def with_password(url: str, password: str) -> str:
    """``url`` with ``password`` put in (an address that has one keeps its own)."""
    from parley.core.store.postgres.store import parse_url

    parsed = parse_url(url)
    if password and parsed.password is None:
        parsed = parsed.set(password=password)
    return str(parsed.set(drivername="postgresql").render_as_string(hide_password=False))


def check_database(url: str) -> str:
    """Open the database (set up when empty), count its chats, close it; a sentence."""
    from parley.core.store.postgres.store import PgStore

    store = PgStore.open_url(url)
    try:
        chats = len(store.list_sessions(limit=100_000, include_archived=True))
        return (f"Connected to {store.where}: {chats:,} chat{'s' if chats != 1 else ''} "
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
        self.to_file_button = QPushButton("Copy my chats to a file…", self)
        self.to_file_button.setVisible(bool(getattr(store, "on_server", False)))
        self.progress: QProgressDialog | None = None
        self._field_said = False  # the status line holds _address_problem's words
        self.status = QLabel("", self)
        self.status.setObjectName("StorageStatus")
        self.status.setWordWrap(True)
        self.test_button.clicked.connect(lambda: self.tasks.spawn(self.test(), name="db-test"))
        self.use_button.clicked.connect(lambda: self.tasks.spawn(self.use(), name="db-use"))
        self.file_button.clicked.connect(
            lambda: self.tasks.spawn(self.use_file(), name="db-file"))
        self.copy_button.clicked.connect(lambda: self.tasks.spawn(self.copy(), name="db-copy"))
        self.to_file_button.clicked.connect(
            lambda: self.tasks.spawn(self.copy_to_file(), name="db-copy-out"))
        self.url.textChanged.connect(lambda _text: self._follow_field())
        buttons = QHBoxLayout()
        for b in self._buttons():
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
        self._follow_field()

    def _address_problem(self) -> str | None:
        """Why the address field holds no usable address, in this page's words (None: it does).

        An empty field needs no words: the database buttons are simply off.
        """
        from parley.core.store.errors import InvalidDatabaseUrl
        from parley.core.store.postgres.store import parse_url

        text = self.url.text().strip()
        if not text:
            return ""
        try:
            parse_url(text)
        except InvalidDatabaseUrl as exc:
            return (f"This is not a PostgreSQL database address: {exc.why}. Write one like "
                    f"{PLACEHOLDER} above, or choose \"Use sessions.db\" to keep the chats "
                    "in a file.")
        return None

    def _follow_field(self) -> None:
        """Turn the buttons that need an address on only while the field holds a usable one,
        and say what is wrong with one that is not."""
        problem = self._address_problem()
        for b in (self.test_button, self.use_button, self.copy_button):
            b.setEnabled(problem is None)
        if problem or self._field_said:
            self.status.setText(problem or "")
        self._field_said = bool(problem)

    def _buttons(self) -> tuple[QPushButton, ...]:
        return (self.test_button, self.use_button, self.copy_button, self.to_file_button,
                self.file_button)

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
        report = await self._copy(self._target(), "the database")
        if report is not None:
            self.status.setText(f"Copied {report.summary()}; every message checked, the "
                                "original unchanged. \"Use this database\" to keep the chats "
                                "there.")

    async def copy_to_file(self) -> None:
        """Copy every chat of the database into a new sessions.db the person names."""
        path = await self.ask_file()
        if path is None:
            return
        report = await self._copy(path, path.name)
        if report is None:
            return
        from parley.core.paths import DB_NAME

        then = ("\"Use sessions.db\" to keep the chats in it from the next start."
                if path == self.folder / DB_NAME else
                f"To keep the chats in it, put it in {self.folder} as {DB_NAME} and choose "
                "\"Use sessions.db\".")
        self.status.setText(f"Copied {report.summary()} to {path}; every message checked, the "
                            f"database unchanged. {then}")

    def suggested_file(self) -> Path:
        """Where "Copy my chats to a file…" proposes to write: sessions.db of the data folder
        when there is none, else a new ``sessions-from-database-<n>.db`` beside it."""
        from parley.core.paths import DB_NAME

        if not (self.folder / DB_NAME).exists():
            return self.folder / DB_NAME
        n = 1
        while (self.folder / f"sessions-from-database-{n}.db").exists():
            n += 1
        return self.folder / f"sessions-from-database-{n}.db"

    async def ask_file(self) -> Path | None:
        """A Save dialog for the new sessions.db (window-modal, not blocking the loop); None
        when cancelled. An existing file is not replaced: the copy refuses one with chats."""
        suggested = self.suggested_file()
        return await dialogs.ask_new_db_file(self, "Copy my chats to a file", suggested.parent,
                                             suggested.name, object_name="copy-to-file")

    async def _copy(self, target: str | Path, name: str) -> Any:
        """Run ``AsyncStore.copy_to`` with a progress dialog (rows copied, of all); the report,
        or None when refused or failed (the reason is on the page)."""
        for b in self._buttons():
            b.setEnabled(False)
        self.status.setText("Copying…")
        dialog = QProgressDialog(f"Copying your chats to {name}…", "", 0, 0, self)
        dialog.setObjectName("copy-progress")
        dialog.setWindowTitle("Copying chats")
        dialog.setCancelButton(None)  # one transaction: it ends whole, or not at all
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setMinimumWidth(400)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        self.progress = dialog

        def progress(done: int, total: int) -> None:
            if self.progress is not dialog:  # a late report after the copy ended
                return
            text = f"Copying… {100 * done // max(1, total)}% ({done:,} of {total:,} rows)"
            self.status.setText(text)
            dialog.setLabelText(f"Copying your chats to {name}: {done:,} of {total:,} rows")
            dialog.setMaximum(max(1, total))
            # Last: a window-modal dialog's setValue runs the event loop, which can give
            # the next report (a nested call) before this one returns; anything set after
            # it would put this older count back over the newer one.
            dialog.setValue(done)

        try:
            return await self.store.copy_to(target, progress)
        except ParleyError as exc:
            self.status.setText(exc.message)
            return None
        finally:
            dialog.close()
            dialog.deleteLater()
            self.progress = None
            for b in self._buttons():
                b.setEnabled(True)
            self._follow_field()

    async def use_file(self) -> None:
        """Keep the chats in sessions.db from the next start; when they are in it now and
        no database was chosen, say so and change nothing."""
        from parley.core.store.backends import save_database_choice, saved_database_url

        on_server = bool(getattr(self.store, "on_server", False))
        chosen = saved_database_url(self.folder)
        if not on_server and chosen is None:
            self.status.setText(f"Your chats are already in sessions.db ({self.store.path}). "
                                "Nothing was changed.")
            return
        try:
            await asyncio.to_thread(save_database_choice, self.folder, None)
        except OSError as exc:
            self.status.setText(f"The choice could not be saved: {exc.strerror or exc}.")
            return
        self.url.clear()
        self.status.setText("Parley keeps the chats in sessions.db from the next start."
                            if on_server else
                            "Your chats stay in sessions.db: the database chosen before is "
                            "not used at the next start.")
