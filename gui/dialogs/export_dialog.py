"""Export a chat to a file; what File ▸ Import shares with it.

Export formats (``parley.core.export``): Markdown to read, Parley JSON to keep
everything, Anthropic messages JSON and OpenAI chat messages JSON to reuse
the conversation elsewhere. The Save dialog's file type picks the format.
Import (``parley.gui.dialogs.import_dialog``) reads these files back; both say what a
format could not carry (:func:`lost_note`), start their file dialog in the folder of the
last file (:func:`last_folder`) and take the tests' scripted :data:`answers`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QFileDialog, QWidget

from parley.core.errors import ParleyError

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.chat.controller import ChatController
    from parley.gui.notices.undo import UndoManager

#: Scripted answers for the next file dialogs (tests): ``(fmt, path)`` for a save,
#: a path for an open, None for "cancelled".
answers: deque[Any] = deque()

#: (format, filter label) in the order the Save dialog lists them.
EXPORT_FILTERS: tuple[tuple[str, str], ...] = (
    ("markdown", "Markdown (*.md)"),
    ("parley", "Parley conversation (*.parley.json)"),
    ("anthropic", "Anthropic messages JSON (*.anthropic.json *.json)"),
    ("openai", "OpenAI chat messages JSON (*.openai.json *.json)"),
)


class CannotWriteFile(ParleyError):
    """The export could not be written where the person chose."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"Parley could not write {path}: {why}. The chat itself is unchanged; "
                         "choose another folder or file name.")


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote: the file and what the format could not carry."""

    path: Path
    fmt: str
    lost: list[str]


def ask_export_target(parent: QWidget | None, suggested: str,
                      folder: Path | None = None) -> tuple[str, Path] | None:
    """Ask where to save and in which format; None when cancelled.

    Args:
        parent: the main window.
        suggested: a file name (the Markdown one); its ending follows the format.
        folder: where the dialog starts (default: the home folder).
    """
    if answers:
        answer = answers.popleft()
        return (answer[0], Path(answer[1])) if answer else None
    dlg = QFileDialog(parent, "Export chat")
    dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dlg.setNameFilters([label for _f, label in EXPORT_FILTERS])
    dlg.setDirectory(str(folder or Path.home()))
    dlg.selectFile(suggested)
    if not dlg.exec():
        return None
    fmt = next(f for f, label in EXPORT_FILTERS if label == dlg.selectedNameFilter())
    return fmt, Path(dlg.selectedFiles()[0])


def with_ending(path: Path, fmt: str) -> Path:
    """``path`` with the format's ending when it has none of its own (``chat`` → ``chat.md``)."""
    from parley.core.export import FORMATS

    ending = FORMATS[fmt][0]
    name = path.name
    if name.endswith(ending) or (fmt != "markdown" and name.endswith(".json")):
        return path
    if fmt == "markdown" and name.endswith(".markdown"):
        return path
    return path.with_name(name + ending)


async def export_to_file(store: Any, session_id: str, fmt: str, path: Path) -> Exported:
    """Export a chat and write it (UTF-8) to ``path``.

    Raises:
        SessionNotFound: the chat is gone.
        CannotWriteFile: the file could not be written.
    """
    from parley.core.export import export_session
    from parley.core.private import write_private_text

    result = await export_session(store, session_id, fmt)  # type: ignore[arg-type]
    target = with_ending(path, fmt)
    try:
        await asyncio.to_thread(write_private_text, target, result.text)
    except OSError as exc:
        raise CannotWriteFile(target, exc.strerror or str(exc)) from exc
    return Exported(target, fmt, list(result.lost))


def lost_note(lost: list[str]) -> str:
    """One line about what a format left out ('' when nothing)."""
    return (" Left out: " + " ".join(lost)) if lost else ""


class FilesWindow(Protocol):
    """Where the export and import dialogs start: the window's state's ``files_folder``
    (``parley.gui.window.state.WindowState``)."""

    files_folder: Path | None


class ExportWindow(FilesWindow, Protocol):
    """What exporting uses of the window's state: the open chat, the store, the undo bar
    (says where the file went), the tasks it runs in."""

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def undo(self) -> UndoManager: ...

    @property
    def tasks(self) -> TaskSet: ...


def export_chat(state: ExportWindow, window: QWidget, session_id: str | None = None) -> bool:
    """Ask where and in which format, then export a chat (default: the open one of
    ``window``, whose state is ``state``; ``window`` is the dialogs' parent).

    Returns False when there is no chat or the person cancelled. The result
    (file name, what the format left out) shows as a notice; errors reach the
    window's problem display.
    """
    from parley.core.export import suggested_filename

    chat, store = state.chat, state.store
    sid = session_id or (chat.session_id if chat else None)
    if chat is None or sid is None or store is None:
        return False
    session = chat.sessions.get(sid)
    title = session.title if session else None
    target = ask_export_target(window, suggested_filename(title, "markdown"),
                               last_folder(state))
    if target is None:
        return False
    remember_folder(state, target[1])

    async def go() -> None:
        done = await export_to_file(store, sid, *target)
        state.undo.notice(f"Exported to {done.path.name}.{lost_note(done.lost)}")

    state.tasks.spawn(go(), name="export")
    return True


def last_folder(window: FilesWindow) -> Path | None:
    """The folder of the last file exported or imported in this window (None: home)."""
    folder = getattr(window, "files_folder", None)
    return folder if isinstance(folder, Path) and folder.is_dir() else None


def remember_folder(window: FilesWindow, path: Path) -> None:
    """The next export or import dialog starts where this file is."""
    window.files_folder = path.parent
