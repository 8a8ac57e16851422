"""Saving a copy of sessions.db from the window: File ▸ Save a copy now…, and on closing.

When sessions.db is deleted, moved or replaced while Parley has it open, the
store refuses every write (``parley.core.store.sqlite.faults``) and its message promises a
copy beside the old name when Parley closes. The store's own close saves one
but can only log a failure, after which the deleted file is gone. So the
window saves the copy itself before anything is closed
(:func:`rescue_before_close`): beside the old name, its folder made again if
it was deleted too. If even that fails, it says why and asks: save the copy
elsewhere (a Save dialog), quit without a copy, or keep Parley open. Either
way the drafts typed this run go into the copy
(:meth:`parley.gui.composer.drafts.Drafts.save_into`),
and the person is told where the copy is.

:func:`save_copy_now` is the menu command: ask where, copy, say where.

Every question is window-modal but not a nested event loop (the reply being
streamed and the store's thread carry on). Tests answer them through
``parley.gui.dialogs.answers``: a choice (:data:`SAVE`, :data:`QUIT`, :data:`CANCEL`)
for a question, a path (or None) for the Save dialog.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

from parley.core.errors import ParleyError
from parley.core.store.errors import DatabaseReplaced, RescueFailed
from parley.core.store.sqlite import faults
from parley.gui import dialogs

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.composer.drafts import Drafts
    from parley.gui.notices.undo import UndoManager

log = logging.getLogger(__name__)

SAVE, QUIT, CANCEL = "save", "quit", "cancel"
Role = QMessageBox.ButtonRole
TITLE = "Save your chats"


class _WithDrafts(Protocol):
    """The open chat (``parley.gui.chat.controller.ChatController``): its drafts."""

    @property
    def drafts(self) -> Drafts: ...


class DraftsWindow(Protocol):
    """Whose drafts go into a copy: the window's state, its open chat."""

    @property
    def chat(self) -> _WithDrafts | None: ...


class RescueWindow(DraftsWindow, Protocol):
    """What saving a copy uses of the window's state
    (``parley.gui.window.state.WindowState``): the store, the open chat's drafts, the
    undo bar that says where the copy went and the tasks (whose ``on_user_error`` is the
    window's ``show_problem``)."""

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def undo(self) -> UndoManager: ...

    @property
    def tasks(self) -> TaskSet: ...


async def save_copy(store: AsyncStore, dest: Path | None = None) -> Path:
    """Copy everything the open store reads to a new file (works when its file was deleted).

    Args:
        store: the window's open store.
        dest: the new file; None: ``<name>.rescued-<time>`` beside sessions.db, its
            folder made again when it was deleted. Never replaces a file.

    Returns:
        The copy: a complete sessions.db.

    Raises:
        RescueFailed: the copy could not be written (folder, permission, disk
            full, a file of that name); no partial file is left.
        StoreClosed: the store was closed.
    """
    target = dest or store.path.with_name(f"{store.path.name}.rescued")
    try:
        if dest is None:
            target = await asyncio.to_thread(faults.rescue_name, store.path)
        copy: Path = await store.backup_to(target)
    except (OSError, sqlite3.Error) as exc:
        raise RescueFailed.of(target, exc) from exc
    return copy


async def record(store: AsyncStore, copy: Path, why: str) -> None:
    """Note the rescue copy of ``store`` so the next start finds it
    (``parley.core.recovery.rescued``): offered back, or pointed to when sessions.db is
    missing. Best effort (logged)."""
    from parley.core.recovery import rescued

    if store.on_server:  # not a file: nothing is looked for at the next start
        return
    where = await asyncio.to_thread(rescued.record, store.path, copy,
                                    "moved" if why == "moved" else "unsaved")
    if where is None:
        log.warning("the rescue copy %s was not recorded; import it with "
                    "parley --import", copy)


async def save_copy_now(state: RescueWindow, window: QWidget) -> Path | None:
    """File ▸ Save a copy now…: ask where, save a copy with this run's drafts, say where.

    Args:
        state: the window's state (its store, drafts, undo bar, tasks).
        window: the window (the Save dialog's parent).

    Returns:
        The copy, or None when cancelled or when it could not be saved (then
        the problem is shown).
    """
    store = state.store
    if store is None:
        return None
    dest = await ask_copy_path(window, store.path)
    if dest is None:
        return None
    try:
        copy = await save_copy(store, dest)
    except ParleyError as exc:
        state.tasks.on_user_error(exc)  # the window's show_problem
        return None
    drafts, _ok = await _drafts_into(state, copy)
    state.undo.notice(f"Saved a copy of your chats as {copy}{drafts}.")
    return copy


