"""Imported chat histories: many sessions, their turns and their branches, in one transaction.

An imported session records where it came from in ``sessions.meta`` (no schema
change: ``meta`` is the sessions' free-form JSON object, kept as found)::

    {"imported": {"source": "chatgpt", "id": "<the export's conversation id>",
                  "at": <epoch ms of the import>}}

A second import of the same file finds these ids (:func:`imported_ids`) and
leaves those conversations out. ``at`` tells the turns that came with the
import (none is newer) from the ones written in Parley since. Only chats
without a parent are matched (a fork the person makes later copies its
parent's ``meta``, see ``parley.core.store.forks``).

The other branches of a conversation are edits and regenerations, so they go
into the chat's own session as branches of its tree (``turn_links``, as
Parley's own edits and regenerations do; ``parley.core.store.schema``), shown
as ‹ n/m › on the message where they part: each turn is written once, below
the turn it continues from, nothing is copied. The chat's turns are the path it
shows (``turn_path``), so it opens on the branch the export showed; turns of the
other branches were never shown here (``shown_at`` 0: a branch opened later
continues below a branch point with its newest turn, ``parley.core.store.tree``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from parley.core.content import Turn, now_ms
from parley.core.errors import ParleyError
from parley.core.store import attachments, sessions, spaces, turns
from parley.core.store.dialect import dual_text
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import DEFAULT_SPACE_ID, turn_links, turn_path
from parley.core.store.schema import turns as T

__all__ = [
    "IMPORT_KEY",
    "ImportCancelled",
    "NewBranch",
    "NewChat",
    "Written",
    "imported_ids",
    "write_chats",
]

#: Key of ``sessions.meta`` holding an imported session's source.
IMPORT_KEY = "imported"


class ImportCancelled(ParleyError):
    """The person cancelled an import; its transaction was rolled back: nothing was imported."""

    def __init__(self) -> None:
        super().__init__("The import was cancelled. Nothing was imported.")


@dataclass(frozen=True, slots=True)
class NewBranch:
    """Another branch of an imported chat, written into the chat's tree.

    Attributes:
        after: the id of the turn it continues from: a turn of the chat's
            ``turns`` or of an earlier branch in ``NewChat.branches``; None
            when it starts with another first message (the first message was
            edited).
        turns: the branch's own turns, oldest first, with ids no saved turn
            has; the first one's parent is ``after``, each next one's the one
            before it.
        messages: how many messages of the export its turns stand for (None:
            one per turn; a reply that called tools is one message of the
            export but several turns).
    """

    after: str | None
    turns: Sequence[Turn]
    messages: int | None = None


@dataclass(frozen=True, slots=True)
class NewChat:
    """One imported conversation.

    Attributes:
        title: its title.
        turns: its turns, oldest first, with ids no saved turn has: the path
            the chat shows (the branch the export showed).
        source: the export's format (``chatgpt``…), kept in ``meta``.
        source_id: the export's conversation id (None: it cannot be recognised again).
        system_prompt: None: the space's.
        model: ``provider:model`` for new requests; None: the space's default.
        created_at: epoch ms (None: now).
        updated_at: epoch ms (None: its last turn's time, else ``created_at``).
        branches: its other branches, each after a turn of ``turns`` or of
            an earlier branch.
        messages: how many messages of the export its turns stand for (None:
            one per turn), its branches' not included.
    """

    title: str
    turns: Sequence[Turn]
    source: str
    source_id: str | None = None
    system_prompt: str | None = None
    model: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    branches: Sequence[NewBranch] = field(default_factory=tuple)
    messages: int | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`write_chats` wrote.

    Attributes:
        session_ids: the new chats' ids, in the given order.
        messages: messages written (every branch's; see ``NewChat.messages``).
        branches: other branches written (besides each chat's path shown).
        skipped: chats left out because a chat with the same source id was
            already imported (earlier, or earlier in the same file).
    """

    session_ids: list[str]
    messages: int
    branches: int
    skipped: int


_IDS = dual_text(
    "SELECT json_extract(meta, '$.imported.id') FROM sessions "
    "WHERE parent_session_id IS NULL AND json_extract(meta, '$.imported.source') = :source",
    pg_sql.IMPORTED_IDS,
)


def imported_ids(con: Any, source: str) -> set[str]:
    """The source ids of the chats already imported from ``source`` (forks not included)."""
    return {str(r[0]) for r in con.execute(_IDS, {"source": source}) if r[0] is not None}


def write_chats(
    con: Any,
    space_id: str | None,
    chats: Sequence[NewChat],
    *,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Written:
    """Write imported chats and their branches (inside the caller's transaction).

    Args:
        con: a Connection in a write transaction.
        space_id: the space for every chat (None: the default space).
        chats: the chats; one whose ``source_id`` is already imported from
            its ``source`` is left out (counted in ``skipped``).
        progress: called as ``progress(done, total)`` after each chat (on the
            store's thread).
        cancelled: asked before each chat; True raises :class:`ImportCancelled`.

    Returns:
        The new chats' ids and the counts.

    Raises:
        SpaceNotFound: no such space.
        ImportCancelled: ``cancelled()`` said so (the caller's transaction
            then rolls back).
        AttachmentNotFound: a turn references a file the store does not hold.
        ValueError: a branch's ``after`` is no turn of its chat or of an earlier
            branch (a bug of the importer: the caller's transaction rolls back).
    """
    space = spaces.get(con, space_id or DEFAULT_SPACE_ID)
    known: dict[str, set[str]] = {}
    ids: list[str] = []
    messages = branches = skipped = 0
    for done, chat in enumerate(chats, start=1):
        if cancelled is not None and cancelled():
            raise ImportCancelled()
        if chat.source not in known:
            known[chat.source] = imported_ids(con, chat.source)
        seen = known[chat.source]
        if chat.source_id is not None and chat.source_id in seen:
            skipped += 1
        else:
            ids.append(_write_chat(con, space.id, chat))
            if chat.source_id is not None:
                seen.add(chat.source_id)
            messages += _count(chat.messages, chat.turns) + sum(
                _count(b.messages, b.turns) for b in chat.branches)
            branches += len(chat.branches)
        if progress is not None:
            progress(done, len(chats))
    return Written(ids, messages, branches, skipped)


def _count(messages: int | None, items: Sequence[Turn]) -> int:
    return len(items) if messages is None else messages


def _meta(chat: NewChat) -> dict[str, Any]:
    source: dict[str, Any] = {"source": chat.source}
    if chat.source_id is not None:
        source["id"] = chat.source_id
    source["at"] = now_ms()
    return {IMPORT_KEY: source}


def _write_chat(con: Any, space_id: str, chat: NewChat) -> str:
    created = chat.created_at or (chat.turns[0].created_at if chat.turns else now_ms())
    updated = max(chat.updated_at or (chat.turns[-1].created_at if chat.turns else 0), created)
    session_id = sessions.insert(
        con, space_id=space_id, title=chat.title, title_source="user", model=chat.model,
        system_prompt=chat.system_prompt, meta=_meta(chat),
        created_at=created, updated_at=updated,
    )
    _insert_tree(con, session_id, chat)
    return session_id


_INSERT_TURNS = T.insert()
_INSERT_LINKS = turn_links.insert()
_INSERT_PATH = turn_path.insert()


def _insert_tree(con: Any, session_id: str, chat: NewChat) -> None:
    """Insert a new session's turns, their links and its path, one statement each (files
    go to the attachments table). The chat's turns are the path (``pos`` 0…); every turn
    gets a ``seq`` after its parent's (so ``seq`` grows along every path, as
    ``parley.core.store.schema`` requires), otherwise in the order they were written
    (:func:`_in_time_order`: siblings in the export's order). The path's turns get one
    stamp and its leaf that stamp + 1 (``parley.core.store.tree``'s rule for a path
    shown); other branches' turns 0 (never shown)."""
    rows: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    stamp = now_ms()
    for pos, turn in enumerate(chat.turns):
        parent = chat.turns[pos - 1].id if pos else None
        shown = stamp + 1 if pos == len(chat.turns) - 1 else stamp
        links.append({"turn_id": turn.id, "session_id": session_id, "parent_id": parent,
                      "shown_at": shown})
    written = {t.id for t in chat.turns}
    for branch in chat.branches:
        if branch.after is not None and branch.after not in written:
            raise ValueError(f"branch after {branch.after}: no earlier turn of the chat")
        parent = branch.after
        for turn in branch.turns:
            links.append({"turn_id": turn.id, "session_id": session_id, "parent_id": parent,
                          "shown_at": 0})
            written.add(turn.id)
            parent = turn.id
    for seq, turn in enumerate(_in_time_order(chat, links)):
        values = turns.row_values(attachments.store_blocks(con, turn))
        values["session_id"] = session_id
        values["seq"] = seq
        rows.append(values)
    if rows:
        con.execute(_INSERT_TURNS, rows)
        con.execute(_INSERT_LINKS, links)
    if chat.turns:
        con.execute(_INSERT_PATH, [{"session_id": session_id, "pos": pos, "turn_id": t.id}
                                   for pos, t in enumerate(chat.turns)])


def _in_time_order(chat: NewChat, links: list[dict[str, Any]]) -> list[Turn]:
    """Every turn of the chat, each after its parent, otherwise by time: siblings come
    in the order the export wrote them (‹ n/m › counts them in ``seq`` order,
    ``parley.core.store.tree``). ``links``: one per turn, the chat's turns first, then
    each branch's (parents first), as :func:`_insert_tree` makes them."""
    every = [*chat.turns, *(t for b in chat.branches for t in b.turns)]
    when: dict[str | None, int] = {None: 0}
    keys: list[int] = []
    for turn, link in zip(every, links, strict=True):
        # Never before its parent, even when the export's times go backwards.
        when[turn.id] = max(turn.created_at, when[link["parent_id"]])
        keys.append(when[turn.id])
    order = sorted(range(len(every)), key=keys.__getitem__)  # stable: parents first on ties
    return [every[i] for i in order]
