"""Changes another Parley made to the same PostgreSQL database, shown without a restart.

When the chats are on a server (``--database``), :class:`Elsewhere` subscribes to
the store's change feed (``AsyncStore.watch_changes``: PostgreSQL ``LISTEN``/
``NOTIFY``). Changes are gathered for :data:`DELAY_S` (a reply streaming on the
other computer sends several a second), then the sidebar's list is read again
and, when the open chat was changed and is not running a reply here, its turns
too. While a reply streams here, the open chat is not read again (the streaming
reply is shown from memory); changes to it that arrive meanwhile are remembered
and the chat is read again once, when the run ends (:meth:`Elsewhere.run_ended`).
The composer, its draft and edit mode are left as they are. This Parley's
own writes are not reported back (the feed leaves them out).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat

log = logging.getLogger(__name__)

#: Seconds changes are gathered before the window shows them.
DELAY_S = 0.3
#: Stands for "anything may have changed" (the feed reconnected, or spaces changed).
EVERYTHING = "*"


class Elsewhere:
    """Shows other Parleys' changes in one window (module docstring).

    Args:
        store: the window's store (on a PostgreSQL server; nothing is heard otherwise).
        chat: the window's open chat (its sidebar and turns are read again).
        tasks: the window's background tasks (the reading again runs there).
    """

    def __init__(self, store: AsyncStore, chat: OpenChat, tasks: TaskSet) -> None:
        self.store, self.chat, self.tasks = store, chat, tasks
        self.feed: Any = None
        self._pending: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._missed: set[str] = set()  # chats changed while running a reply here

    async def start(self) -> None:
        """Subscribe (nothing to do for a sessions.db file)."""
        self.feed = await self.store.watch_changes(self.changed)

    def changed(self, change: Any) -> None:
        """A change another Parley committed (``parley.core.store.postgres.changes.Change``)."""
        self._pending.add(change.session_id if change.table in ("turns", "sessions")
                          and change.session_id else EVERYTHING)
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(DELAY_S, self._flush)

    def _flush(self) -> None:
        self._timer = None
        ids, self._pending = self._pending, set()
        self.tasks.spawn(self._show(ids), name="changed-elsewhere")

    async def _show(self, ids: set[str]) -> None:
        chat = self.chat
        if self.store.closed:
            return
        await chat.load_sidebar()
        sid = chat.session_id
        if sid is not None and (sid in ids or EVERYTHING in ids):
            if chat.runs.running(sid):
                self._missed.add(sid)  # read again when the run ends (run_ended)
            else:
                await chat.opener.reload()

    def run_ended(self, session_id: str) -> None:
        """A run of ``session_id`` here ended: if another Parley changed that chat during
        it, read the chat again now (once), when it is the one shown."""
        if session_id not in self._missed:
            return
        self._missed.discard(session_id)
        if self.chat.session_id == session_id:
            self.tasks.spawn(self._reload(session_id), name="changed-elsewhere")

    async def _reload(self, session_id: str) -> None:
        chat = self.chat
        if self.store.closed:
            return
        if chat.session_id == session_id and not chat.runs.running(session_id):
            await chat.opener.reload()

    def close(self) -> None:
        """Stop showing changes (the feed itself closes with the store)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
