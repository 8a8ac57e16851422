"""File ▸ Import: a chat history (many chats) or one conversation, with progress and a summary.

Import reads chat histories (ChatGPT, Claude.ai, Open WebUI exports), Parley's own
exports (JSON or Markdown) and Anthropic / OpenAI messages, and refuses, with its reason, a
file that is none of these; nothing is written then. The file is read by
``parley.core.importing.files.import_path``. While it is read and written a progress
dialog shows how many conversations are in (after a short delay, so a single chat does
not flash one); Cancel rolls the import back: nothing is imported. One conversation
opens as a new chat of the open space with a short notice. A history goes to the default
space, as ``parley --import`` puts it (the summary says so when another space is open),
and shows its summary's one line ("412 chats, 9,310 messages, 3 other branches from a
ChatGPT export; 2 files left out (2 not in the export).") in a dialog the person
closes, with Details… listing every file left out (``parley.gui.dialogs.import_summary``),
and the sidebar lists the new chats.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QWidget

from parley.core.errors import ParleyError
from parley.gui.dialogs.export_dialog import (
    ExportWindow,
    answers,
    last_folder,
    lost_note,
    remember_folder,
)
from parley.gui.dialogs.import_summary import ImportSummaryDialog

#: Milliseconds before the progress dialog shows (a small file is done before).
SHOW_AFTER_MS = 300
IMPORT_FILTER = ("Conversations and chat histories (*.json *.zip *.md *.markdown);;"
                 "All files (*)")


class CannotReadFile(ParleyError):
    """The file chosen for import cannot be read."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"Parley could not read {path}: {why}. Nothing was imported.")


class ImportRefused(ParleyError):
    """A file chosen for import was refused; the message names the file, so a list of
    several refusals (``parley.gui.dialogs.problem_box``) says which is which.

    Attributes:
        cause: the error the importer raised.
    """

    def __init__(self, path: Path, cause: ParleyError) -> None:
        text = cause.message
        super().__init__(text if path.name in text else f"{path.name}: {text}")
        self.cause = cause


class ImportProgress(QObject):
    """A progress dialog for one import, fed from the store's thread.

    Attributes:
        dialog: the ``QProgressDialog`` (object name ``import-progress``).
        cancel_asked: set when the person pressed Cancel (read on the store's thread).
    """

    #: (done, total) conversations written; emitted on the GUI thread.
    advanced = Signal(int, int)

    def __init__(self, parent: QWidget, name: str) -> None:
        super().__init__(parent)
        self.cancel_asked = threading.Event()
        self.dialog = QProgressDialog(f"Reading {name}…", "Cancel", 0, 0, parent)
        self.dialog.setObjectName("import-progress")
        self.dialog.setWindowTitle("Importing")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(SHOW_AFTER_MS)
        self.dialog.setMinimumWidth(400)  # the label names the file and counts
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.canceled.connect(self._cancel)
        self.advanced.connect(self._show)
        self._loop = asyncio.get_running_loop()  # made inside the import's task

    def _cancel(self) -> None:
        self.cancel_asked.set()
        self.dialog.setLabelText("Cancelling… nothing will be imported.")

    def _show(self, done: int, total: int) -> None:
        if self.cancel_asked.is_set():
            return
        self.dialog.setMaximum(total)
        self.dialog.setValue(done)
        self.dialog.setLabelText(f"Importing conversation {done:,} of {total:,}…")

    def progress(self, done: int, total: int) -> None:
        """``parley.core.importing.files``'s progress callback (store thread): shown on the GUI."""
        if done == total or done % 10 == 1:
            self._loop.call_soon_threadsafe(self.advanced.emit, done, total)

    def cancelled(self) -> bool:
        """``parley.core.importing.files``'s cancel check (store thread)."""
        return self.cancel_asked.is_set()

    def close(self) -> None:
        """Close the dialog (the import ended one way or another)."""
        self.dialog.canceled.disconnect(self._cancel)
        self.dialog.reset()
        self.dialog.close()
        self.dialog.deleteLater()
        self.deleteLater()