async def rescue_before_close(state: DraftsWindow, store: AsyncStore, window: QWidget,
                              moved: ParleyError) -> bool:
    """sessions.db moved while open: save the promised copy before the window closes.

    Args:
        state: the window's state (the open chat's drafts go into the copy).
        store: its open store, whose file moved.
        window: the main window, closing (disabled meanwhile; the questions' parent).
        moved: the ``DatabaseMissing`` / ``DatabaseReplaced`` its last write met.

    Returns:
        True to go on closing (a copy was saved, or the person chose to quit
        without one); False when the person chose to keep Parley open.
    """
    log.warning("closing: %s", moved.message)
    try:
        copy = await save_copy(store)
    except RescueFailed as exc:
        log.warning("closing: %s", exc.message)
        window.setEnabled(True)  # the questions belong to it; they are window-modal
        chosen = await _copy_elsewhere(store, window, moved, exc)
        if not isinstance(chosen, Path):
            if chosen == QUIT:
                log.error("closed without a copy of the moved %s", store.path)
                window.setEnabled(False)
            return chosen == QUIT
        copy = chosen
    log.warning("the moved %s was saved as %s", store.path, copy)
    drafts, drafts_ok = await _drafts_into(state, copy)
    await record(store, copy, "moved")
    window.setEnabled(True)
    answer = await dialogs.ask(window, QMessageBox.Icon.Information, TITLE,
                       _saved_text(store.path, moved, copy, drafts, drafts_ok),
                       [("Quit", Role.AcceptRole, QUIT)] if drafts_ok else
                       [("Quit", Role.DestructiveRole, QUIT),
                        ("Keep Parley open", Role.RejectRole, CANCEL)],
                       default=QUIT if drafts_ok else CANCEL)
    if answer == QUIT:
        window.setEnabled(False)
    return answer == QUIT


async def _copy_elsewhere(store: AsyncStore, window: QWidget, moved: ParleyError,
                          failed: RescueFailed) -> Path | str:
    """Ask until a copy is saved elsewhere (its path), or QUIT / CANCEL is chosen."""
    while True:
        choice = await dialogs.ask(window, QMessageBox.Icon.Warning, TITLE,
                           _failed_text(store.path, moved, failed),
                           [("Save a copy…", Role.AcceptRole, SAVE),
                            ("Quit without a copy", Role.DestructiveRole, QUIT),
                            ("Keep Parley open", Role.RejectRole, CANCEL)],
                           default=SAVE)
        if choice != SAVE:
            return choice
        dest = await ask_copy_path(window, store.path)
        if dest is None:
            continue
        try:
            return await save_copy(store, dest)
        except RescueFailed as exc:
            log.warning("closing: %s", exc.message)
            failed = exc


async def _drafts_into(state: DraftsWindow, copy: Path) -> tuple[str, bool]:
    """Write this run's drafts into ``copy``: (a phrase for the person, whether it worked)."""
    drafts = state.chat.drafts if state.chat is not None else None
    if drafts is None:
        return "", True
    try:
        count = await drafts.save_into(copy)
    except ParleyError as exc:
        log.warning("drafts not written into %s: %s", copy, exc.message)
        return f", but not your unsent text ({exc.message})", False
    if count == 0:
        return "", True
    return (", with your unsent message" if count == 1
            else f", with your {count:,} unsent messages"), True


def _moved_sentence(path: Path, moved: ParleyError) -> str:
    if isinstance(moved, DatabaseReplaced):
        return f"{path} was replaced by another file while Parley was running"
    return f"{path} was deleted or moved while Parley was running"


def _saved_text(path: Path, moved: ParleyError, copy: Path, drafts: str, ok: bool) -> str:
    if isinstance(moved, DatabaseReplaced):
        after = (f"The file now named {path.name} was left as it is. To go on with the chats "
                 f"of this window instead, rename the copy to {path.name} while Parley is "
                 "closed.")
    else:
        after = (f"To go on with these chats, rename the copy to {path.name} before you "
                 "start Parley again.")
    text = (f"{_moved_sentence(path, moved)}. Parley saved everything it held as a "
            f"copy{drafts}:\n\n{copy}\n\n{after}")
    if not ok:
        text += ("\n\nKeep Parley open to copy your unsent text from the message box before "
                 "you quit.")
    return text


def _failed_text(path: Path, moved: ParleyError, failed: RescueFailed) -> str:
    return (f"{_moved_sentence(path, moved)}, and the copy Parley promised could not be "
            f"saved as {failed.dest}: {failed.reason}.\n\nEverything is still in Parley "
            "while it stays open. Save the copy somewhere else, or keep Parley open (and put "
            f"{path.name} back). Quit without a copy only if you still have the file "
            "elsewhere: otherwise the chats Parley holds are lost when it closes.")


# -- dialogs ------------------------------------------------------------------------
def elsewhere(db_path: Path) -> Path:
    """A folder for a rescue copy away from sessions.db's disk when there is one: the
    first of ``~/Documents`` and ``~`` on another file system than sessions.db's folder,
    else ``~/Documents`` (or ``~`` when it has none)."""
    home = Path.home()
    choices = [p for p in (home / "Documents", home) if p.is_dir()] or [home]
    try:
        here = next(p for p in (db_path, *db_path.parents) if p.exists()).stat().st_dev
        return next((p for p in choices if p.stat().st_dev != here), choices[0])
    except (OSError, StopIteration):
        return choices[0]


async def ask_copy_path(window: QWidget, db_path: Path,
                        start: Path | None = None) -> Path | None:
    """Ask where to save a copy of the chats (a Save dialog); None when cancelled.

    Starts in ``start``, else in sessions.db's folder (or the nearest one that
    still exists), with ``sessions-copy-<time>.db``. A test answers through
    ``parley.gui.dialogs.answers``.
    """
    if dialogs.answers:
        answer = dialogs.answers.popleft()
        return Path(answer) if answer else None
    folder = start if start is not None and start.is_dir() else \
        next((p for p in db_path.parents if p.is_dir()), Path.home())
    return await dialogs.ask_new_db_file(
        window, "Save a copy of your chats", folder,
        f"sessions-copy-{time.strftime('%Y%m%d-%H%M%S')}.db")
