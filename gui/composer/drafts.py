"""Drafts: what was typed but not sent, kept per chat across switches and restarts.

Each chat's draft lives in memory while Parley runs and in the store's
``app_state`` under ``draft:<session id>`` (``draft:new`` for a new chat that
has no session yet), written a moment after typing stops, at least once a
second while typing goes on (``parley.gui.composer.draft_timer``), and at every
switch or close. An empty draft deletes the key. Sending a message forgets its draft
(:meth:`Drafts.sent`) but never what was typed in the box after Enter.

A draft written while a sent message is edited (``parley.gui.chat.edit.ChatEditor``)
is stored as ``{"text": ..., "edits": <turn id>}`` so that it comes back in edit
mode after a restart; a plain draft is stored as its text alone (as before), and
both load.

A draft longer than any model can read (``parley.core.context.text_limits``) is never
written: it could not be sent, and a 53 MB draft in sessions.db slowed every
later start. The composer refuses a paste that would make one; a longer draft
stored by an older Parley is cut to the limit when it is loaded.

When sessions.db was deleted or replaced while open, the store refuses every
write (``parley.core.store.sqlite.faults``), so drafts stay in memory only; the window then
writes them into the copy it saves (:meth:`Drafts.save_into`, called by
``parley.gui.database.rescue``), so no unsent text is lost with the store.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from parley.core.app_state import DRAFT
from parley.core.chat.save_queue import PASSING
from parley.core.context.text_limits import max_text_chars
from parley.core.store.errors import StoreError

log = logging.getLogger(__name__)

NEW = "new"


def draft_key(session_id: str | None) -> str:
    """The app_state key of a chat's draft (``draft:new`` for a new chat)."""
    return DRAFT.key(session_id or NEW)


