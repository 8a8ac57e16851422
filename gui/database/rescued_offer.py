"""At start: a rescue copy holding what sessions.db lacks is offered back.

A rescue copy (``parley.core.recovery.rescued``: saved on quitting with replies not
saved yet, or when sessions.db was deleted or replaced while open) may hold whole
replies of which sessions.db has only the cut-off part, or messages it has not at
all. Once the chats show, :func:`offer_rescued` looks for such copies; for each that
holds anything new (a trial merge, rolled back:
``parley.core.importing.parley_file.import_database(dry_run=True)``) the window asks:
bring them back (merged by ids: nothing duplicated, nothing overwritten, a cut-off
reply completed), not now (asked again at the next start), or do not offer this copy
again (the file stays where it is). A copy with nothing new is not asked about again.

Tests answer the question through ``parley.gui.dialogs.answers`` (:data:`BRING`,
:data:`LATER`, :data:`FORGET`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

from parley.core.errors import ParleyError
from parley.gui import dialogs

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.merge import MergeReport
    from parley.gui.chat.controller import ChatController
    from parley.gui.notices.undo import UndoManager

log = logging.getLogger(__name__)

TITLE = "Rescued chats found"
BRING, LATER, FORGET = "bring", "later", "forget"
Role = QMessageBox.ButtonRole
_WHY = {"unsaved": "replies could not be saved in sessions.db as Parley quit",
        "moved": "sessions.db was deleted or replaced while Parley ran"}


class OfferWindow(Protocol):
    """What the offer uses of the window's state (``parley.gui.window.state.WindowState``):
    the store merged into, the open chat (read again), the undo bar (says what came)."""

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def undo(self) -> UndoManager: ...


async def offer_rescued(state: OfferWindow, window: QWidget) -> int:
    """Offer each rescue copy of the open sessions.db that holds something new.

    Args:
        state: the window's state, its chats shown.
        window: the window (the questions' parent).

    Returns:
        How many copies were brought back.
    """
    from parley.core.importing.parley_file import import_database
    from parley.core.recovery import rescued

    store = state.store
    if store is None or store.on_server:
        return 0
    db = store.path
    brought = 0
    for copy in await asyncio.to_thread(rescued.found, db):
        try:
            trial = await import_database(store, copy.path, dry_run=True)
        except (ParleyError, OSError) as exc:
            log.warning("rescue copy %s not offered: %s", copy.path, exc)
            continue
        if not trial.changed:
            await asyncio.to_thread(rescued.handled, db, copy.path)
            continue
        choice = await dialogs.ask(
            window, QMessageBox.Icon.Question, TITLE, _question(copy, trial),
            [("Bring them back", Role.AcceptRole, BRING),
             ("Don't offer this copy again", Role.DestructiveRole, FORGET),
             ("Not now", Role.RejectRole, LATER)],
            default=BRING)
        if choice == FORGET:
            await asyncio.to_thread(rescued.handled, db, copy.path)
        if choice != BRING:
            continue
        try:
            report = await import_database(store, copy.path)
        except (ParleyError, OSError) as exc:
            message = exc.message if isinstance(exc, ParleyError) else str(exc)
            state.undo.notice(f"The rescue copy {copy.path} was not brought back: {message}",
                               15_000)
            continue
        await asyncio.to_thread(rescued.handled, db, copy.path)
        brought += 1
        await _show_again(state.chat, report)
        state.undo.notice(f"Brought back from the rescue copy {copy.path}: "
                           f"{_what(report)}.", 15_000)
    return brought


async def _show_again(chat: ChatController | None, report: MergeReport) -> None:
    """The sidebar and the open chat read again (messages may have come into it)."""
    if chat is None:
        return
    await chat.load_sidebar()
    sid = chat.session_id
    if sid is not None and (report.messages or report.completed):
        await chat.opener.open(sid)


def _what(report: Any) -> str:
    from parley.core.importing.parley_file import report_text

    return report_text(report).rstrip(".")


def _new(trial: Any) -> str:
    """What a trial merge would add: "2 messages and the whole of 1 cut-off reply"."""
    def n(count: int, one: str, many: str) -> str:
        return f"{count:,} {one if count == 1 else many}"

    parts = [n(k, one, many) for k, one, many in (
        (len(trial.chat_ids), "chat", "chats"), (trial.messages, "message", "messages"),
        (trial.files, "attached file", "attached files"),
        (trial.drafts, "unsent message", "unsent messages")) if k]
    if trial.completed:
        parts.append("the whole of " + n(trial.completed, "reply cut off there",
                                         "replies cut off there"))
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] \
        if parts else "a few rows"


def _question(copy: Any, trial: Any) -> str:
    from parley.core.store.sqlite.backups import age_text

    return (f"Parley found a rescue copy of your chats, saved {age_text(copy.made_at)} when "
            f"{_WHY.get(copy.why, _WHY['unsaved'])}:\n\n{copy.path}\n\nIt holds "
            f"{_new(trial)} that sessions.db does not have.\n\nBring them back into "
            "sessions.db? "
            "Nothing there is duplicated or overwritten; a reply cut off there is completed. "
            "The rescue copy stays where it is.")
