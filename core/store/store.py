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

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from sqlalchemy.engine import Connection

from parley.core.content import Turn, Usage, apply_compactions
from parley.core.store import (
    attachments,
    compactions,
    forks,
    imports,
    outline,
    search,
    sessions,
    settings_repo,
    spaces,
    turns,
    versions,
)
from parley.core.store.attachments import AttachmentInfo
from parley.core.store.errors import StoreClosed
from parley.core.store.lifecycle import StoreBase
from parley.core.store.models import (
    UNCHANGED,
    Compaction,
    SearchHit,
    Session,
    Space,
    TitleSource,
    Unchanged,
)
from parley.core.store.schema import DEFAULT_SPACE_ID, app_state
from parley.core.store.schema import settings as settings_table
from parley.core.versions import Versions

__all__ = ["Store", "StoreClosed"]


class Store(StoreBase):
    """Parley's sessions, turns, spaces, search index and settings in one SQLite file.

    Open with :meth:`Store.open` (see :class:`parley.core.store.lifecycle.StoreBase`).
    """

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
        """Create a space, placed last. Raises EmptyName for a blank name."""
        return self._w(lambda c: spaces.create(c, name, system_prompt, default_model))

    def rename_space(self, space_id: str, name: str) -> Space:
        """Rename a space. Raises SpaceNotFound, EmptyName."""
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
        include_versions: bool = False,
    ) -> list[Session]:
        """Return a page of sessions, newest activity first (pinned ones first).

        ``space_id`` None lists every space. Forks made on purpose are listed
        like any session (their ``parent_session_id``, or ``meta["nest_under"]``
        for one made from a version, tells where to nest them); versions of a
        stored chat are not (:meth:`versions`) unless ``include_versions``.
        """
        return self._r(
            lambda c: sessions.list_page(c, space_id, include_archived, limit, offset, pinned_first,
                                         include_versions)
        )

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

    def move_session(self, session_id: str, space_id: str) -> Session:
        """Move a session to another space. Raises SessionNotFound, SpaceNotFound."""
        return self._w(lambda c: sessions.move(c, session_id, space_id))

    def pin_session(self, session_id: str, pinned: bool) -> Session:
        """Pin or unpin a session. Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, pinned=int(pinned)))

    def archive_session(self, session_id: str, archived: bool) -> Session:
        """Archive or unarchive a session. Raises SessionNotFound."""
        return self._w(lambda c: sessions.set_fields(c, session_id, archived=int(archived)))

    def delete_session(self, session_id: str) -> None:
        """Delete a session with its turns, compactions and versions (edits and
        regenerations made in it); forks made on purpose are kept.

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
        self, session_id: str, at_turn_id: str, *, title: str | None = None, kind: str = "fork"
    ) -> Session:
        """Create a new session holding copies of a session's turns up to a point.

        Args:
            session_id: the session to fork from.
            at_turn_id: the last turn copied (inclusive); must belong to `session_id`.
            title: the new session's title; defaults to "<chat title> (fork)" (for a
                version, the title of the chat it is a version of).
            kind: ``"fork"`` (made on purpose: listed as a chat, nested under its
                parent's chat) or ``"version"`` (an edit's: shown as a version of
                the chat's message, not listed; ``parley.core.store.versions``).

        Returns:
            The new session, linked to its parent (`parent_session_id`,
            `forked_from_turn_id`), in the parent's space, with the parent's
            model and system prompt, zero usage, and `turn_count` equal to the
            fork point's position + 1. Copied turns get new ids (compaction
            summaries and rows are re-linked to them); times are kept.

        Raises:
            SessionNotFound: `session_id` does not exist.
            TurnNotInSession: `at_turn_id` is not a turn of that session.
        """
        return self._w(lambda c: forks.fork(c, session_id, at_turn_id, title, kind))

    # --- versions ---------------------------------------------------------------

    def versions(self, session_id: str) -> Versions:
        """Return the versions of a session's chat seen from it (``parley.core.versions``):
        its chat (root), every session of the chat, and the session's messages that
        have versions (‹ n/m ›). Raises SessionNotFound."""
        return self._r(lambda c: versions.versions(c, session_id))

    def show_version(self, session_id: str) -> None:
        """Remember ``session_id`` as the version its chat shows (kept in the file, so
        it survives a restart; nothing is written for a chat without versions).

        Raises SessionNotFound.
        """
        self._w(lambda c: versions.remember(c, session_id))

    def version_to_open(self, chat_id: str) -> str:
        """The session to open for a chat of the list: the version chosen last (else the
        one with the latest activity); ``chat_id`` itself for a chat without versions.

        Raises SessionNotFound.
        """
        return self._r(lambda c: versions.shown_version(c, versions.chat_root(c, chat_id)))

    def locate_message(self, session_id: str, turn_id: str) -> tuple[str, str]:
        """``(session, turn)`` to show a search hit in: a message all versions share is
        shown in the version shown now; one of a single version opens that version.

        Raises SessionNotFound.
        """
        return self._r(lambda c: versions.locate(c, session_id, turn_id))

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

    # --- turns -----------------------------------------------------------------

    def append_turn(self, session_id: str, turn: Turn) -> Turn:
        """Save a new turn at the end of a session (and index it for search).

        Returns the turn as given. Bumps the session's ``updated_at``.

        Raises:
            SessionNotFound: no such session.
            DuplicateTurn: a turn with this id is already saved.
        """
        return self._w(lambda c: turns.append(c, session_id, turn))

    def upsert_turn(self, session_id: str, turn: Turn) -> Turn:
        """Save a turn, or replace the blocks/aborted/model/usage of the saved one with its id.

        Used to journal a streaming reply. Raises SessionNotFound, TurnInOtherSession.
        """
        return self._w(lambda c: turns.upsert(c, session_id, turn))

    def finish_turn(self, session_id: str, turn: Turn, usage: Usage) -> Turn:
        """:meth:`upsert_turn` and :meth:`add_usage` in one transaction."""

        def run(c: Connection) -> Turn:
            out = turns.upsert(c, session_id, turn)
            sessions.add_usage(c, session_id, usage)
            return out

        return self._w(run)

    def get_turn(self, turn_id: str, *, hydrate: bool = True) -> Turn:
        """Return one turn (``hydrate`` as for :meth:`get_turns`). Raises TurnNotFound."""
        return self._r(lambda c: turns.get(c, turn_id, hydrate))

    def get_turns(
        self, session_id: str, *, last: int | None = None, hydrate: bool = True
    ) -> list[Turn]:
        """Return a session's stored turns in order: all, or the last ``last``.

        Raw: summary turns, replaced and aborted turns included (see :meth:`history`).

        Attached files (image and document blocks) are kept in the
        ``attachments`` table, not in the turns. With ``hydrate`` (default)
        their bytes are put back (base64 ``data``, ``attachment_id`` kept), so
        the turns can go into a request as they are; only turns that
        reference a file cost more than before (~3 ms per MB of files). With
        ``hydrate=False`` those blocks come back as references
        (``attachment_id`` set; ``data`` None for images, "" for documents):
        what a transcript needs to open a long session without reading its
        files (fetch one with :meth:`attachment_data`, or fill turns later
        with :meth:`hydrate`).

        Raises SessionNotFound.
        """
        return self._r(lambda c: turns.get_many(c, session_id, last, hydrate))

    def count_turns(self, session_id: str) -> int:
        """Return how many turns a session stores. Raises SessionNotFound."""
        return self._r(lambda c: turns.count(c, session_id))

    def history(self, session_id: str, *, hydrate: bool = True) -> list[Turn]:
        """Return the turns with compaction summaries applied
        (``parley.core.content.apply_compactions``).

        Aborted turns are still included (the wire rules leave them out).
        ``hydrate`` as for :meth:`get_turns`. Raises SessionNotFound.
        """
        return apply_compactions(self.get_turns(session_id, hydrate=hydrate))

    def delete_turns_after(self, session_id: str, turn_id: str) -> int:
        """Delete every turn after ``turn_id`` (to edit and resend). Returns how many.

        Raises SessionNotFound, TurnNotInSession.
        """
        return self._w(lambda c: turns.delete_after(c, session_id, turn_id))

    def delete_turns(self, session_id: str, turn_ids: Sequence[str]) -> int:
        """Delete these turns of a session (a message taken back before it was sent);
        ids of other sessions are left alone. Returns how many were deleted.

        Raises SessionNotFound.
        """
        return self._w(lambda c: turns.delete_ids(c, session_id, turn_ids))

    def set_aside_reply(
        self, session_id: str, prompt_turn_id: str, *, title: str | None = None,
        reply_turn_ids: Sequence[str] | None = None,
    ) -> Session:
        """Keep a session's last reply in a new fork and remove it from the session.

        Used by Regenerate (``parley.core.chat.regenerate``). One transaction: the fork
        holding copies of every turn (the reply included) and the reply's
        removal happen together or not at all, so a crash never loses the reply.

        Args:
            session_id: the session.
            prompt_turn_id: the turn the reply answers (the user's prompt), where
                the fork parts from the session.
            title: the fork's title; defaults to "<title> (previous answer)".
            reply_turn_ids: the reply's turns, removed from the session (found
                in conversation order: a compaction's summary turn stored after
                them stays). None: every turn stored after ``prompt_turn_id``.

        Returns:
            The fork, a version of the chat (``is_version``; not listed):
            linked to its parent (``parent_session_id``), with
            ``forked_from_turn_id`` = ``prompt_turn_id`` (where the two
            answers part), holding the session's turns as they were.

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: ``prompt_turn_id`` is not a turn of that session.
        """

        def run(c: Connection) -> Session:
            turns.seq_of(c, session_id, prompt_turn_id)
            last = turns.get_many(c, session_id, 1)[-1]
            name = title
            if name is None:
                parent = sessions.get(c, session_id)
                name = f"{parent.title or 'Untitled'} (previous answer)"
            fork = forks.fork(c, session_id, last.id, name, versions.VERSION)
            if reply_turn_ids is None:
                turns.delete_after(c, session_id, prompt_turn_id)
            else:
                turns.delete_ids(c, session_id, reply_turn_ids)
            return sessions.set_fields(c, fork.id, forked_from_turn_id=prompt_turn_id)

        return self._w(run)

    # --- attachments -----------------------------------------------------------

    def hydrate(self, turns: Sequence[Turn]) -> list[Turn]:
        """Put the stored bytes back into turns read with ``hydrate=False``.

        For turns read as references (see :meth:`get_turns`) that must now go
        into a request: the adapters need ``data``.

        Args:
            turns: any turns; those without references are passed through.

        Returns:
            A new list: turns with no referenced file are the same objects;
            the others are copies whose blocks (and tool_result parts) carry
            ``data`` (base64) and keep ``attachment_id``. A file missing from
            the store (not possible through this API) becomes a text
            placeholder. One query per 500 distinct files; about 3 ms per MB of files.
        """
        if not attachments.missing_data(turns):
            return list(turns)
        return self._r(lambda c: attachments.hydrate(c, turns))

    def attachment_data(self, sha256: str) -> bytes:
        """Return a stored file's bytes (e.g. for a thumbnail). Raises AttachmentNotFound."""
        return self._r(lambda c: attachments.data_of(c, sha256))

    def attachment_infos(self, sha256s: Iterable[str]) -> dict[str, AttachmentInfo]:
        """Return ``{sha256: AttachmentInfo}`` (media type, size in bytes, time) of stored files.

        Ids not stored are left out of the result.
        """
        wanted = list(sha256s)
        return self._r(lambda c: attachments.infos(c, wanted))

    def attachment_usage(self) -> tuple[int, int]:
        """Return ``(files, bytes)``: how many attached files are stored, and their size."""
        return self._r(attachments.usage)

    # --- compactions -----------------------------------------------------------

    def record_compaction(
        self,
        session_id: str,
        summary_turn: Turn,
        *,
        first_turn_id: str,
        last_turn_id: str,
        replaced_count: int,
        dropped_count: int = 0,
        model: str | None = None,
        usage: Usage | None = None,
        reason: str = "manual",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        count_usage: bool = False,
    ) -> Compaction:
        """Append a summary turn and its compaction row in one transaction.

        The summary turn's CompactSummaryBlock gets the fields left None filled
        in (``compaction_id``, ``first_turn_id``, ``last_turn_id``, and
        ``replaced_count`` when 0). Read the saved turn back with
        ``get_turn(result.summary_turn_id)``. With ``count_usage`` the summary
        request's ``usage`` is also added to the session's totals, in the same
        transaction (so a crash cannot leave a compaction whose cost is uncounted).

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: the range's first or last turn is not in the session.
            DuplicateTurn: the summary turn's id is already saved.
        """
        return self._w(
            lambda c: compactions.record(
                c,
                session_id,
                summary_turn,
                first_turn_id=first_turn_id,
                last_turn_id=last_turn_id,
                replaced_count=replaced_count,
                dropped_count=dropped_count,
                model=model,
                usage=usage,
                reason=reason,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                count_usage=count_usage,
            )[0]
        )

    def list_compactions(self, session_id: str) -> list[Compaction]:
        """Return a session's compactions, oldest first. Raises SessionNotFound."""
        return self._r(lambda c: compactions.list_for(c, session_id))

    def transcript_window(
        self,
        session_id: str,
        *,
        last: int | None = None,
        before: int | None = None,
        reveal: str | None = None,
        hydrate: bool = True,
    ) -> outline.Window:
        """Return the last ``last`` items a transcript shows at the top level (turns
        outside compacted ranges, and summary turns, which are shown where their
        range began) before display position ``before``, with every compaction
        span of the session: see :func:`parley.core.store.outline.window`.

        ``hydrate`` as for :meth:`get_turns`. Raises SessionNotFound.
        """
        return self._r(lambda c: outline.window(c, session_id, last=last, before=before,
                                                reveal=reveal, hydrate=hydrate))

    def compacted_turns(
        self, session_id: str, summary_turn_id: str, *, hydrate: bool = True
    ) -> outline.Window:
        """Return the turns a compaction replaced (they are kept), in stored order:
        see :func:`parley.core.store.outline.range_turns`. Raises SessionNotFound."""
        return self._r(lambda c: outline.range_turns(c, session_id, summary_turn_id,
                                                     hydrate=hydrate))

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
        """Store an app-state value (JSON-serializable; None removes it)."""
        settings_repo.encode(value)
        self._w(lambda c: settings_repo.put(c, app_state, key, value))
