"""The store's API for chats: spaces, sessions, forks, imported histories.

Part of :class:`parley.core.store.store.Store` (which see: one transaction per method,
errors, thread confinement); the turns of a chat are :mod:`parley.core.store.store_turns`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy.engine import Connection

from parley.core.content import Usage
from parley.core.store import forks, imports, merge, sessions, spaces
from parley.core.store.lifecycle import StoreBase
from parley.core.store.models import UNCHANGED, Session, Space, TitleSource, Unchanged
from parley.core.store.schema import DEFAULT_SPACE_ID


class ChatsStore(StoreBase):
    """Spaces, sessions (chats and their forks), imports: one transaction each."""

    # --- spaces ----------------------------------------------------------------

    def default_space(self) -> Space:
        """Return the default space ("General" unless renamed; never deleted)."""
        return self._r(lambda c: spaces.get(c, DEFAULT_SPACE_ID))

    def get_space(self, space_id: str) -> Space:
        """Return one space. Raises SpaceNotFound."""
        return self._r(lambda c: spaces.get(c, space_id))

    def create_space(
        self, name: str, *, system_prompt: str | None = None, default_model: str | None = None
    ) -> Space:
        """Create a space, placed last. Raises EmptyName for a blank name,
        SpaceNameTaken for a name another space has (trimmed, any case)."""
        return self._w(lambda c: spaces.create(c, name, system_prompt, default_model))

    def rename_space(self, space_id: str, name: str) -> Space:
        """Rename a space. Raises SpaceNotFound, EmptyName, SpaceNameTaken (another
        space has that name, trimmed, any case)."""
        return self._w(lambda c: spaces.rename(c, space_id, name))

    def update_space(
        self,
        space_id: str,
        *,
        system_prompt: str | None | Unchanged = UNCHANGED,
        default_model: str | None | Unchanged = UNCHANGED,
    ) -> Space:
        """Change a space's defaults for new sessions (UNCHANGED keeps, None clears).

        Raises SpaceNotFound.
        """
        return self._w(lambda c: spaces.update_defaults(c, space_id, system_prompt, default_model))

    def list_spaces(self) -> list[Space]:
        """Return every space by position (the default space included)."""
        return self._r(spaces.list_all)

    def reorder_spaces(self, ids: list[str]) -> list[Space]:
        """Set the order of spaces. ``ids`` must list every space once (InvalidSpaceOrder)."""
        return self._w(lambda c: spaces.reorder(c, list(ids)))

    def delete_space(self, space_id: str, *, delete_sessions: bool = False) -> None:
        """Delete a space; its sessions move to the default space, or are deleted.

        Raises:
            CannotDeleteDefaultSpace: ``space_id`` is the default space.
            SpaceNotFound: no such space.
        """
        self._w(lambda c: spaces.delete_space(c, space_id, delete_sessions))

    # --- sessions --------------------------------------------------------------

    def create_session(
        self,
        *,
        space_id: str | None = None,
        title: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
    ) -> Session:
        """Create an empty session (in the default space when ``space_id`` is None).

        ``model`` and ``system_prompt`` default to the space's. A given title is
        a user title. Raises SpaceNotFound.
        """
        return self._w(lambda c: sessions.create(c, space_id, title, model, system_prompt))

    def get_session(self, session_id: str) -> Session:
        """Return one session. Raises SessionNotFound."""
        return self._r(lambda c: sessions.get(c, session_id))

    def list_sessions(
        self,
        *,
        space_id: str | None = None,
        include_archived: bool = False,
        limit: int = 200,
        offset: int = 0,
        pinned_first: bool = True,
    ) -> list[Session]:
        """Return a page of sessions, newest activity first (pinned ones first).

        ``space_id`` None lists every space. Forks are listed like any session
        (their ``parent_session_id`` tells where to nest them); a chat's branches
        (edits, regenerations) are inside it (:meth:`branches`), never sessions.
        """
        return self._r(
            lambda c: sessions.list_page(c, space_id, include_archived, limit, offset, pinned_first)
        )

    def session_position(self, session_id: str, *, include_archived: bool = False) -> int | None:
        """How many sessions come before this one in its space's list
        (:meth:`list_sessions` with ``pinned_first``): its offset there. None when it is
        archived and ``include_archived`` is False. Raises SessionNotFound."""
        return self._r(lambda c: sessions.position(c, session_id, include_archived))

    def first_pages(
        self, space_ids: Sequence[str], *, include_archived: bool = False, limit: int = 200
    ) -> dict[str, list[Session]]:
        """The first page of each space's sessions (:meth:`list_sessions` with ``offset``
        0, pinned first), read in one transaction: ``{space id: sessions}``, one entry
        per id given (an unknown space's is empty). The sidebar lists every space so at
        start-up: one trip to the store's thread instead of one a space."""
        return self._r(lambda c: {
            sid: sessions.list_page(c, sid, include_archived, limit, 0, True)
            for sid in space_ids})

    def rename_session(
        self, session_id: str, title: str | None, *, source: TitleSource = "user"
    ) -> Session:
        """Set a session's title ('' or None clears it). Raises SessionNotFound."""
        if source != "user" and source != "auto":
            raise ValueError(f"title source must be 'user' or 'auto', not {source!r}")
        return self._w(lambda c: sessions.rename(c, session_id, title, source))

    def set_auto_title(self, session_id: str, title: str) -> bool:
        """Set an automatic title unless the user set one. Returns True if written.

        Raises SessionNotFound.
        """
        return self._w(lambda c: sessions.set_auto_title(c, session_id, title))

    def move_session(self, session_id: str, space_id: str) -> list[Session]:
        """Move a session to another space with its forks (nested, recursively) that
        were in its space, as a person expects of a chat's forks. Returns the session,
        then the forks moved. Raises SessionNotFound, SpaceNotFound."""
        return self._w(lambda c: sessions.move(c, session_id, space_id))

    def pin_session(self, session_id: str, pinned: bool) -> Session:
        """Pin or unpin a session. Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, pinned=int(pinned)))

    def archive_session(self, session_id: str, archived: bool) -> Session:
        """Archive or unarchive a session. Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, archived=int(archived)))

    def delete_session(self, session_id: str) -> None:
        """Delete a session with its turns (every branch: edits and regenerations made
        in it) and compactions; forks made from it are kept.

        Raises SessionNotFound.
        """
        self._w(lambda c: sessions.delete_session(c, session_id))

    def set_session_model(self, session_id: str, model: str | None) -> Session:
        """Set the ``provider:model`` for the session's next requests. Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, model=model))

    def set_session_system_prompt(self, session_id: str, system_prompt: str | None) -> Session:
        """Set the session's system prompt (None clears it). Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, system_prompt=system_prompt))

    def set_end_reason(self, session_id: str, reason: str | None) -> Session:
        """Record why the last run ended (e.g. 'end_turn', 'aborted'). Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, end_reason=reason))

    def add_usage(self, session_id: str, usage: Usage) -> Session:
        """Add one request's tokens and cost to the session's totals. Raises SessionNotFound."""

        def run(c: Connection) -> Session:
            sessions.add_usage(c, session_id, usage)
            return sessions.get(c, session_id)

        return self._w(run)

    def list_forks(self, session_id: str) -> list[Session]:
        """Return the sessions forked from this one, oldest first. Raises SessionNotFound."""
        return self._r(lambda c: sessions.list_forks(c, session_id))

    def fork(
        self, session_id: str, at_turn_id: str, *, title: str | None = None
    ) -> Session:
        """Create a new session holding copies of a session's path up to a point.

        Args:
            session_id: the session to fork from.
            at_turn_id: the last turn copied (inclusive); must be on the path shown.
            title: the new session's title; defaults to "<chat title> (fork)".

        Returns:
            The new session, linked to its parent (`parent_session_id`,
            `forked_from_turn_id`), in the parent's space, with the parent's
            model and system prompt, zero usage, and `turn_count` equal to the
            number of turns copied. Copied turns get new ids (compaction
            summaries and rows are re-linked to them); times are kept. In a
            compacted chat the summary stored after the fork point whose
            replaced turns all come before it (the fork point is a turn the
            compaction kept, shown after its card) is copied too, as the fork's
            last turn: the fork shows the card and is sent compacted
            (:func:`parley.core.store.summary_carry.for_fork`). A fork at a
            summary turn (Fork on its card) starts from that summary: the turns
            up to the end of its range and the summary, not the kept turns
            stored between them (:func:`parley.core.store.summary_carry.at_summary`).

        Raises:
            SessionNotFound: `session_id` does not exist.
            TurnNotInSession: `at_turn_id` is not a turn of that session.
        """
        return self._w(lambda c: forks.fork(c, session_id, at_turn_id, title))

    # --- imports ---------------------------------------------------------------

    def import_chats(
        self,
        chats: Sequence[imports.NewChat],
        *,
        space_id: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> imports.Written:
        """Write imported chats and their forks in one transaction (all or nothing).

        See :func:`parley.core.store.imports.write_chats`: a chat whose source id was
        imported before is left out (``skipped``); ``progress(done, total)``
        runs on this store's thread after each chat; ``cancelled()`` returning
        True rolls everything back.

        Raises:
            SpaceNotFound: no such space.
            ImportCancelled: cancelled; nothing was written.
        """
        return self._w(lambda c: imports.write_chats(c, space_id, chats, progress=progress,
                                                      cancelled=cancelled))

    def merge_from(self, source: StoreBase, *, dry_run: bool = False) -> merge.MergeReport:
        """Add what another Parley database holds and this one lacks, by ids, in one
        transaction (all or nothing): see :func:`parley.core.store.merge.merge` — nothing
        duplicated, nothing overwritten but a cut-off reply by its complete copy.

        Args:
            source: an open store (e.g. a rescue copy, a backup); only read.
            dry_run: say what would be added, and roll it back (nothing is changed).

        Returns:
            What was added (or would be).

        Raises:
            StoreError: either store's errors; nothing was written.
        """
        if not dry_run:
            return self._w(lambda dst: source._r(lambda src: merge.merge(src, dst)))

        def trial(dst: Connection) -> merge.MergeReport:
            raise merge.RolledBack(source._r(lambda src: merge.merge(src, dst)))

        try:
            self._w(trial)
        except merge.RolledBack as done:
            return done.report
        raise AssertionError("unreachable")  # pragma: no cover
