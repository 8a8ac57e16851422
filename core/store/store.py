"""The session store: one sessions.db file behind one synchronous API.

:class:`Store` is a facade over the repositories (``spaces``, ``sessions``,
``turns``, ``forks``, ``compactions``, ``search``, ``settings_repo``): each
public method is one transaction — a write either happens whole or not at all
— and raises only :class:`parley.core.store.errors.StoreError` subclasses for
conditions a user can act on. A Store is thread-confined: use it from one
thread at a time (:class:`parley.core.store.async_store.AsyncStore` gives it a thread
of its own).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from parley.core.store import queued, search, settings_repo
from parley.core.store.errors import StoreClosed
from parley.core.store.models import SearchHit
from parley.core.store.queued import NewFile, QueuedMessage
from parley.core.store.schema import app_state
from parley.core.store.schema import settings as settings_table
from parley.core.store.store_chats import ChatsStore
from parley.core.store.store_space_documents import SpaceDocumentsStore
from parley.core.store.store_turns import TurnsStore

__all__ = ["QueuedMessage", "Store", "StoreClosed"]


class Store(ChatsStore, TurnsStore, SpaceDocumentsStore):
    """Parley's sessions, turns, spaces, search index and settings in one SQLite file.

    Open with :meth:`Store.open` (see :class:`parley.core.store.lifecycle.StoreBase`).
    Chats (spaces, sessions, forks, imports) are
    :class:`~parley.core.store.store_chats.ChatsStore`'s methods, their turns (attachments,
    compactions, transcript windows) :class:`~parley.core.store.store_turns.TurnsStore`'s,
    a space's documents
    :class:`~parley.core.store.store_space_documents.SpaceDocumentsStore`'s;
    search, queued messages, settings and app state are here.
    """

    # --- search ----------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        space_id: str | None = None,
        limit: int = 50,
        exclude_session_ids: Collection[str] = (),
    ) -> list[SearchHit]:
        """Full-text search over turns and session titles, best match first.

        Args:
            query: what the user typed (not FTS syntax; see :mod:`parley.core.store.search`).
            session_id: only this session's turns and title.
            space_id: only sessions of this space (ignored when ``session_id`` is given).
            limit: at most this many hits (counted after copies are collapsed).
            exclude_session_ids: sessions left out, as if deleted (e.g. a delete
                that can still be undone): their hits and copies never count.

        Returns:
            Hits ranked by bm25 (titles weigh 4× body text) among every matching
            title and the newest 2000 matching turns — or, when a word of the
            query is common (in over 20,000 rows), matching titles then turns,
            newest first (rank 0.0). Each has a snippet whose matches are
            wrapped in ``\\x02`` … ``\\x03``. One hit per message: outside a
            one-session search, a message copied into forks is one hit in the
            chat where it was written (or the oldest surviving copy), its
            ``fork_copies`` counting the other copies. [] for an empty query.
            Takes a few ms to a few tens of ms on 1M turns.

        Raises:
            InvalidSearchQuery: nothing searchable in the query, or it is too long.
        """
        return self._r(
            lambda c: search.search(c, query, session_id, space_id, limit, exclude_session_ids)
        )

    # --- messages queued while a reply streams ---------------------------------

    def queue_message(self, session_id: str, text: str,
                      files: Sequence[NewFile] = ()) -> QueuedMessage:
        """Queue ``text`` (with ``files``, their bytes stored now) to be sent in a chat
        after what is queued there already.

        Returns:
            The saved message, last of its chat's queue.

        Raises:
            SessionNotFound: no such chat.
            ValueError: ``text`` is blank and there are no files (a bug in the caller).
        """
        return self._w(lambda c: queued.add(c, session_id, text, files))

    def queued_messages(self, session_id: str) -> list[QueuedMessage]:
        """A chat's queued messages in the order they are to be sent ([] when none)."""
        return self._r(lambda c: queued.list_for(c, session_id))

    def queued_sessions(self) -> dict[str, int]:
        """``{session id: number of queued messages}`` of the chats that have some."""
        return self._r(queued.sessions_with)

    def queued_file(self, sha256: str) -> bytes:
        """The bytes of a queued message's file (:attr:`QueuedFile.sha256`).

        Raises:
            AttachmentNotFound: no file is stored under ``sha256``.
        """
        return self._r(lambda c: queued.file_data(c, sha256))

    def edit_queued(self, message_id: str, text: str,
                    files: Sequence[NewFile] | None = None) -> QueuedMessage:
        """Change a queued message's text, and its files unless ``files`` is None (it
        keeps its place; files no longer used by anything are deleted).

        Raises:
            QueuedMessageNotFound: it was sent or taken back meanwhile.
            ValueError: ``text`` is blank and it has no files.
        """
        return self._w(lambda c: queued.edit(c, message_id, text, files))

    def take_queued(self, message_id: str) -> QueuedMessage | None:
        """Remove a queued message (it is being sent, or was taken back); returns it, or
        None when it was already gone. A chat's deletion removes its queue with it."""
        return self._w(lambda c: queued.take(c, message_id))

    # --- settings and app state ------------------------------------------------

    def get_setting(self, key: str, default: Any = None) -> Any:
        """Return a setting's JSON value, or ``default`` when unset."""
        return self._r(lambda c: settings_repo.get(c, settings_table, key, default))

    def set_setting(self, key: str, value: Any) -> None:
        """Store a setting (JSON-serializable; None removes it). TypeError/ValueError otherwise."""
        settings_repo.encode(value)
        self._w(lambda c: settings_repo.put(c, settings_table, key, value))

    def all_settings(self) -> dict[str, Any]:
        """Return every stored setting as ``{key: value}``."""
        return self._r(lambda c: settings_repo.get_all(c, settings_table))

    def get_state(self, key: str, default: Any = None) -> Any:
        """Return an app-state value (window geometry, last session, …), or ``default``."""
        return self._r(lambda c: settings_repo.get(c, app_state, key, default))

    def set_state(self, key: str, value: Any) -> None:
        """Store an app-state value (JSON-serializable; None removes it).

        A file opened read-only (:attr:`read_only`) keeps none: the window's place, the
        chat last open, drafts… are what the person did not ask to save, and the window
        already says nothing can be saved; nothing is raised for them."""
        settings_repo.encode(value)
        if self.read_only is not None:
            return
        self._w(lambda c: settings_repo.put(c, app_state, key, value))
