"""What the window shows while sessions.db does not take writes, and the question on quitting.

The run loop keeps a reply whose save failed (disk full, file locked past the
busy timeout, disk error) in memory and writes it again in the background
(``parley.core.chat.save_queue.SaveQueue``). :class:`SaveStatus` shows that in one place:

* a bar above the composer — "Not saved yet: the disk is full. Parley keeps
  trying…" — while anything is kept, gone once all is written; a refusal of
  the same kind met elsewhere (a message that could not be saved, a draft)
  is told in the same bar, never as one dialog per failure;
* the mark "Not saved yet" (after a warning icon) under each kept reply in the transcript
  (``TranscriptView.set_save_mark``), and the kept text itself when the chat
  is opened again (the file holds at most a shorter journalled prefix);
* sending is held meanwhile (``ChatRuns.why_not_send`` asks :meth:`why_held`).

On quitting while something is kept (:func:`ask_before_quit`), one last attempt
is made; if it still fails the person is asked: save a rescue copy elsewhere
(the store's copy, ``parley.gui.database.rescue.save_copy``, with the kept replies and the
drafts written into it), quit without them, or keep Parley open.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QMessageBox, QWidget

from parley.core.content import Turn
from parley.core.errors import ParleyError
from parley.gui import dialogs

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar, QVBoxLayout

    from parley.core.chat.run import ChatRunner
    from parley.core.chat.save_queue import SaveNews, SaveQueue
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.composer.drafts import Drafts
    from parley.gui.notices.undo import UndoManager
    from parley.gui.transcript import TranscriptView

log = logging.getLogger(__name__)

TITLE = "Replies not saved yet"
SAVE, QUIT, CANCEL = "save", "quit", "cancel"
Role = QMessageBox.ButtonRole
#: How long a refusal met outside the queue (a message, a draft) stays in the bar (ms).
PROBLEM_MS = 15_000
#: Said while a call to the PostgreSQL server has waited for an answer for a few seconds
#: (``parley.core.store.answering``), until it ends.
NOT_ANSWERING = ("The database is not answering — Parley keeps trying. Nothing already "
                 "saved is lost; Esc, new chats and search still work.")


#: Said in the status bar when a write is refused because sessions.db was opened read-only.
NOT_SAVED_READ_ONLY = ("Not saved: your chats are read-only (the note above the message box "
                       "says why). What you typed stays in the box.")


def passing(error: ParleyError) -> bool:
    """True for a store failure that passes (disk full, locked, disk error, read-only)."""
    from parley.core.chat.save_queue import PASSING

    return isinstance(error, PASSING)


class SaveBar(QFrame):
    """The one bar above the composer that says what is not saved, and why."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SaveStatus")
        self.setAccessibleName("Saving")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 8, 14, 8)
        row.addWidget(self.label, 1)
        self.setStyleSheet(
            "#SaveStatus { border: 1px solid palette(mid); border-radius: 8px;"
            " background: palette(alternate-base); }")
        self.hide()

    def text(self) -> str:
        """What the bar says ('' when hidden)."""
        return self.label.text() if not self.isHidden() else ""


