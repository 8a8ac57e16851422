"""Files attached in the composer and not sent yet, per chat.

:class:`ChatAttachments` takes files from the Attach dialog (Ctrl+O, the +
button), from drops on the composer or the chat page, and from the
clipboard (a pasted screenshot becomes "Pasted image.png"). Each is read,
recognised and checked against the limits of the provider of the chat's
model off the GUI thread (``parley.core.attachments.files``, ``parley.core.attachments.limits``);
meanwhile the tray shows it as "Reading file…". An image over a limit is
offered for downscaling (:func:`ask_downscale`); any other refusal is shown
in words naming the file (``window.show_problem``) and nothing is added.

Pending files belong to the chat they were attached in (a new chat has its
own list, as it has its own draft); switching chats switches the tray.
Sending takes them (:meth:`ChatAttachments.take`); a send that fails
before its run started gives them back (:meth:`ChatAttachments.give_back`).
Pending files live in memory only: they are stored (once per content, by
``parley.core.store.attachments``) when the message is sent.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from parley.core.attachments.files import (
    AttachmentError,
    AttachmentTooLarge,
    MediaNotAccepted,
    size_text,
)
from parley.core.attachments.limits import MediaLimits, check, fit, limits_for
from parley.core.content import Block, ImageBlock
from parley.core.errors import ParleyError
from parley.gui import dialogs
from parley.gui.composer.attach_tray import TrayItem
from parley.gui.composer.attach_work import files_of, finish, read_source
from parley.gui.composer.widget import DropTarget
from parley.gui.dialogs import problem_box
from parley.gui.dialogs.problem_batch import ProblemBatch, SeveralProblems

if TYPE_CHECKING:
    from parley.core.attachments.files import Attachment
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.chat.parts import ChatParts, WindowCalls

log = logging.getLogger(__name__)

PASTED_NAME = "Pasted image.png"
STATUS_MS = 10_000
#: The end of a refusal at send time: the file stays in the tray.
STILL_ATTACHED = "It is still attached: remove it (×) to send your message without it."
DIALOG_FILTERS = ";;".join((
    "All files (*)",
    "Images (*.png *.jpg *.jpeg *.gif *.webp)",
    "PDF documents (*.pdf)",
    "Text and code (*.txt *.md *.markdown *.rst *.csv *.tsv *.json *.jsonl *.yaml *.yml "
    "*.toml *.ini *.cfg *.xml *.html *.css *.js *.ts *.tsx *.jsx *.py *.rs *.go *.java *.kt "
    "*.c *.h *.cpp *.hpp *.cs *.rb *.php *.swift *.sh *.sql *.log *.tex)",
))


# -- questions (module-level so tests can answer them) --------------------------------
def choose_files(parent: QWidget | None, folder: Path | None = None) -> list[str]:
    """Ask for files to attach (several at once); [] when cancelled.

    A test answers through ``parley.gui.dialogs.answers`` (a list of paths, or None).
    """
    if dialogs.answers:
        answer = dialogs.answers.popleft()
        return [str(p) for p in answer] if answer else []
    names, _ = QFileDialog.getOpenFileNames(parent, "Attach files",
                                            str(folder or Path.home()), DIALOG_FILTERS)
    return list(names)


async def ask_downscale(parent: QWidget | None, error: AttachmentTooLarge) -> bool:
    """Offer to downscale an image over a provider's limit: True for "Make smaller".

    Window-modal but not a nested event loop (the run loop and the reading
    of other files carry on). A test answers through ``parley.gui.dialogs.answers``
    (True / False) or replaces this function.
    """
    if dialogs.answers:
        return bool(dialogs.answers.popleft())
    question = (f"“{error.name}” is too large: {error.problem}.\n\nMake a smaller copy to "
                "fit? Parley scales it down, or re-encodes it (as JPEG when that is what "
                "fits), and says which. The file on your disk is not changed.")
    choice = await dialogs.ask(
        parent, QMessageBox.Icon.Question, "Image too large", question,
        [("Make smaller", QMessageBox.ButtonRole.AcceptRole, "downscale"),
         ("Cancel", QMessageBox.ButtonRole.RejectRole, "cancel")], default="downscale")
    return choice == "downscale"


def fitted_words(name: str, att: Attachment) -> str:
    """The status line after an image was made to fit: what changed (``att.note``), and
    the name it is now attached under when its type changed ("bigpic.png" → "bigpic.jpg")."""
    renamed = f" It is attached as “{att.name}”." if att.name != name else ""
    return f"“{name}” was {att.note}.{renamed}"


# -- pending files ---------------------------------------------------------------------
_keys = count(1)


@dataclass(eq=False)
class Pending:
    """A file in a chat's tray: being read (``attachment`` None) or ready.

    Attributes:
        name: the file name shown.
        attachment: the file read, recognised and fitted to the limits.
        thumbnail: PNG bytes of the tray's picture (images).
        sha256: the id the store will keep the bytes under (same file twice → same id).
        key: unique among pending files (the tray's ``remove_requested`` carries it).
        status: what the tray says while it is not ready ("Reading file…",
            "Downscaling…").
    """

    name: str
    attachment: Attachment | None = None
    thumbnail: bytes | None = None
    sha256: str = ""
    key: int = field(default_factory=lambda: next(_keys))
    status: str = "Reading file…"

    @property
    def ready(self) -> bool:
        return self.attachment is not None

    def tray_item(self) -> TrayItem:
        """What the tray shows for it."""
        att = self.attachment
        if att is None:
            return TrayItem(self.key, self.name, "reading", self.status)
        size = size_text(len(att.data))
        if att.kind == "image":
            fmt = att.media_type.split("/")[-1].upper()
            detail = f"{fmt} image · {att.width}×{att.height} px · {size}"
            return TrayItem(self.key, att.name, "image", detail, self.thumbnail, att.note)
        if att.kind == "document":
            pages = f"{att.pages} page{'s' if att.pages != 1 else ''} · " if att.pages else ""
            return TrayItem(self.key, att.name, "document", f"PDF · {pages}{size}")
        text = att.text or ""
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        plural = "line" if lines == 1 else "lines"
        return TrayItem(self.key, att.name, "text", f"Text · {lines:,} {plural} · {size}")


@dataclass(frozen=True)
class Taken:
    """Files taken from a chat's tray to be sent.

    Attributes:
        chat: the session id they belong to (None: the new chat).
        items: the pending files, in tray order.
    """

    chat: str | None
    items: tuple[Pending, ...] = ()

    @property
    def blocks(self) -> list[Block]:
        """Their content blocks, in order: image, document, or text with the file name."""
        return [p.attachment.to_block() for p in self.items if p.attachment is not None]


class ChatAttachments:
    """The pending files of one window's chats (see the module docstring).

    Args:
        chat: the window's :class:`~parley.gui.chat.controller.ChatController`.
        parts: the window's parts (the message box and its bar and tray, the chat page
            files are dropped on, the status bar, the background tasks).
        calls: the window's ``show_problem`` and ``ready``.
    """

    def __init__(self, chat: OpenChat, parts: ChatParts, calls: WindowCalls) -> None:
        self.composer, self.composer_bar, self.status = parts.composer, parts.composer_bar, \
            parts.status
        self.tasks, self.parent = parts.tasks, parts.parent
        self.show_problem, self.ready = calls.show_problem, calls.ready
        self.chat = chat
        self._lists: dict[str | None, list[Pending]] = {}
        self._before_edit: tuple[str | None, list[Pending]] | None = None
        self._folder: Path | None = None
        bar = parts.composer_bar
        bar.files_given.connect(self.add_paths)
        bar.image_given.connect(self.add_image)
        bar.attach_clicked.connect(self.open_dialog)
        bar.tray.remove_requested.connect(self.remove)
        # Files refused together (a drop of several) are told in one dialog.
        self.refusals = ProblemBatch(self._tell, "{n} files were not attached:", parts.parent)
        # One dialog at a time: refusals wait while a "Make smaller?" question is open, a
        # question waits for the problem dialog to close (one hid the other's text).
        self._asking = 0
        self._held: list[ParleyError] = []
        # Files dropped on the transcript (anywhere on the chat page) are attached too.
        self.page_drop = DropTarget(parts.chat_page, self.add_paths, self.add_image,
                                    highlight=bar.frame)

    # -- what is pending --------------------------------------------------------------
    def pending(self) -> list[Pending]:
        """The files pending in the open chat, in tray order."""
        return list(self._lists.get(self.chat.session_id, []))

    def has_pending(self) -> bool:
        """True when the open chat has files in its tray (read or being read)."""
        return bool(self._lists.get(self.chat.session_id))

    def refresh(self) -> None:
        """Show the open chat's pending files (after a switch of chat)."""
        items = self._lists.get(self.chat.session_id, [])
        self.composer_bar.tray.set_items([p.tray_item() for p in items])

    def remove(self, key: int) -> None:
        """Take a file out of the open chat's message (its ✕ button)."""
        items = self._lists.get(self.chat.session_id, [])
        self._lists[self.chat.session_id] = [p for p in items if p.key != key]
        self.refresh()
        if not self._lists[self.chat.session_id]:
            self.composer.setFocus()

    def _list_of(self, entry: Pending) -> list[Pending] | None:
        return next((lst for lst in self._lists.values() if any(p is entry for p in lst)), None)

    def _forget(self, entry: Pending) -> None:
        lst = self._list_of(entry)
        if lst is not None:
            lst[:] = [p for p in lst if p is not entry]
            self.refresh()

    def _tell(self, error: ParleyError) -> None:
        """Show refusals, or hold them while a question is open (:meth:`_ask`)."""
        if self._asking:
            self._held.append(error)
        else:
            self.show_problem(error)

    async def _ask(self, error: AttachmentTooLarge) -> bool:
        """Ask :func:`ask_downscale` once no problem dialog is open; then show the
        refusals that came meanwhile."""
        await problem_box.closed(self.parent)
        self._asking += 1
        try:
            return await _answer(ask_downscale(self.parent, error))
        finally:
            self._asking -= 1
            if not self._asking and self._held:
                held, self._held = self._held, []
                self.show_problem(held[0] if len(held) == 1 else SeveralProblems(
                    f"{len(held)} files were not attached:", held))

    # -- adding -----------------------------------------------------------------------
    def open_dialog(self) -> bool:
        """Ctrl+O / the + button: choose files and attach them."""
        paths = choose_files(self.parent, self._folder)
        if paths:
            self._folder = Path(paths[0]).parent
            self.add_paths(paths)
        self.composer.setFocus()
        return True

    def add_paths(self, paths: Iterable[str | Path]) -> None:
        """Attach files from disk to the open chat's message (read in the background)."""
        for path in paths:
            self._add(Path(path).name or str(path), Path(path))

    def add_bytes(self, data: bytes, name: str) -> None:
        """Attach a file's bytes (a dropped or pasted file) named ``name``."""
        self._add(name, data)

    def add_image(self, image: QImage) -> None:
        """Attach a pasted or dropped image as "Pasted image.png"."""
        self._add(PASTED_NAME, QImage(image))

    def _add(self, name: str, source: Path | bytes | QImage) -> None:
        entry = Pending(name)
        self._lists.setdefault(self.chat.session_id, []).append(entry)
        self.refresh()
        self.chat.runs.activity(self.chat.session_id)
        self.tasks.spawn(self._load(entry, source), name="attach")

    async def _load(self, entry: Pending, source: Path | bytes | QImage) -> None:
        try:
            read = await asyncio.to_thread(read_source, source, entry.name)
            att = await self._within_limits(entry, read)
        except AttachmentError as exc:
            if self._list_of(entry) is not None:  # not removed by the person meanwhile
                self._forget(entry)
                self.refusals.add(exc)
            return
        except BaseException:
            self._forget(entry)
            raise
        if att is None:
            self._forget(entry)
            self._status(f"“{entry.name}” was not attached.")
            return
        sha, thumb = await asyncio.to_thread(finish, att)
        lst = self._list_of(entry)
        if lst is None:
            return  # removed while being read
        if any(p.sha256 == sha for p in lst if p.ready):
            self._forget(entry)
            self._status(f"“{att.name}” is already attached.")
            return
        if att.note:
            self._status(fitted_words(entry.name, att))
        entry.name, entry.attachment, entry.thumbnail, entry.sha256 = att.name, att, thumb, sha
        self.refresh()

    # -- editing a sent message ---------------------------------------------------------
    def begin_edit(self, blocks: Iterable[Block]) -> None:
        """A sent message is being edited: the tray shows its files (removable) instead of
        the files pending for the next message, which :meth:`end_edit` brings back."""
        self.begin_edit_files(files_of(blocks))

    def begin_edit_files(self, files: Iterable[tuple[str, bytes]]) -> None:
        """A message is being edited (sent, or queued): the tray shows ``files`` ((name,
        bytes), read again) instead of the files pending for the next message, which
        :meth:`end_edit` brings back."""
        sid = self.chat.session_id
        self._before_edit = (sid, self._lists.pop(sid, []))
        for name, data in files:
            self.add_bytes(data, name)
        self.refresh()

    def end_edit(self) -> None:
        """The edit was sent (its files taken) or cancelled: the tray holds again the
        files pending before it."""
        if self._before_edit is None:
            return
        sid, before = self._before_edit
        self._before_edit = None
        self._lists[sid] = before
        self.refresh()

    # -- limits -----------------------------------------------------------------------
    def limits(self, model_ref: str | None = None) -> MediaLimits | None:
        """The limits of the provider that will get the message (None: not known yet:
        while Parley starts its adapter is prepared in a worker thread, and is not
        imported here, on the GUI thread)."""
        ref = model_ref or self.chat.current_model()
        hub = self.chat.hub
        if ref is None or hub is None:
            return None
        try:
            if not self.ready() and not hub.is_prepared(ref):  # checked when it is sent
                return None
            provider, _model = hub.resolve(ref)
        except ParleyError:
            return None
        return limits_for(provider.caps.kind)

    def _side_limit(self, limits: MediaLimits, extra: int = 0) -> int | None:
        """The tighter side limit once a request holds many images, else None."""
        if limits.many_images is None:
            return None
        sent = sum(isinstance(b, ImageBlock) for t in self.chat.turns for b in t.blocks)
        waiting = sum(1 for p in self._lists.get(self.chat.session_id, [])
                      if p.attachment is not None and p.attachment.kind == "image")
        return limits.many_images_side_px if sent + waiting + extra > limits.many_images \
            else None

    async def _within_limits(self, entry: Pending, att: Attachment) -> Attachment | None:
        """``att`` as the provider takes it: checked, or downscaled when the person agrees.

        Returns None when downscaling was declined (or the file was removed meanwhile).
        Raises AttachmentError: over a limit that downscaling cannot fix, or refused.
        """
        limits = self.limits()
        if limits is None:
            return att  # the run loop checks again before sending
        side = self._side_limit(limits, 1 if att.kind == "image" else 0)
        try:
            check(att, limits, max_side_px=side)
            return att
        except AttachmentTooLarge as exc:
            if not exc.can_downscale or self._list_of(entry) is None:
                raise
            if not await self._ask(exc):
                return None
        entry.status = "Downscaling…"
        self.refresh()
        return await asyncio.to_thread(fit, att, limits, max_side_px=side)

    # -- sending ----------------------------------------------------------------------
    def ready_to_send(self, model_ref: str) -> bool:
        """Whether the open chat's files can go to ``model_ref`` as they are.

        False (and the person is told why) while a file is still being read,
        or when one is over the model's limits (a model picked after it was
        attached): an image is offered for downscaling, the rest is refused
        in words; the files stay in the tray.
        """
        items = self._lists.get(self.chat.session_id, [])
        reading = next((p for p in items if not p.ready), None)
        if reading is not None:
            self._status(f"Still reading “{reading.name}”: send again in a moment.")
            return False
        limits = self.limits(model_ref)
        if limits is None or not items:
            return True
        side = self._side_limit(limits)
        for p in items:
            assert p.attachment is not None
            try:
                check(p.attachment, limits, max_side_px=side)
            except AttachmentTooLarge as exc:
                if exc.can_downscale:
                    self.tasks.spawn(self._downscale(p, exc, limits, side), name="downscale")
                else:
                    self.show_problem(AttachmentTooLarge(
                        p.name, exc.problem, can_downscale=False, advice="",
                        outcome=STILL_ATTACHED))
                return False
            except MediaNotAccepted as exc:
                self.show_problem(MediaNotAccepted(p.name, exc.provider, exc.what,
                                                     STILL_ATTACHED))
                return False
        return True

    async def _downscale(self, entry: Pending, error: AttachmentTooLarge, limits: MediaLimits,
                         side: int | None) -> None:
        """A pending image is over the limits of the model now picked: offer to shrink it."""
        asked = AttachmentTooLarge(entry.name, error.problem, can_downscale=True, advice="",
                                   outcome="Your message was not sent yet.")
        if not await self._ask(asked):
            self._status(f"Remove “{entry.name}” (×) or pick another model to send.")
            return
        assert entry.attachment is not None
        fitted = await asyncio.to_thread(fit, entry.attachment, limits, max_side_px=side)
        sha, _thumb = await asyncio.to_thread(finish, fitted, thumbnail=False)
        if self._list_of(entry) is None:
            return
        words = fitted_words(entry.name, fitted)
        entry.name, entry.attachment, entry.sha256 = fitted.name, fitted, sha
        self.refresh()
        self._status(f"{words} Press Enter to send.")

    def take(self) -> Taken:
        """Take the open chat's ready files for sending (the tray empties)."""
        key = self.chat.session_id
        items = self._lists.get(key, [])
        taken = tuple(p for p in items if p.ready)
        self._lists[key] = [p for p in items if not p.ready]
        self.refresh()
        return Taken(key, taken)

    def give_back(self, taken: Taken) -> None:
        """A send failed before its run started: its files go back to their chat's tray."""
        if not taken.items:
            return
        lst = self._lists.setdefault(taken.chat, [])
        lst[:0] = [p for p in taken.items if all(q is not p for q in lst)]
        self.refresh()

    def moved(self, old: str | None, new: str) -> None:
        """A new chat got its session (``old`` None → ``new``): its pending files follow."""
        if old != new and old in self._lists:
            self._lists.setdefault(new, [])[:0] = self._lists.pop(old)
            self.refresh()

    def _status(self, text: str) -> None:
        self.status.showMessage(text, STATUS_MS)


async def _answer(answer: Awaitable[bool] | bool) -> bool:
    """An answer from :func:`ask_downscale` (or a test's plain function)."""
    return bool(await answer) if inspect.isawaitable(answer) else bool(answer)

