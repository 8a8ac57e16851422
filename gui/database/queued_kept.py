"""Messages queued behind a reply when sessions.db is found damaged: back in the message box.

A message written while a reply streams is queued (``parley.gui.chat.queue``): saved in
sessions.db and sent after the reply. When the file is found damaged meanwhile, the
recovery that follows (a backup, a salvage, a new file) may or may not bring those rows
back, and the window that held them is closed. So they go where the message that met the
damage goes (``recovery_page.keep_message``): to ``typed-at-start.txt``, after the message
box's text, first queued first, each followed by a line naming its files
(:func:`block`). Which messages they were (ids, chats, files) is written beside it, to
:data:`FILE_NAME`.

When the chats open again (this window's successor, or the next start), before that text
goes back into the box, :func:`bring_back` takes each of them from the recovered file's
queue, so none comes back twice (once in the box, once queued in its chat): a message the
recovered file still holds gives its files back to the tray (their line then leaves the
text); one it lost keeps the line saying which files it had.

The same file names the chat whose message box text was kept (its draft key,
``box_draft``): the recovered file's saved draft of that chat is older than that text
(a backup's, or the last one saved before the damage), so it does not come back
beside it (:func:`bring_back` returns the key; ``TypedAtStart.restore`` leaves it out).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from parley.core.app_state import DRAFT
from parley.core.errors import ParleyError
from parley.core.private import write_private_text
from parley.core.store.queued import QueuedMessage
from parley.gui.composer.drafts import NEW, draft_key
from parley.gui.startup.typed_at_start import TypedWindow

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.gui.chat.controller import ChatController
    from parley.gui.startup.typed_at_start import TypedAtStart

log = logging.getLogger(__name__)


class KeptWindow(TypedWindow, Protocol):
    """What :func:`put_back` uses of the window (``parley.gui.window.state.WindowState``):
    its message box and start-up (``TypedWindow``), and the notice told once the chats
    show."""

    pending_notice: str | None

#: In the data folder, beside ``typed-at-start.txt``: the queued messages written there.
FILE_NAME = "typed-at-start-queued.json"


def files_line(names: Sequence[str]) -> str:
    """The line after a kept queued message naming its files ('' when none):
    "[it had photo.png attached]", "[it had 2 files attached: a.png, b.pdf]"."""
    if not names:
        return ""
    if len(names) == 1:
        return f"[it had {names[0]} attached]"
    return f"[it had {len(names)} files attached: {', '.join(names)}]"


def block(text: str, names: Sequence[str]) -> str:
    """A kept queued message as ``typed-at-start.txt`` holds it: its text, then
    :func:`files_line` on a line of its own when it had files."""
    line = files_line(names)
    return "\n".join(p for p in (text.strip(), line) if p)


def texts(messages: Sequence[QueuedMessage]) -> list[str]:
    """The blocks (:func:`block`) of ``messages``, in order, empty ones left out."""
    found = [block(m.text, [f.name for f in m.files]) for m in messages]
    return [t for t in found if t]


def _path(folder: Path) -> Path:
    return folder / FILE_NAME


def _data(folder: Path) -> dict[str, Any]:
    """What :data:`FILE_NAME` in ``folder`` holds ({} when none or unreadable)."""
    try:
        data = json.loads(_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def box_draft(folder: Path) -> str | None:
    """The draft key (``parley.gui.composer.drafts.draft_key``) of the chat whose message
    box text was kept, as listed in ``folder`` (None when none was)."""
    key = _data(folder).get("box_draft")
    return key if isinstance(key, str) and key else None


def kept_chat(typed: TypedAtStart) -> str | None:
    """The chat the text kept in ``typed`` was written in, to be shown when the chats open
    (trial 20: it came back into the box of whichever chat the recovered file reopened,
    and was saved as that chat's draft): the chat whose box text was kept, else the chat
    of the first queued message kept.

    Returns:
        Its id ('' for a new chat that had no session yet), or None when ``typed`` holds
        no text an earlier run kept after a damage (the last chat opens as usual).
    """
    if not typed.before():
        return None
    folder = typed.path.parent
    box = box_draft(folder)
    if box is not None and box.startswith(DRAFT.name):
        sid = box[len(DRAFT.name):]
        return "" if sid == NEW else sid
    queued = read(folder)
    return queued[0]["session_id"] if queued else None


def read(folder: Path) -> list[dict[str, Any]]:
    """The kept queued messages listed in ``folder`` ([] when none or unreadable): each
    ``{"id", "session_id", "text", "files": [name, …]}``."""
    items = _data(folder).get("queued")
    if not isinstance(items, list):
        return []
    return [e for e in items if isinstance(e, dict) and isinstance(e.get("id"), str)
            and isinstance(e.get("session_id"), str)]


def write(folder: Path, messages: Sequence[QueuedMessage], box: str | None = None) -> bool:
    """List ``messages`` in ``folder`` (after those an earlier run listed), privately,
    and the chat whose message box text was kept.

    Args:
        folder: the data folder.
        messages: the queued messages kept (after the box's text).
        box: the draft key of the chat whose box text was kept (None: the box was
            empty; an earlier run's stays).

    Returns:
        True when written (or nothing to write); False when it could not be (logged).
    """
    if not messages and box is None:
        return True
    had = read(folder)
    known = {e["id"] for e in had}
    entries = had + [{"id": m.id, "session_id": m.session_id, "text": m.text,
                      "files": [f.name for f in m.files]}
                     for m in messages if m.id not in known]
    data: dict[str, Any] = {"queued": entries}
    box = box or box_draft(folder)
    if box is not None:
        data["box_draft"] = box
    path = _path(folder)
    try:
        tmp = path.with_name(path.name + ".tmp")
        write_private_text(tmp, json.dumps(data, ensure_ascii=False))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not list the queued messages kept in %s: %s", path, exc)
        return False
    return True


def _block_of(entry: dict[str, Any]) -> str:
    """What ``typed-at-start.txt`` holds of a listed message (:func:`block`)."""
    return block(str(entry.get("text") or ""), [str(n) for n in entry.get("files") or []])


async def bring_back(store: AsyncStore, typed: TypedAtStart, queue: Any,
                     attachments: Any) -> str | None:
    """The chats are open after a damaged sessions.db: the kept queued messages leave
    the recovered file's queue (their text comes back into the box from ``typed``);
    those whose words ``typed`` no longer holds stay queued.

    Args:
        store: the recovered file, open.
        typed: ``typed-at-start.txt`` (its text is put back into the box after this).
        queue: the window's queues (``ChatQueue``): told to forget them.
        attachments: the open chat's tray (``Attachments.add_bytes``): the files of a
            message the recovered file still holds come back there.

    Returns:
        The draft key of the chat whose box text ``typed`` holds (:func:`box_draft`),
        or None.
    """
    folder = typed.path.parent
    box = box_draft(folder)
    # Only those whose words the kept text still holds (not a file deleted or emptied
    # meanwhile): the others stay in their chat's queue, if the recovered file has them.
    kept = typed.before()
    entries = [e for e in read(folder)
               if _block_of(e) in kept]  # '' (the one edited in the box): always
    queue.forget({e["id"] for e in entries})  # before any read of a queue lists them
    held: dict[str, dict[str, QueuedMessage]] = {}
    for entry in entries:
        sid = entry["session_id"]
        try:
            if sid not in held:
                held[sid] = {m.id: m for m in await store.queued_messages(sid)}
        except ParleyError as exc:
            log.warning("could not read the queue of chat %s: %s", sid, exc.message)
            held[sid] = {}
        message = held[sid].get(entry["id"])
        if message is None:  # the recovered file lost it: the box has its text
            continue
        try:
            files = [(f.name, await store.queued_file(f.sha256)) for f in message.files]
        except ParleyError as exc:  # its files stay named in the text
            log.warning("the files of kept queued message %s: %s", message.id, exc.message)
            files = []
        try:
            await store.take_queued(message.id)  # in the box now: not in its chat's queue
        except ParleyError as exc:  # a read-only file: this window never lists it (forget)
            log.warning("could not take kept queued message %s: %s", message.id, exc.message)
        if files:
            for name, data in files:
                attachments.add_bytes(data, name)
            typed.replace(_block_of(entry), block(str(entry.get("text") or ""), []))
    try:
        _path(folder).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("could not remove %s: %s", _path(folder), exc)
    return box


#: Said after the chats open when the chat the kept text was written in is not in the
#: recovered file (a backup made before it, a new file): it is in a new chat's box.
NOT_IN_FILE = ("The chat you were writing in is not in the recovered file (it was made "
               "after the backup), so what you were writing is in a new chat's message box.")


async def put_back(window: KeptWindow, store: AsyncStore, typed: TypedAtStart,
                   chat: ChatController, wanted: str | None) -> None:
    """The chats are open (on the chat :func:`kept_chat` named, when the file holds it):
    the kept queued messages leave their queues (:func:`bring_back`), and the kept text
    goes back into the box, the chat's older saved draft left out; when that chat is not
    in the file, the window's notice says the text is in a new chat's box.

    Args:
        window: the window (its message box, ``pending_notice``).
        store: the recovered file, open.
        typed: ``typed-at-start.txt``.
        chat: the open chat's controller (its queue, tray, drafts and session).
        wanted: :func:`kept_chat`, read before the chats opened.
    """
    box = await bring_back(store, typed, chat.runs.queue, chat.attachments)
    # The box's text kept then is newer than its chat's draft in the recovered file (a
    # backup's, or the last saved before the damage): that one goes.
    stale = await chat.drafts.stored(chat.session_id) \
        if box == draft_key(chat.session_id) else ""
    if typed.before() and wanted and chat.session_id != wanted:
        told = window.pending_notice
        window.pending_notice = f"{told} {NOT_IN_FILE}" if told else NOT_IN_FILE
    typed.restore(window, stale=stale)
