"""The store's API for a chat's contents: turns, attachments, compactions, transcript windows.

Part of :class:`parley.core.store.store.Store` (which see: one transaction per method,
errors, thread confinement); the chats themselves are :mod:`parley.core.store.store_chats`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy.engine import Connection

from parley.core.branches import Branches
from parley.core.content import Turn, Usage, apply_compactions
from parley.core.store import (
    attachments,
    branch_points,
    card_pages,
    compactions,
    outline,
    sessions,
    side_answers,
    since_summary,
    summary_carry,
    tree,
    turns,
)
from parley.core.store.attachments import AttachmentInfo
from parley.core.store.lifecycle import StoreBase
from parley.core.store.models import Compaction, TreeTurn


class TurnsStore(StoreBase):
    """A chat's turns, the files they attach, its compactions and transcript windows."""

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
        """Return the turns of the session's path shown (the chat as it reads, first
        message first; other branches are not read: :meth:`get_tree`): all, or the last
        ``last`` (read from the leaf back).

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

    def context_turns(self, session_id: str, *, hydrate: bool = True) -> list[Turn]:
        """Return the stored turns a request is built from: every turn but those inside
        the range of the latest compaction summary (its first and last are kept).

        Equal to ``parley.core.context.since_summary.since_summary(get_turns(session_id))``
        (so ``apply_compactions`` and the wire rules give the same result from either),
        read without reading the turns it leaves out: its cost follows what is sent,
        not the length of the history. Raw like :meth:`get_turns` (summary and aborted
        turns included); ``hydrate`` as there.

        Raises SessionNotFound.
        """
        return self._r(lambda c: since_summary.context_turns(c, session_id, hydrate))

    def messages_between(self, session_id: str, after_id: str, before_id: str) -> int:
        """Return how many turns are stored strictly between two turns of a session,
        compaction summaries aside: those :meth:`context_turns` leaves out, counted
        without reading them into turns (a compaction planned on that list counts the
        turns it replaces with them).

        Raises SessionNotFound, TurnNotInSession.
        """
        return self._r(lambda c: since_summary.messages_between(c, session_id, after_id,
                                                                 before_id))

    def context_turns_counted(self, session_id: str) -> tuple[list[Turn], int]:
        """Return :meth:`context_turns` (hydrated) and :meth:`count_turns` read together,
        in one trip to the store: a run needs both (what it sends, and where its turns
        go for the ``session:end`` hook's ``turn_range``).

        Raises SessionNotFound.
        """
        return self._r(lambda c: (since_summary.context_turns(c, session_id, True),
                                  turns.count(c, session_id)))

    def count_turns(self, session_id: str) -> int:
        """Return how many turns the session's path shown holds (other branches not
        counted). Raises SessionNotFound."""
        return self._r(lambda c: turns.count(c, session_id))

    def history(self, session_id: str, *, hydrate: bool = True) -> list[Turn]:
        """Return the turns with compaction summaries applied
        (``parley.core.content.apply_compactions``).

        Aborted turns are still included (the wire rules leave them out).
        ``hydrate`` as for :meth:`get_turns`. Raises SessionNotFound.
        """
        return apply_compactions(self.get_turns(session_id, hydrate=hydrate))

    def delete_turns_after(self, session_id: str, turn_id: str) -> int:
        """Delete the path's turns after ``turn_id`` and every branch below them.
        Returns how many turns were deleted.

        Raises SessionNotFound, TurnNotInSession (``turn_id`` is not on the path shown).
        """
        return self._w(lambda c: turns.delete_after(c, session_id, turn_id))

    def delete_turns(self, session_id: str, turn_ids: Sequence[str]) -> int:
        """Delete these turns of a session (a message taken back before it was sent) and
        every turn below them (their branches); ids of other sessions are left alone.
        The path loses them: a deleted leaf makes its parent the leaf. Returns how many
        turns were deleted.

        Raises SessionNotFound.
        """
        return self._w(lambda c: turns.delete_ids(c, session_id, turn_ids))

    # --- the tree: branches of the chat ------------------------------------------

    def branch_before(self, session_id: str, turn_id: str) -> Turn | None:
        """Cut the path shown back to end at ``turn_id``'s parent (empty when it is a first
        message), so the next turn saved becomes ``turn_id``'s sibling: a new branch.

        Nothing is deleted: the turns cut away stay stored, a branch the chat can show
        again (:meth:`show_branch`, ‹ n/m › from :meth:`branches`). The new leaf is stamped
        so that, until a turn is saved below it, the path opened later ends there (a
        regeneration whose new answer failed). Cost: the path rows removed.

        A summary cut away whose range lies wholly above the new leaf still applies: a
        copy of it (the latest such) becomes the new branch's first turn, so the next
        turn saved goes below it and the chat stays compacted
        (``parley.core.store.summary_carry``).

        Returns:
            That summary copy, now the path's leaf; None when none was carried.

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: ``turn_id`` is not a turn of the path shown.
        """
        return self._w(lambda c: summary_carry.branch_before(c, session_id, turn_id))

    def edit_turn(self, session_id: str, turn_id: str, new_turn: Turn) -> Turn:
        """Save ``new_turn`` as a sibling of ``turn_id`` and show it: :meth:`branch_before`
        and :meth:`append_turn` in one transaction (Edit: the original and what followed
        it stay, as a branch; a summary that still applies is carried, as there, and
        ``new_turn`` goes below it). Returns ``new_turn``, now the path's leaf.

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: ``turn_id`` is not a turn of the path shown.
            DuplicateTurn: a turn with ``new_turn``'s id is already saved.
        """

        def run(c: Connection) -> Turn:
            summary_carry.branch_before(c, session_id, turn_id)
            return turns.append(c, session_id, new_turn)

        return self._w(run)

    def add_answers(self, session_id: str, parent_id: str, turns: Sequence[Turn]) -> None:
        """Save ``turns`` as children of ``parent_id`` beside the path shown, not on it
        (several models' answers to one message, written at once: saving them again,
        e.g. :meth:`upsert_turn`, only updates them; :meth:`show_branch` shows one).
        See ``parley.core.store.side_answers``.

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: ``parent_id`` is not a turn of the session.
            DuplicateTurn: a turn with one of these ids is already saved.
        """
        self._w(lambda c: side_answers.add_below(c, session_id, parent_id, turns))

    def show_branch(self, session_id: str, turn_id: str, *, exact: bool = False) -> str:
        """Make the path shown pass through ``turn_id`` (any turn of the session, on any
        branch): its ancestors above it and, below it, the choices made there last time
        (``parley.core.store.tree``), or nothing when ``exact`` (the path ends at it).

        A no-op when ``turn_id`` is on the path already and not ``exact``. Only the path
        rows below the common ancestor are rewritten (cost: the two branches' parts
        below it, never the shared part); the choice is kept in the file.

        Returns:
            The id of the path's leaf.

        Raises:
            SessionNotFound: no such session.
            TurnNotInSession: ``turn_id`` is not a turn of that session.
        """
        return self._w(lambda c: tree.show_branch(c, session_id, turn_id, exact))

    def branches(self, session_id: str) -> Branches:
        """The branch points of the path shown (‹ n/m ›): see ``parley.core.branches``.

        Cost: the session's forking parents (``turn_forks``, one row per fork), then only the
        children of turns with several and of the leaf, and of the summaries among and
        just above those (``parley.core.store.branch_points``; no turn's blocks are read).

        Raises SessionNotFound.
        """
        return self._r(lambda c: branch_points.branches(c, session_id))

    def get_tree(self, session_id: str, *, hydrate: bool = False) -> list[TreeTurn]:
        """Every turn of the session (every branch), in ``seq`` order (a parent always
        before its children), each with ``parent_id`` and ``on_path``. For export as
        JSON and copies; ``hydrate`` as for :meth:`get_turns`. Raises SessionNotFound."""
        return self._r(lambda c: turns.get_tree(c, session_id, hydrate))

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
        span of the session: see :func:`parley.core.store.outline.window`; a search
        hit ``reveal`` in cards: :func:`parley.core.store.card_pages.window`.

        ``hydrate`` as for :meth:`get_turns`. Raises SessionNotFound.
        """
        return self._r(lambda c: card_pages.window(c, session_id, last=last, before=before,
                                                   reveal=reveal, hydrate=hydrate))

    def compacted_turns(
        self, session_id: str, summary_turn_id: str, *, hydrate: bool = True
    ) -> outline.Window:
        """Return the turns a compaction replaced (they are kept), in stored order:
        see :func:`parley.core.store.outline.range_turns`. Raises SessionNotFound."""
        return self._r(lambda c: outline.range_turns(c, session_id, summary_turn_id,
                                                     hydrate=hydrate))

    def card_page(
        self, session_id: str, summary_turn_id: str, *, last: int = card_pages.CARD_PAGE,
        before: int | None = None, hydrate: bool = True,
    ) -> outline.Window:
        """Return the last ``last`` of a card's own items (its turns, and the cards
        nested one level in) shown before ``before``: see
        :func:`parley.core.store.card_pages.page`. Raises SessionNotFound."""
        return self._r(lambda c: card_pages.page(c, session_id, summary_turn_id, last=last,
                                                 before=before, hydrate=hydrate))
