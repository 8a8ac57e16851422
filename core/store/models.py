"""Frozen records returned by the store's API (turns are :class:`parley.core.content.Turn`).

Times are Unix epoch milliseconds, UTC. Ids are opaque strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, TypeAlias

from parley.core.content import Turn, Usage

TitleSource: TypeAlias = Literal["auto", "user"]

#: Search snippets mark each match with these control characters:
#: ``"… the \x02cafe\x03 on …"``. The GUI shows what is between them in bold.
MATCH_START = "\x02"
MATCH_END = "\x03"


class Unchanged(Enum):
    """Type of :data:`UNCHANGED`."""

    UNCHANGED = "unchanged"


#: Default of optional update arguments: "leave this field as it is" (None clears it).
UNCHANGED = Unchanged.UNCHANGED


@dataclass(frozen=True, slots=True)
class Space:
    """A named group of sessions, with defaults for the sessions created in it.

    Attributes:
        id: opaque id; the default space's is ``schema.DEFAULT_SPACE_ID``.
        name: shown in the sidebar (not unique: 'Work' and 'work' may both exist).
        position: order in the sidebar, 0 first.
        system_prompt: given to new sessions of this space, or None.
        default_model: ``provider:model`` for new sessions, or None.
        created_at: epoch ms.
        is_default: True for the one space that cannot be deleted.
    """

    id: str
    name: str
    position: int
    system_prompt: str | None
    default_model: str | None
    created_at: int
    is_default: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    """One conversation.

    Attributes:
        id: opaque id.
        space_id: the space it belongs to.
        title: None until titled.
        title_source: ``'auto'`` (written by automatic titling), ``'user'``
            (typed; automatic titling never overwrites it) or None.
        parent_session_id: for a fork, the session it was forked from (which
            may since have been deleted), else None.
        forked_from_turn_id: for a fork, the parent's turn at the fork point.
        parent_exists: False for a fork whose parent was deleted (True otherwise).
        model: ``provider:model`` used for new requests, or None.
        system_prompt: the session's system prompt, or None.
        pinned: shown on top of its space.
        archived: hidden from the default session list.
        usage: tokens and cost summed over the session's requests.
        created_at: epoch ms.
        updated_at: epoch ms of the last activity: creation or a turn written
            (renaming, pinning or moving does not change it, so lists keep their order).
        end_reason: why the last run ended (e.g. 'end_turn', 'aborted'), or None.
        meta: extra keys (kept as found, unknown ones included).
        turn_count: number of turns on the path shown (summary turns and aborted ones
            included; other branches not counted).
    """

    id: str
    space_id: str
    title: str | None
    title_source: TitleSource | None
    parent_session_id: str | None
    forked_from_turn_id: str | None
    parent_exists: bool
    model: str | None
    system_prompt: str | None
    pinned: bool
    archived: bool
    usage: Usage
    created_at: int
    updated_at: int
    end_reason: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    turn_count: int = 0


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result of :meth:`Store.search`.

    Attributes:
        session_id: the session holding the match.
        turn_id: the matching turn, or None when the session's title matched.
        session_title: the session's title (None if untitled).
        snippet: about 160 characters around the first match, on one line,
            each match wrapped in :data:`MATCH_START` … :data:`MATCH_END`
            (``\\x02`` … ``\\x03``); "…" marks cut ends.
        rank: FTS5 bm25 score, lower is better (results come best first); 0.0
            for every hit when a word of the query was too common to rank by
            and hits come newest first (see ``parley.core.store.search``).
        created_at: the turn's time, or the session's last update for a title match.
        fork_copies: how many other chats of the search's scope hold a copy of
            this message (forks of its chat, their forks, sibling forks); 0 for a
            message found once, a title match, and in a one-session search
            (``parley.core.store.fork_copies``).
        off_path: the message is on a branch of its chat other than the path shown
            (an earlier edit or answer): opening it switches the path
            (``Store.show_branch``). False for a title match.
        role: who wrote the message: "user" or "assistant"; "" for a title match.
        model: the ``provider:model`` that wrote a reply (None: not known, or a
            person's message).
        part: the kind of block the snippet's match is in: "text", "thinking",
            "tool_use", "tool_result", "compact_summary" or "document" ("" for a
            title match or none found), so a hit says whose words it shows.
    """

    session_id: str
    turn_id: str | None
    session_title: str | None
    snippet: str
    rank: float
    created_at: int
    fork_copies: int = 0
    off_path: bool = False
    role: str = ""
    model: str | None = None
    part: str = ""


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction of a session: a summary turn standing in for a range of turns.

    Attributes:
        id: opaque id (also in the summary block's ``compaction_id``).
        session_id: the session compacted.
        summary_turn_id: the turn holding the CompactSummaryBlock.
        first_turn_id: first replaced turn (inclusive).
        last_turn_id: last replaced turn (inclusive).
        replaced_count: turns the summary stands for.
        dropped_count: turns left out without being summarized.
        model: ``provider:model`` that wrote the summary (None for a tail compaction).
        usage: the summary request's usage, if one was made.
        reason: ``'auto'`` | ``'manual'`` | ``'cache-timer'`` (or another tag).
        tokens_before: estimated context tokens before.
        tokens_after: estimated context tokens after.
        created_at: epoch ms.
    """

    id: str
    session_id: str
    summary_turn_id: str
    first_turn_id: str | None
    last_turn_id: str | None
    replaced_count: int
    dropped_count: int
    model: str | None
    usage: Usage | None
    reason: str
    tokens_before: int | None
    tokens_after: int | None
    created_at: int


@dataclass(frozen=True, slots=True)
class TreeTurn:
    """One turn of a session's tree (:meth:`Store.get_tree`).

    Attributes:
        turn: the turn (its blocks hydrated or as references, as asked).
        parent_id: the turn it answers or follows, None for a first message.
        on_path: True when the chat shows it (it is on the session's path).
    """

    turn: Turn
    parent_id: str | None
    on_path: bool