def ask_import_source(parent: QWidget | None, folder: Path | None = None) -> Path | None:
    """Ask for a conversation file to import; None when cancelled."""
    if answers:
        answer = answers.popleft()
        return Path(answer) if answer else None
    name, _ = QFileDialog.getOpenFileName(parent, "Import chats or a conversation",
                                          str(folder or Path.home()), IMPORT_FILTER)
    return Path(name) if name else None


class ImportWindow(ExportWindow, Protocol):
    """What importing uses of the window's state (``parley.gui.window.state.WindowState``):
    what exporting does, and where the progress of the import under way is kept."""

    import_progress: ImportProgress | None


def import_chat(state: ImportWindow, window: QWidget) -> bool:
    """Ask for a file and import it: one conversation opens as a new chat of the open
    space; a chat history (ChatGPT, Claude.ai, Open WebUI) imports into the default space,
    as ``parley --import`` does, with a progress dialog and a summary (``window``, whose
    state is ``state``, is the dialogs' parent). False when the person cancelled (or
    chats are not shown yet)."""
    chat = state.chat
    if chat is None:
        return False
    path = ask_import_source(window, last_folder(state))
    if path is None:
        return False
    remember_folder(state, path)
    start_import(state, window, path, chat.space_id)
    return True


def start_import(state: ImportWindow, window: QWidget, path: Path,
                 space_id: str | None) -> None:
    """Import ``path`` as a task of ``state`` (see the module docstring): one conversation
    into ``space_id``, a chat history into the default space.

    Errors (a refused file, one that cannot be read) reach the window's problem
    display; a cancel is said in a notice.
    """
    state.tasks.spawn(_run(state, window, path, space_id), name="import")


async def _run(state: ImportWindow, window: QWidget, path: Path, space_id: str | None) -> None:
    from parley.core.convert.errors import NotAConversation
    from parley.core.importing.files import import_path
    from parley.core.store.imports import ImportCancelled

    chat, store = state.chat, state.store
    if chat is None or store is None:  # import_chat checked: the chats are shown
        return
    progress = ImportProgress(window, path.name)
    state.import_progress = progress  # tests and a second import see it
    try:
        summary = await import_path(store, path, single_space_id=space_id,
                                    progress=progress.progress, cancelled=progress.cancelled)
    except ImportCancelled as exc:
        state.undo.notice(exc.message)
        return
    except OSError as exc:
        raise CannotReadFile(path, exc.strerror or str(exc)) from exc
    except NotAConversation as exc:  # a refusal: named, so that several are told apart
        raise ImportRefused(path, exc) from exc
    finally:
        progress.close()
        state.import_progress = None
    if summary.single is not None:
        result = summary.single
        chat.calls.show_chat()  # the window's (WindowPages.show_chat)
        await chat.opener.show_fork(result.session)
        n = result.turns_imported
        state.undo.notice(f"Imported {n} message{'s' if n != 1 else ''} "
                           f"from {summary.format_name}.{lost_note(result.lost)}")
        return
    await chat.load_sidebar()
    merged = summary.merged  # a Parley database: messages may have come into the open chat
    if merged is not None and (merged.messages or merged.completed) \
            and chat.session_id is not None:
        await chat.opener.open(chat.session_id)
    line = summary.line(path.name)
    if merged is None and summary.chats:  # a history: in the default space, said when
        default = next((s for s in chat.organizer.spaces.values() if s.is_default), None)
        if default is not None and default.id != chat.space_id:  # another space is open
            line += f" The chats are in the space “{default.name}”."
    box = ImportSummaryDialog(line, summary.details(), window)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()


def list_imported(state: ExportWindow) -> None:
    """``parley --import`` wrote chats into this window's sessions.db: list them (the
    sidebar is read again; a window still at set-up reads it when it gets there)."""
    chat = getattr(state, "chat", None)
    if chat is None or getattr(state, "store", None) is None:
        return
    state.tasks.spawn(chat.load_sidebar(), name="sidebar-after-import")
    state.undo.notice("Chats imported from the command line are listed now.")