class Drafts:
    """Drafts of every chat (key None = the new chat), backed by an ``AsyncStore``."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._texts: dict[str | None, str] = {}
        #: the turn each chat's draft edits (absent: a plain draft)
        self._edits: dict[str | None, str] = {}
        #: chats whose draft the store refused last time for a passing reason (disk
        #: full, file locked…: ``parley.core.chat.save_queue.PASSING``); a moved file is
        # ``parley.gui.database.rescue``'s
        self.unsaved: set[str | None] = set()
        self.error: StoreError | None = None  # why, the last time

    def typed(self, session_id: str | None, text: str) -> None:
        """Remember what the composer holds for a chat (saved by :meth:`save`)."""
        self._texts[session_id] = text

    def typed_text(self, session_id: str | None) -> str:
        """What the composer held for a chat as last told (:meth:`typed`; '' when not
        told this run)."""
        return self._texts.get(session_id) or ""

    def mark_edit(self, session_id: str | None, turn_id: str | None) -> None:
        """The chat's draft now edits the turn ``turn_id`` (None: it is a plain draft);
        written with the text by :meth:`save`."""
        if turn_id is None:
            self._edits.pop(session_id, None)
        else:
            self._edits[session_id] = turn_id

    def edit_of(self, session_id: str | None) -> str | None:
        """The id of the turn a chat's draft edits (None: a plain draft), as known
        after :meth:`load` or :meth:`mark_edit`."""
        return self._edits.get(session_id)

    def keep_unsent(self, session_id: str | None, text: str) -> None:
        """A message of a chat not shown came back unsent: it becomes the chat's draft
        (unless one was typed since), to be written by :meth:`save_unsaved`."""
        if not self._texts.get(session_id):
            self._texts[session_id] = text
            self._edits.pop(session_id, None)
            self.unsaved.add(session_id)

    async def load(self, session_id: str | None) -> str:
        """Return a chat's draft ('' when none): memory first, then the store.

        A stored edit draft (``{"text", "edits"}``) gives its text; the turn it edits
        is then :meth:`edit_of`.
        """
        if session_id in self._texts:
            return self._texts[session_id]
        stored = await DRAFT.get(self.store, session_id or NEW)
        text, edits = _parse(stored)
        self.mark_edit(session_id, edits if text else None)
        if not text:
            return ""
        limit = max_text_chars()
        if len(text) > limit:  # stored by an older Parley: what could ever be sent
            log.warning("draft of %s cut from %d to %d characters", session_id, len(text), limit)
            text = text[:limit]
        return text

    async def stored(self, session_id: str | None) -> str:
        """A chat's draft as the store holds it ('' when none), whatever was typed this
        run (:meth:`load` gives what was typed first)."""
        text, _edits = _parse(await DRAFT.get(self.store, session_id or NEW))
        return text

    async def save(self, session_id: str | None) -> None:
        """Write a chat's draft to the store, if it was typed this run.

        Raises:
            StoreError: the store refused a non-empty draft (a passing refusal is
                noted in :attr:`unsaved` for :meth:`save_unsaved`); an empty one
                refused for a passing reason is only noted.
        """
        text = self._texts.get(session_id)
        if text is not None and len(text) > max_text_chars():
            log.warning("draft of %s not saved: %d characters", session_id, len(text))
            return  # never stored: no model could read it (the composer said so)
        if text is not None:
            try:
                await DRAFT.set(self.store, self._stored(session_id), session_id or NEW)
            except PASSING as exc:  # disk full, file locked…: asked about on quitting
                self.unsaved.add(session_id)
                self.error = exc
                if not text:  # an emptied box (a message sent): nothing typed is at stake
                    log.info("empty draft of %s not written yet: %s", session_id, exc.message)
                    return
                raise
            self.unsaved.discard(session_id)

    async def keep(self, session_id: str | None, text: str) -> None:
        """Add ``text`` to a chat's draft (after what it holds, a blank line between)
        and write it now: text typed for that chat while it was not in view.

        Raises:
            StoreError: as :meth:`save`.
        """
        had = await self.load(session_id)
        self.typed(session_id, f"{had.rstrip()}\n\n{text}" if had.strip() else text)
        await self.save(session_id)

    async def save_unsaved(self) -> list[str | None]:
        """Try again to write the drafts the store refused; returns the chats whose
        non-empty draft is still not saved."""
        left = []
        for session_id in list(self.unsaved):
            try:
                await self.save(session_id)
            except StoreError:
                if self._texts.get(session_id):
                    left.append(session_id)
        return left

    async def sent(self, session_id: str | None) -> None:
        """A chat's message was sent (or queued) from the box, which the send emptied
        (:meth:`typed` with ``''``): the draft stored before goes, unless something was
        typed in the box since (right after Enter, while the message was being saved or
        its reply streams): that text is the chat's draft now, and is written instead.

        Called once the message is saved or about to be (a task of its own), so text
        typed between Enter and this call is never erased by it.

        Raises:
            StoreError: as :meth:`discard` (an emptied box); a typed draft the store
                refuses is only noted (:attr:`unsaved`): the timed save of that typing
                says so.
        """
        if not self._texts.get(session_id):
            await self.discard(session_id)
            return
        try:
            await self.save(session_id)
        except StoreError as exc:
            log.info("draft of %s typed after sending not written yet: %s", session_id, exc)

    async def discard(self, session_id: str | None) -> None:
        """Forget a chat's draft (it was sent, or the chat deleted).

        A store that refuses the write for a passing reason (``PASSING``: locked,
        disk full) does not fail it: the draft is forgotten in memory and the empty
        draft written by a later :meth:`save_unsaved`.

        Raises:
            StoreError: another store failure (a damaged or moved file).
        """
        self._texts.pop(session_id, None)
        self._edits.pop(session_id, None)
        self.unsaved.discard(session_id)
        try:
            await DRAFT.set(self.store, None, session_id or NEW)
        except PASSING as exc:  # locked, disk full…: forgotten by a later save, quietly
            # Nothing typed is at stake (it was sent): no message. An empty draft is
            # written by the next save_unsaved() unless a new one was typed meanwhile.
            log.info("sent draft of %s not forgotten yet: %s", session_id, exc.message)
            self._texts.setdefault(session_id, "")
            self.unsaved.add(session_id)
            self.error = exc

    async def save_into(self, copy: Path) -> int:
        """Write every draft typed this run into another sessions.db (a copy of the store).

        Used when the store itself refuses writes (its file was deleted or
        replaced while open): the copy then holds the unsent text too, under
        the same keys, and Parley shows it when that copy is opened. The copy
        is opened and closed off the GUI thread.

        Args:
            copy: a complete sessions.db (``parley.core.store.sqlite.faults.copy_open_database``).

        Returns:
            How many non-empty drafts it now holds from this run.

        Raises:
            StoreError: the copy could not be opened or written (e.g.
                ``CannotOpen``, ``DiskFull``); the drafts stay in memory.
        """
        texts = {draft_key(sid): self._stored(sid) for sid in self._texts}
        if not texts:
            return 0
        await asyncio.to_thread(_write_state, copy, texts)
        return sum(1 for text in texts.values() if text)

    def _stored(self, session_id: str | None) -> str | dict[str, str] | None:
        """A chat's draft as written in app_state: None when empty, its text, or
        ``{"text", "edits"}`` while it edits a sent message."""
        text = self._texts.get(session_id)
        if not text:
            return None
        edits = self._edits.get(session_id)
        return {"text": text, "edits": edits} if edits else text


def _parse(stored: object) -> tuple[str, str | None]:
    """A stored draft as ``(text, id of the turn it edits or None)``: a string (a plain
    draft, as every Parley wrote it before edit drafts) or ``{"text", "edits"}``;
    anything else reads as no draft."""
    if isinstance(stored, str):
        return stored, None
    if isinstance(stored, dict) and isinstance(stored.get("text"), str):
        edits = stored.get("edits")
        return stored["text"], edits if isinstance(edits, str) and edits else None
    return "", None


def _write_state(path: Path, values: dict[str, Any]) -> None:
    """Set ``app_state`` keys in the sessions.db at ``path`` (one transaction per key)."""
    from parley.core.store.store import Store  # SQLAlchemy: not imported at start-up

    with Store.open(path) as store:
        for key, value in values.items():
            store.set_state(key, value)