class SaveStatus:
    """Connects the window to the run loop's :class:`~parley.core.chat.save_queue.SaveQueue`.

    Args:
        parent: the main window as a widget (the bar's parent).
        layout: the chat page's column; the bar goes just above the composer.
        store: the store (a database server says when it stops answering).
        tasks, transcript, status: the window's background tasks, transcript (the marks
            under replies not saved yet) and status bar.
        drafts: the chats' drafts (those refused meanwhile are written when the server
            answers again).
    """

    def __init__(self, parent: QWidget, layout: QVBoxLayout, *, store: AsyncStore,
                 tasks: TaskSet, transcript: TranscriptView, status: QStatusBar,
                 drafts: Drafts) -> None:
        self.store, self.tasks, self.transcript, self.status = store, tasks, transcript, status
        self.drafts = drafts
        self.bar = SaveBar(parent)
        layout.insertWidget(max(0, layout.count() - 1), self.bar)
        self.saves: Any = None
        self._problem: str | None = None
        self._waiting: str | None = None  # a sent message waits for another program's lock
        self._silent = False  # the database server does not answer (answering.AnswerWatch)
        self._read_only: str | None = None  # sessions.db opened read-only: why, what to do
        #: the last passing store failure told in the bar (for the question on quitting)
        self.last_error: ParleyError | None = None
        self._problem_timer = QTimer(self.bar)
        self._problem_timer.setSingleShot(True)
        self._problem_timer.timeout.connect(self._problem_over)

    def attach(self, saves: Any) -> None:
        """Follow the run loop's queue (second step of start-up)."""
        self.saves = saves
        saves.listen(self._news)
        answers = getattr(self.store, "answers", None)  # a server (None: sessions.db)
        if answers is not None:
            answers.listen(self.answering)

    def answering(self, answering: bool) -> None:
        """The database server answers again (True) or has stopped answering (False).

        Answering again, the drafts it refused meanwhile are written at once, and the
        bar's "Not saved: …" goes as soon as they are (kept replies: the run loop's
        queue writes them at once too, ``SaveQueue``)."""
        self._silent = not answering
        self.refresh()
        if answering:
            self.tasks.spawn(self._write_refused(), name="drafts-after-outage")

    async def _write_refused(self) -> None:
        if not await self.drafts.save_unsaved():
            self.saved()

    # -- what is kept -----------------------------------------------------------
    def kept(self, session_id: str) -> list[Turn]:
        """The turns of a chat kept in memory, not saved yet (oldest first)."""
        if self.saves is None:
            return []
        return [u.turn for u in self.saves.pending(session_id)]

    def mark_shown(self, session_id: str | None) -> None:
        """Mark the kept replies of the chat now shown."""
        for turn in self.kept(session_id or ""):
            self.transcript.set_save_mark(turn.id, "unsaved")

    def why_held(self) -> str | None:
        """Why sending is held now (None: it is not)."""
        if self.saves is None or not self.saves.pending():
            return None
        from parley.core.chat.save_queue import SavesPending

        return SavesPending(len(self.saves.pending()), self.saves.error).message

    # -- news -----------------------------------------------------------------
    def _news(self, news: SaveNews) -> None:
        if news.turn is not None:
            mark = "unsaved" if news.kind in ("kept", "failing") else None
            self.transcript.set_save_mark(news.turn.id, mark)
        if news.kind == "dropped" and news.error is not None:
            log.info("kept reply dropped: %s", news.error.message)
        if news.kind == "saved":  # the store takes writes again: a refusal told is over
            self.saved()
        self.refresh()

    def absorb(self, error: ParleyError) -> bool:
        """Tell ``error`` in the bar when it belongs there (a passing store failure, a
        message held because a reply is not saved yet); False: show it otherwise."""
        from parley.core.chat.save_queue import SavesPending
        from parley.core.store.errors import OpenedReadOnly

        if isinstance(error, SavesPending):
            self.refresh()
            self.status.showMessage(error.message, 8_000)
            return True
        if isinstance(error, OpenedReadOnly):  # the bar says why and what to do, always
            self.last_error = error
            self.status.showMessage(NOT_SAVED_READ_ONLY, 10_000)
            return True
        if passing(error):
            self.problem(error)
            return True
        return False

    def problem(self, error: ParleyError) -> None:
        """A passing store failure met outside the queue (a message not saved, a draft):
        told in the bar for a while, not in a dialog."""
        from parley.core.chat.save_queue import reason

        self.last_error = error
        self._problem = (f"Not saved: {reason(error)}. What you typed stays in the box; "
                         "nothing already saved was lost. Try again in a moment.")
        self._problem_timer.start(PROBLEM_MS)
        self.refresh()

    def opened_read_only(self, error: Any) -> None:
        """sessions.db was opened read-only (``error``: the ``DatabaseReadOnly`` met at
        start, with its ``why`` and ``fix``): the bar says so for as long as the window
        is open, once; each write refused meanwhile says so in the status bar
        (:meth:`absorb`)."""
        why = error.why or f"{error.path} or its folder is read-only"
        fix = error.fix or "make the file and its folder writable"
        self._read_only = (f"Read-only: Parley cannot save to your chats because {why}. "
                           "You can read, search and copy them; new chats, messages and "
                           f"changes cannot be saved. To save again, {fix}, then restart "
                           "Parley.")
        self.refresh()

    def not_opened(self, error: ParleyError) -> None:
        """A chat could not be opened for a passing store failure (``error``): told in the
        bar for a while; the chat shown and its box are as they were."""
        from parley.core.chat.save_queue import reason

        self.last_error = error
        self._problem = (f"That chat could not be opened: {reason(error)}. This chat stays "
                         "open and what you typed stays in the box; nothing was lost. Try "
                         "again in a moment.")
        self._problem_timer.start(PROBLEM_MS)
        self.refresh()

    def waiting_for_lock(self, error: ParleyError | None) -> None:
        """A sent message waits for another program's lock (``error``: its
        ``DatabaseBusy``), or no longer does (None): said in the bar meanwhile."""
        if error is None:
            if self._waiting is not None:
                self._waiting = None
                self.refresh()
            return
        self.last_error = error
        self._waiting = (f"Saving your message: {_holder(error)}. Parley keeps waiting for "
                         "it and sends your message once it is saved; nothing already saved "
                         "is lost. Press Esc to stop waiting.")
        self.refresh()

    def saved(self) -> None:
        """A message was saved: a passing failure told in the bar is over (the server or
        the disk is back), so its words go at once, not when their time runs out."""
        if self._problem is not None:
            self._problem_timer.stop()
            self._problem_over()

    def _problem_over(self) -> None:
        self._problem = None
        self.refresh()

    def refresh(self) -> None:
        """Show the bar with what is true now, or hide it."""
        kept = self.saves.pending() if self.saves is not None else []
        if kept:
            from parley.core.chat.save_queue import reason

            what = "Your last reply is" if len(kept) == 1 else f"{len(kept):,} replies are"
            text = (f"{what} not saved yet: {reason(self.saves.error)}. Parley keeps trying "
                    "and holds new messages until it is saved.")
        else:
            text = self._waiting or self._problem or ""
        if self._silent:
            text = f"{NOT_ANSWERING} {text}".strip()
        if self._read_only is not None:
            text = self._read_only
        self.bar.label.setText(text)
        self.bar.setVisible(bool(text))


