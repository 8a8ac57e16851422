"""The one page the window shows when sessions.db is damaged — at start or while in use.

It offers three ways on (``parley.core.recovery.damaged_file``), each in one click:

* restore a backup — each backup is listed with when it was made and how many
  turns and chats it holds (``parley.core.store.sqlite.backups.list_backups``);
* salvage what can still be read from the damaged file, merged with the newest
  backup (``parley.core.recovery.damaged_file.salvage_into``);
* start a new file.

Every one first keeps the damaged file aside as ``sessions.db.corrupt-<date>``;
none writes over it. A file that does not start as an SQLite database does
(``parley.core.store.errors.NotSQLiteFile``) gets the same page in its own words
(not "damaged"; no salvage: SQLite reads nothing of it). Damage met while the window starts or runs
(:func:`on_damage`) first closes the store (runs stopped, nothing more
written), then shows this page. After the choice the chats open again: in the
same window when nothing was built yet, else in a new window that takes this
one's place (:func:`reopen`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from parley.core.errors import ParleyError
from parley.gui.startup.typed_at_start import TypedWindow, typed_texts

if TYPE_CHECKING:
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QDialog, QStackedWidget

    from parley.core.store.async_store import AsyncStore
    from parley.core.store.queued import QueuedMessage
    from parley.core.tasks import TaskSet
    from parley.gui.chat.controller import ChatController
    from parley.gui.notices.undo import UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.state import StartupView

log = logging.getLogger(__name__)

Kind = Literal["backup", "salvage", "fresh"]
Recover = Callable[[Kind, Any, threading.Event], Awaitable[None]]
#: Backups listed on the page (the newest; older ones stay in the folder).
SHOWN = 12

AT_START = ("sessions.db is damaged: part of it can no longer be read. Parley did not change "
            "it.")
#: A read met the damage (a search, a long chat) and nothing says when it was done.
WHILE_RUNNING = ("sessions.db is damaged: part of it can no longer be read. Parley found this "
                 "when it read that part; it cannot tell when the damage was done (a disk "
                 "error, or another program writing into the file, perhaps while Parley was "
                 "closed). Parley stopped saving to it then, so nothing more was written over "
                 "the damage.")
#: The whole-file check made after opening failed (``parley.core.store.sqlite.kept``).
FOUND_BY_CHECK = ("sessions.db is damaged: part of it can no longer be read. Parley found this "
                  "when it checked the whole file just after opening it, so the damage was "
                  "already there (a disk error, or another program writing into the file while "
                  "Parley was closed). Parley stopped saving to it then, so nothing more was "
                  "written over the damage.")
#: Found by the file's size and header while running (``{why}``: "it is empty: …").
FOUND_WHILE_RUNNING = ("sessions.db was found damaged while Parley was using it: {why}. "
                       "Parley stopped saving to it then, so nothing more was written to it.")
REPLACED = ("sessions.db was replaced by another database while Parley was using it (another "
            "program wrote a whole other database file over it). Parley stopped saving to it "
            "and did not mix it with your chats: restoring a backup or salvaging brings back "
            "your chats, with what was saved after the backup, and keeps the other database "
            "aside.")
#: Added to the words when the files were copied aside when the damage was found
#: (``{what}``: those really copied, :func:`copied_words`).
KEPT_THEN = (" {what} copied to {folder} beside it then (never deleted); restoring a backup "
             "or salvaging reads {them} too.")
#: Added when what the open connection read could not be copied (trial 20: a damaged
#: list of tables stopped it, and the page said it was copied).
NOT_READ_COPY = (" Parley could not copy what it still read of the file "
                 "(the folder's what-happened.txt says why).")
#: Said once the message that met the damage, or the box's text, was put aside (back in
#: the box after this page). Trial 17b: "the message you were sending was not saved" was
#: said of a draft nobody had sent.
MESSAGE_KEPT = (" What was in the message box (the message you were sending, or writing) "
                "comes back into it once your chats are open again (kept meanwhile in {path}).")
#: Said when messages queued behind the reply were kept too (``{n}``: how many).
QUEUED_KEPT = " The {n} you queued behind the reply come back after it, not sent, in order."
#: Said when only queued messages were kept (the box was empty).
ONLY_QUEUED_KEPT = (" The {n} you queued behind the reply were not sent; they come back into the "
                    "message box once your chats are open again (kept meanwhile in {path}).")
KEPT_NOTE = ("Whichever you choose, the damaged file is kept beside it, renamed "
             "“sessions.db.corrupt-” followed by today's date and time; nothing is "
             "written over it.")
#: At start, the file does not start as an SQLite database does
#: (``parley.core.store.errors.NotSQLiteFile``): not "damaged", and nothing to salvage.
NOT_CHATS = ("{path} is not a chats file: it does not start as an SQLite database does. It "
             "may be a file of another kind saved under that name, or your chats file with "
             "its beginning written over; nothing in it can be read as chats. Parley did not "
             "change it.")
#: At start, an SQLite database of another program (``OtherSQLiteFile``): as the running
#: case's "replaced by another database", never "damaged", no salvage.
OTHER_SQLITE = ("{path} is an SQLite database, but not a chats file: it holds another "
                "program's tables, not Parley's. It may be another program's file saved under "
                "that name; nothing in it is your chats. Parley did not change it.")
#: At start, an emptied file (``ChatsFileEmptied``): nothing in it to salvage.
EMPTIED = ("{path} is empty (0 bytes): it held your chats when Parley last closed it and "
           "was emptied since, so nothing in it can be read. Parley did not change it.")
EMPTIED_HEADING = "sessions.db is empty"
NOT_CHATS_NOTE = ("Whichever you choose, that file is kept beside it, renamed "
                  "“sessions.db.corrupt-” followed by today's date and time; nothing is "
                  "written over it.")


def not_chats(path: Path, exc: BaseException) -> tuple[str, str] | None:
    """The heading and words of the page for a ``path`` that is not a chats file at all
    (``exc``: why it could not be opened), or None when it is not one of those: a file
    not starting as SQLite does (:data:`NOT_CHATS`), another program's SQLite database
    (:data:`OTHER_SQLITE`), an emptied file (:data:`EMPTIED`). A folder is not offered
    this page (nothing may touch it)."""
    from parley.core.store.errors import ChatsFileEmptied, NotSQLiteFile, OtherSQLiteFile

    if isinstance(exc, NotSQLiteFile):
        return NOT_CHATS_HEADING, NOT_CHATS.format(path=path)
    if isinstance(exc, OtherSQLiteFile):
        return NOT_CHATS_HEADING, OTHER_SQLITE.format(path=path)
    if isinstance(exc, ChatsFileEmptied):
        return EMPTIED_HEADING, EMPTIED.format(path=path)
    return None


def holds(messages: int, chats: int | None) -> str:
    """ "28 messages in 3 chats", "1 message in 1 chat"."""
    m = "message" if messages == 1 else "messages"
    c = "chat" if chats == 1 else "chats"
    return f"{messages:,} {m} in {chats if chats is None else f'{chats:,}'} {c}"


def salvage_words(newest: Any) -> str:
    """What "Salvage" does, true to the backups there are (``newest``: the newest readable
    one, or None)."""
    read = "Reads every message SQLite can still read from the damaged file"
    if newest is None:
        return (f"{read}. There is no backup to fill in what the damaged parts held: "
                "Parley says how many messages could not be saved.")
    return (f"{read}, merged with the backup of {backup_line(newest)}: the backup fills in "
            "what it held of the damaged parts.")


def backup_line(b: Any) -> str:
    """How a backup is listed: "today 14:05:09 — 28 messages in 3 chats" (with seconds:
    two backups made in the same minute — one while in use, one on quitting — differ)."""
    from parley.core.store.sqlite.backups import age_text

    what = (holds(b.turns, b.chats) if b.turns is not None
            else "cannot be read")
    kind = "" if b.automatic else " (copy taken before an upgrade)"
    return f"{age_text(b.made_at, seconds=True)} — {what}{kind}"


#: Beside each backup when restoring it also reads what was saved after it (the files kept
#: when the damage was found while Parley ran: ``damaged_file.restore_reporting``), so an
#: empty or old backup is not read as "nothing will come back".
PLUS_KEPT = ", plus what was saved after it"

#: The page's title, above what happened.
HEADING = "Your chats file is damaged"
#: The title when the file is not a chats file at all (:data:`NOT_CHATS`).
NOT_CHATS_HEADING = "sessions.db is not a chats file"


class RecoveryPage(QWidget):
    """The damaged-file page (or the not-a-chats-file page: ``not_chats``).

    Args:
        message: what happened (:data:`AT_START`, :data:`WHILE_RUNNING` or
            :data:`NOT_CHATS` words).
        found: the backups (``parley.core.store.sqlite.backups.Backup``), newest first, counted.
        recover: called with ("backup", Backup), ("salvage", Backup | None) or
            ("fresh", None), and the event "Stop salvaging" sets; the page shows its
            errors and enables the buttons again.
        spawn: runs a coroutine (the window's ``TaskSet.spawn``).
        not_chats: the file is not a chats file at all (:func:`not_chats`): the title and
            note say so (:data:`NOT_CHATS_HEADING`, :data:`NOT_CHATS_NOTE`), never
            "damaged", and "Salvage" is not offered (nothing of the chats is in it).
        heading: the title, when not the default one (:data:`EMPTIED_HEADING`).
        kept: the damage was found while Parley ran and what it held then was kept:
            restoring a backup also reads that, and each backup says so (:data:`PLUS_KEPT`).

    Attributes:
        heading: the page's title (:data:`HEADING` or :data:`NOT_CHATS_HEADING`).
        restore_buttons: one "Restore" button per listed backup, newest first.
        backup_lines: what each listed backup holds, beside its button.
        salvage_button, fresh_button: the other two ways.
        stop_button: "Stop salvaging", shown while a salvage runs.
        status: what is being done, or why it failed.
    """

    def __init__(self, message: str, found: list[Any], recover: Recover,
                 spawn: Callable[..., object], *, not_chats: bool = False,
                 heading: str | None = None, kept: bool = False) -> None:
        super().__init__()
        self.setObjectName("RecoveryPage")
        self.setAccessibleName("Not a chats file" if not_chats else "Damaged chats file")
        self._recover, self._spawn = recover, spawn
        title = heading or (NOT_CHATS_HEADING if not_chats else HEADING)
        self.heading = QLabel(title, self)
        self.heading.setObjectName("RecoveryTitle")
        self.heading.setAccessibleName(title)
        text = QLabel(message, self)
        text.setObjectName("RecoveryMessage")
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = text
        note = QLabel(NOT_CHATS_NOTE if not_chats else KEPT_NOTE, self)
        note.setWordWrap(True)

        readable = [b for b in found if b.turns is not None]
        newest = readable[0] if readable else None
        self.restore_buttons: list[QPushButton] = []
        self.backup_lines: list[QLabel] = []
        listing = QWidget(self)
        rows = QVBoxLayout(listing)
        rows.setContentsMargins(0, 0, 0, 0)
        if not found:
            rows.addWidget(QLabel("No backups found. Parley makes one at most every 30 "
                                  "minutes while you use it, and when you quit.", listing))
        for b in found[:SHOWN]:
            row = QHBoxLayout()
            line = backup_line(b) + (PLUS_KEPT if kept and b.turns is not None else "")
            label = QLabel(line, listing)
            label.setToolTip(str(b.path))
            self.backup_lines.append(label)
            button = QPushButton("Restore", listing)
            button.setAccessibleName(f"Restore the backup of {line}")
            button.setEnabled(b.turns is not None)
            button.clicked.connect(lambda _=False, b=b: self._go("backup", b))
            self.restore_buttons.append(button)
            row.addWidget(label, 1)
            row.addWidget(button)
            rows.addLayout(row)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setWidget(listing)
        scroll.setMaximumHeight(260)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)

        self.salvage_button = QPushButton("Salvage what can still be read", self)
        self.salvage_button.setAccessibleName("Salvage the damaged file")
        salvage_note = QLabel(salvage_words(newest), self)
        salvage_note.setWordWrap(True)
        self.salvage_button.clicked.connect(lambda: self._go("salvage", newest))
        self.fresh_button = QPushButton("Start a new file", self)
        self.fresh_button.setAccessibleName("Start a new file")
        self.fresh_button.clicked.connect(lambda: self._go("fresh", None))
        self.stop_button = QPushButton("Stop salvaging", self)
        self.stop_button.setAccessibleName("Stop salvaging")
        self.stop_button.hide()
        self.stop_button.clicked.connect(self._stop)
        self._stop_event = threading.Event()
        self.status = QLabel("", self)
        self.status.setObjectName("RecoveryStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        col = QVBoxLayout(self)
        col.setContentsMargins(60, 30, 60, 30)
        col.addStretch(1)
        col.addWidget(self.heading)
        col.addSpacing(8)
        col.addWidget(text)
        col.addWidget(note)
        col.addSpacing(12)
        col.addWidget(QLabel("<b>Restore a backup</b>", self))
        col.addWidget(scroll)
        col.addSpacing(8)
        col.addWidget(QLabel("<b>Or</b>", self))
        salvage_row = QHBoxLayout()
        salvage_row.addWidget(salvage_note, 1)
        salvage_row.addWidget(self.salvage_button)
        col.addLayout(salvage_row)
        salvage_note.setVisible(not not_chats)
        self.salvage_button.setVisible(not not_chats)
        fresh_row = QHBoxLayout()
        fresh_row.addWidget(QLabel("Start again with no chats.", self), 1)
        fresh_row.addWidget(self.fresh_button)
        col.addLayout(fresh_row)
        col.addWidget(self.status)
        col.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignLeft)
        col.addStretch(2)

    def _buttons(self) -> list[QPushButton]:
        return [*self.restore_buttons, self.salvage_button, self.fresh_button]

    def _go(self, kind: Kind, arg: Any) -> None:
        for button in self._buttons():
            button.setEnabled(False)
        self.status.setText({"backup": "Restoring the backup…",
                             "salvage": "Salvaging… (about a minute per GB)",
                             "fresh": "Starting a new file…"}[kind])
        self._stop_event = threading.Event()
        self.stop_button.setVisible(kind == "salvage")
        self.stop_button.setEnabled(True)
        self._spawn(self._run(kind, arg), name="recover")

    def _stop(self) -> None:
        """Stop the salvage under way (it ends at its next range; nothing is changed)."""
        self._stop_event.set()
        self.stop_button.setEnabled(False)
        self.status.setText("Stopping…")

    async def _run(self, kind: Kind, arg: Any) -> None:
        from parley.core.store.errors import SalvageCancelled

        try:
            await self._recover(kind, arg, self._stop_event)
        except ParleyError as exc:
            self.stop_button.hide()
            self.status.setText(exc.message)
            stopped = isinstance(exc, SalvageCancelled)
            for button in self._buttons():
                button.setEnabled(stopped or button is not self.salvage_button
                                  or kind != "salvage")


class _Retiring(Protocol):
    """The window's closing (``parley.gui.window.shutdown.WindowShutdown``)."""

    def retire(self) -> None: ...


class _Closing(Protocol):
    """The window's problems (``parley.gui.window.problems.WindowProblems``)."""

    async def close_store_for_recovery(self) -> None: ...


class RecoveryWindow(TypedWindow, Protocol):
    """What the page uses of the main window (``parley.gui.main_window.MainWindow``):
    its state (``parley.gui.window.state.WindowState``: the store closed, the pages,
    start-up, the undo bar, the message box), its closing and problems parts, the
    dialogs over it (closed), and its class, of which a new window takes its place
    after a recovery (:func:`reopen`)."""

    recovery_page: RecoveryPage | None
    successor: RecoveryWindow | None
    pending_notice: str | None

    def __init__(self, home: Path | None = None, *,
                 probe: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None) -> None: ...

    @property
    def home(self) -> Path | None: ...

    @property
    def env(self) -> dict[str, str]: ...

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def stack(self) -> QStackedWidget: ...

    @property
    def loading_page(self) -> QLabel: ...

    @property
    def sidebar(self) -> Sidebar: ...

    @property
    def undo(self) -> UndoManager: ...

    @property
    def tasks(self) -> TaskSet: ...

    @property
    def startup(self) -> StartupView: ...

    @property
    def quitting(self) -> _Retiring: ...

    @property
    def problems(self) -> _Closing: ...

    def geometry(self) -> QRect: ...

    def setGeometry(self, rect: QRect, /) -> None: ...  # noqa: N802 (Qt's name)

    def show(self) -> None: ...

    def findChildren(self, type: type[QDialog], /) -> list[QDialog]: ...  # noqa: N802


async def show_recovery(window: RecoveryWindow, path: Path, message: str, *,
                        not_chats: bool = False, heading: str | None = None) -> RecoveryPage:
    """Show the damaged-file page in ``window``; a choice recovers, then opens the chats.

    Args:
        window: the main window (``stack``, ``tasks``, ``start``, ``undo``, ``chat``).
        path: the damaged sessions.db (no connection open on it).
        message: what happened (:data:`AT_START` / :data:`WHILE_RUNNING` / :data:`NOT_CHATS`).
        not_chats: ``path`` is not a chats file at all (:class:`RecoveryPage`).
        heading: the page's title, when not the default one.
    """
    from parley.core.store.sqlite.backups import list_backups
    from parley.core.store.sqlite.damage import marked_kept

    found = await asyncio.to_thread(list_backups, path)
    kept = await asyncio.to_thread(marked_kept, path) is not None

    async def chosen(kind: Kind, arg: Any, stop: threading.Event) -> None:
        aside, said = await recover(path, kind, arg, stop,
                                    what="file that was there" if not_chats else "damaged file")
        if getattr(window, "chat", None) is not None:
            reopen(window, said)
            return
        page, window.recovery_page = window.recovery_page, None
        window.stack.setCurrentWidget(window.loading_page)
        if page is not None:
            window.stack.removeWidget(page)
            page.deleteLater()
        window.pending_notice = said  # told once the chats show (with what start-up adds)
        await window.startup.start()

    close_popups(window)
    page = RecoveryPage(message, found, chosen, window.tasks.spawn, not_chats=not_chats,
                        heading=heading, kept=kept)
    window.recovery_page = page
    window.stack.addWidget(page)
    window.stack.setCurrentWidget(page)
    window.sidebar.show_status("")
    return page


def close_popups(window: RecoveryWindow) -> None:
    """Close what floats over the chats (the search popup, the command palette, a dialog
    left open): the recovery page takes the whole window, and nothing of the chats it
    replaces may stay over it."""
    from PySide6.QtWidgets import QDialog

    for name in ("search_popup", "command_palette"):
        popup = getattr(window, name, None)
        if popup is not None and popup.isVisible():
            popup.hide()
    for dialog in window.findChildren(QDialog):
        if dialog.isVisible():
            dialog.reject()


async def recover(path: Path, kind: Kind, arg: Any, stop: threading.Event | None = None,
                  *, what: str = "damaged file") -> tuple[Path | None, str]:
    """Do the chosen recovery off the GUI thread; return (where the damaged file went,
    what to tell the person: "The ``what`` was kept as …"). Setting ``stop`` stops a
    salvage (``SalvageCancelled``).

    Raises:
        DatabaseCorrupt: the backup is damaged too (nothing was changed).
        SalvageError: nothing could be salvaged (the damaged file is back in place).
        CannotOpen: a file could not be moved or written.
    """
    from parley.core.recovery import damaged_file

    if kind == "backup":
        from parley.core.store.sqlite.damage import marked_kept

        kept = await asyncio.to_thread(marked_kept, path)
        aside, read = await asyncio.to_thread(damaged_file.restore_reporting, path, arg.path)
        said = f"The backup of {backup_line(arg)} was restored"
        if kept is None:
            said += "."
        elif read:
            said += f", with what was saved after it (read from {kept.folder.name})."
        else:  # said only when true (trial 20: nothing of it could be read)
            said += (f". Nothing could be read from {kept.folder.name}: what was saved after "
                     "the backup is not in it (that folder is kept).")
    elif kind == "salvage":
        aside, report = await asyncio.to_thread(damaged_file.salvage_into, path,
                                                arg.path if arg is not None else None, stop)
        filled = (f", {report.from_backup:,} of them filled in from the backup"
                  if report.backup is not None else "")
        said = f"Salvaged {holds(report.turns, report.chats)}{filled}." + lost_words(report)
    else:
        aside = await asyncio.to_thread(damaged_file.start_fresh, path)
        said = "A new, empty file was started."
    if kind != "fresh":
        await asyncio.to_thread(damaged_file.back_up_recovered, path)
    if aside is not None:
        said += f" The {what} was kept as {aside.name}."
    return aside, said


def lost_words(report: Any) -> str:
    """What a salvage could not bring back, from its own count (``SalvageReport``):
    " 37 messages could not be saved (they were on the damaged parts)." or ''."""
    turns, chats = report.lost_turns, report.lost_chats
    if turns is None:
        return (" Parley could not count the messages on the damaged parts: some may be "
                "missing.")
    parts = []
    if turns:
        parts.append(f"{turns:,} message{'s' if turns != 1 else ''}")
    if chats:
        parts.append(f"{chats:,} chat{'s' if chats != 1 else ''}")
    if not parts:
        return ""
    where = "the backup did not hold them either" if report.backup is not None \
        else "there was no backup"
    return (f" {' and '.join(parts)} could not be saved: they were on the damaged parts "
            f"and {where}.")


def reopen(window: RecoveryWindow, notice: str) -> RecoveryWindow:
    """Open the chats in a new window that takes ``window``'s place, then close it.

    Used after a recovery in a window that had already built its chat view (its
    controller holds the old store). Returns the new window (also
    ``window.successor``), of ``window``'s own class: this module does not import the
    window's (which imports it: the window shows this page).
    """
    new = type(window)(home=window.home, probe=None, env=window.env)
    new.setGeometry(window.geometry())
    new.pending_notice = notice
    window.successor = new
    new.show()
    new.startup.start_after_first_paint()
    window.quitting.retire()
    return new


async def on_damage(window: RecoveryWindow, *, at_start: bool) -> None:
    """sessions.db met damage while the window started or ran: stop, close it, offer the page.

    Runs are stopped (what they had saved stays), the backups stop (none of a
    damaged file is kept), the store is closed; then the page shows, with the
    words for when it was found.
    """
    path = window.store.path if window.store is not None else None
    await window.problems.close_store_for_recovery()
    if path is None:
        return
    message = words(path, AT_START if at_start else WHILE_RUNNING)
    box = bool(typed_texts(window))  # the message that met the damage, the box's text
    queued = _unsent(window)
    kept = keep_message(window, queued)
    if kept is not None:
        n = f"{len(queued)} message{'s' if len(queued) != 1 else ''}"
        if box:
            message += MESSAGE_KEPT.format(path=kept)
        if queued:
            message += (QUEUED_KEPT if box else ONLY_QUEUED_KEPT).format(n=n, path=kept)
    await show_recovery(window, path, message)


def words(path: Path, plain: str) -> str:
    """What the page says of ``path``: ``plain`` (:data:`AT_START` / :data:`WHILE_RUNNING`),
    or :data:`REPLACED` when another database was written over it; and where its files
    were copied when it was found damaged while open (its marker,
    ``parley.core.store.sqlite.damage.marked_kept``)."""
    from parley.core.store.sqlite.damage import marked_kept
    from parley.core.store.sqlite.kept import FOUND_BY_CHECK as FOUND_AT_CHECK
    from parley.core.store.sqlite.kept import UNREADABLE

    kept = marked_kept(path)
    if kept is None:
        return plain
    if kept.replaced:
        said = REPLACED
    elif kept.why == FOUND_AT_CHECK:
        said = FOUND_BY_CHECK
    elif kept.why and kept.why != UNREADABLE:  # emptied, cut short, written over: said so
        said = FOUND_WHILE_RUNNING.format(why=kept.why)
    else:
        said = WHILE_RUNNING
    return said + copied_words(kept)


def copied_words(kept: Any) -> str:
    """What was really copied to the folder of kept files (``parley.core.store.sqlite.kept
    .Kept``) when the damage was found: " The file, its -wal and what Parley could still
    read were copied to …", with only the files there, and :data:`NOT_READ_COPY` when
    the copy of what Parley read is not among them."""
    parts = [name for name, f in (("the file", kept.folder / kept.db_name),
                                  ("its -wal", kept.folder / f"{kept.db_name}-wal"),
                                  ("what Parley could still read", kept.read_by_parley))
             if f.exists()]
    if not parts:
        return ""
    what = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    verb = "was" if len(parts) == 1 else "were"
    said = KEPT_THEN.format(what=f"{what[0].upper()}{what[1:]} {verb}",
                            folder=kept.folder.name, them="it" if len(parts) == 1 else "them")
    return said + ("" if kept.read_by_parley.exists() else NOT_READ_COPY)


def _unsent(window: RecoveryWindow) -> list[QueuedMessage]:
    """The window's queued messages not yet saved as turns (``ChatQueue.unsent``)."""
    chat = getattr(window, "chat", None)
    return chat.runs.queue.unsent() if chat is not None else []


def keep_message(window: RecoveryWindow,
                 queued: list[QueuedMessage] | None = None) -> Path | None:
    """The message that met the damage (given back to the box by the failed send,
    ``parley.gui.chat.run``), what else the box holds, then the messages ``queued``
    behind the reply (``parley.gui.database.queued_kept``): written to the file of text
    typed while the chats could not be opened (``parley.gui.startup.typed_at_start``),
    which puts it back into the box when the chats open — in this window or the one
    that takes its place — or at the next start if Parley is quit meanwhile.

    Returns:
        The file, or None when there was nothing to keep or the file could not be
        written (the box's text then stays in the box).
    """
    from parley.core import paths
    from parley.gui.composer.drafts import draft_key
    from parley.gui.database import queued_kept
    from parley.gui.startup.typed_at_start import TypedAtStart

    queued = queued or []
    if not typed_texts(window) and not queued:
        return None
    folder = paths.data_dir(window.home)
    typed = TypedAtStart(folder)  # reads what an earlier run kept
    chat = getattr(window, "chat", None)
    box = draft_key(chat.session_id) if chat is not None and window.composer.text().strip() \
        else None  # its chat's saved draft is older than the text kept: not brought back
    if not typed.keep(window, queued_kept.texts(queued)):
        return None
    # Which messages they were: the text alone would come back twice when the recovered
    # file still queues them (queued_kept.bring_back takes them from it). Written once the
    # text is: unwritten (logged), a message comes back twice rather than not at all.
    queued_kept.write(folder, queued, box)
    window.composer.set_text("")  # it comes back once, from the file
    window.startup.typed = None  # the next start reads the file again
    return typed.path