def _holder(error: ParleyError) -> str:
    path = getattr(error, "path", None)
    name = Path(path).name if path is not None else "sessions.db"
    return f"another program holds {name} locked"


# -- quitting ------------------------------------------------------------------------
class _Runs(Protocol):
    """The open chat's runs (``parley.gui.chat.run.ChatRuns``)."""

    @property
    def active(self) -> dict[str, Any]: ...

    def lock_waiting(self) -> list[str]: ...

    async def stop_and_wait(self, sid: str, timeout_s: float = 5.0) -> None: ...


class _Chat(Protocol):
    """What quitting uses of the open chat (``parley.gui.chat.controller.ChatController``)."""

    @property
    def drafts(self) -> Drafts: ...

    @property
    def runs(self) -> _Runs: ...

    @property
    def save_status(self) -> SaveStatus: ...

    async def stash_draft(self) -> None: ...


class QuitWindow(Protocol):
    """What the question on quitting uses of the window's state
    (``parley.gui.window.state.WindowState``): the open chat, the run loop's saves, the
    store (where a rescue copy is made from) and the undo bar (says where it went)."""

    @property
    def chat(self) -> _Chat | None: ...

    @property
    def runner(self) -> ChatRunner | None: ...

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def undo(self) -> UndoManager: ...


async def ask_before_quit(state: QuitWindow, window: QWidget) -> bool:
    """Quitting while replies are kept in memory: try once more, then ask.

    Args:
        state: the window's state (module doc).
        window: the window, closing (disabled meanwhile; the questions' parent).

    Returns:
        True to go on closing (all saved, a rescue copy was saved, or the person
        chose to quit without them; also with no chat or store open); False to keep
        Parley open.
    """
    chat, store = state.chat, state.store
    if chat is None or store is None:
        return True
    saves = getattr(state.runner, "saves", None)
    drafts = chat.drafts
    # A message waiting for another program's lock was never saved: it goes back to its
    # chat's box (a draft), so the question below covers it and nothing typed is lost.
    for sid in chat.runs.lock_waiting():
        await chat.runs.stop_and_wait(sid)
    with contextlib.suppress(ParleyError):  # the open chat's draft: refused ones are noted
        await chat.stash_draft()
    if not (saves is not None and saves.pending()) and not await drafts.save_unsaved():
        return True
    # Saving fails now: a reply still streaming would be kept too once stopped (closing
    # stops it), so it is stopped first and the question covers it.
    for sid in list(chat.runs.active):
        await chat.runs.stop_and_wait(sid)
    if await _all_saved(saves, drafts):
        return True
    from parley.gui.database import rescue

    window.setEnabled(True)  # the questions belong to it; they are window-modal
    copy_failed = ""  # why the last rescue copy was not saved, said at the question's top
    while True:
        kept = saves.pending() if saves is not None else []
        drafts_left = await drafts.save_unsaved()
        error = saves.error if saves is not None else None
        choice = await dialogs.ask(
            window, QMessageBox.Icon.Warning, TITLE,
            copy_failed + _question(
                store, kept, error or drafts.error or chat.save_status.last_error,
                len(drafts_left)),
            [("Save a rescue copy…", Role.AcceptRole, SAVE),
             ("Quit without them", Role.DestructiveRole, QUIT),
             ("Keep Parley open", Role.RejectRole, CANCEL)],
            default=SAVE)
        if choice != SAVE:
            if choice == QUIT:
                log.error("closed with %d replies not saved", len(kept))
                window.setEnabled(False)
            return choice == QUIT
        if await _all_saved(saves, drafts):  # saved meanwhile (space was freed)
            window.setEnabled(False)
            return True
        # Not in the data folder: its disk is the one refusing (full, failing).
        dest = await rescue.ask_copy_path(window, store.path,
                                          start=rescue.elsewhere(store.path))
        if dest is None:
            continue
        try:
            copy = await _rescue_copy(store, saves, drafts, dest)
        except ParleyError as exc:
            log.warning("rescue copy: %s", exc.message)
            copy_failed = (f"The rescue copy was not saved. {exc.message}\n\nChoose another "
                           "place for it (another disk), or one of the ways below.\n\n")
            continue
        state.undo.notice(f"Saved a copy of your chats with the unsaved replies as {copy}.")
        log.warning("replies not saved were written into %s", copy)
        window.setEnabled(False)
        return True


async def _all_saved(saves: Any, drafts: Any) -> bool:
    """Try once more to write kept replies and refused drafts; True when all are saved."""
    replies = saves is None or await saves.flush()
    return not await drafts.save_unsaved() and replies


async def _rescue_copy(store: AsyncStore, saves: SaveQueue | None, drafts: Drafts,
                       dest: Path) -> Path:
    """A copy of ``store`` at ``dest``, with the kept replies (``saves``, the run loop's
    ``SaveQueue``; None: none) and the ``drafts`` in it."""
    from parley.gui.database import rescue

    copy = await rescue.save_copy(store, dest)
    if saves is not None:
        await saves.write_into(copy)
    await rescue.record(store, copy, "unsaved")  # offered back at the next start
    try:
        await drafts.save_into(copy)
    except ParleyError as exc:
        log.warning("drafts not written into %s: %s", copy, exc.message)
    return copy


def _question(store: AsyncStore, kept: list[Any], error: ParleyError | None,
              drafts: int) -> str:
    from parley.core.chat.save_queue import reason

    parts = []
    if kept:
        parts.append("your last reply" if len(kept) == 1 else f"{len(kept):,} replies")
    if drafts:
        parts.append("your unsent text" if drafts == 1 else f"the unsent text of {drafts:,} chats")
    what = " and ".join(parts)
    them = "it" if len(kept) + drafts == 1 else "them"
    lost = ("sessions.db then keeps at most the part of a reply written while it arrived, "
            "marked incomplete" if kept else "the unsent text is lost")
    return (f"Not saved yet: {what} ({reason(error)}). Parley still holds {them} and would "
            f"write {them} as soon as {store.path.name} takes it.\n\nSave a rescue "
            f"copy of your chats, with {them}, somewhere else (another disk), keep Parley open "
            f"(and free some space, or close the other program), or quit without {them}: "
            f"{lost}.")
