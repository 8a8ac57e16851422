"""Imported chat histories: many sessions, their turns and their forks, in one transaction.

An imported session records where it came from in ``sessions.meta`` (no schema
change: ``meta`` is the sessions' free-form JSON object, kept as found)::

    {"imported": {"source": "chatgpt", "id": "<the export's conversation id>",
                  "at": <epoch ms of the import>}}

A second import of the same file finds these ids (:func:`imported_ids`) and
leaves those conversations out. ``at`` tells the turns that came with the
import (none is newer) from the ones written in Parley since. Forks carry the
same ``imported`` object with ``"branch"`` (the export's id of the branch's
last message) and are never matched themselves: only chats without a parent
are (a fork the person makes later copies its parent's ``meta``, see
``parley.core.store.forks``).

The other branches of a conversation are edits and regenerations, so their
forks are *versions* of the chat (``parley.core.store.versions``: ``fork_kind``
``version``), shown as ‹ n/m › on the message where they part, as Parley's own
edits and regenerations are: copies of the shared turns keep their time and
content, and a branch that differs from the first message on parts at the
chat's first turn (as ``parley.core.chat.edit`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from parley.core.content import Turn, new_id, now_ms
from parley.core.errors import ParleyError
from parley.core.store import attachments, sessions, spaces, turns, versions
from parley.core.store.dialect import dual_text
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import DEFAULT_SPACE_ID
from parley.core.store.schema import turns as T

__all__ = [
    "IMPORT_KEY",
    "ImportCancelled",
    "NewChat",
    "NewFork",
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
class NewFork:
    """Another branch of an imported chat, written as a fork of it.

    Attributes:
        title: the fork's title.
        shared: how many leading turns of the chat it shares (copied, with new
            ids); 0 when its first turn differs already (it then parts at the
            chat's first turn, as an edit of the first message does).
        turns: the branch's own turns (after the shared ones), oldest first.
        branch: the export's id of the branch (kept in ``meta``), if any.
        messages: how many messages of the export its own turns stand for
            (None: one per turn; a reply that called tools is one message
            of the export but several turns).
    """

    title: str
    shared: int
    turns: Sequence[Turn]
    branch: str | None = None
    messages: int | None = None


@dataclass(frozen=True, slots=True)
class NewChat:
    """One imported conversation.

    Attributes:
        title: its title.
        turns: its turns, oldest first, with ids no saved turn has.
        source: the export's format (``chatgpt``…), kept in ``meta``.
        source_id: the export's conversation id (None: it cannot be recognised again).
        system_prompt: None: the space's.
        model: ``provider:model`` for new requests; None: the space's default.
        created_at: epoch ms (None: now).
        updated_at: epoch ms (None: its last turn's time, else ``created_at``).
        forks: its other branches.
        messages: how many messages of the export its turns stand for (None:
            one per turn), its forks' not included.
    """

    title: str
    turns: Sequence[Turn]
    source: str
    source_id: str | None = None
    system_prompt: str | None = None
    model: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    forks: Sequence[NewFork] = field(default_factory=tuple)
    messages: int | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`write_chats` wrote.

    Attributes:
        session_ids: the new chats' ids (forks not included), in the given order.
        messages: turns written, copies of shared turns in forks not counted.
        forks: forks written.
        skipped: chats left out because a chat with the same source id was
            already imported (earlier, or earlier in the same file).
    """

    session_ids: list[str]
    messages: int
    forks: int
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
    """Write imported chats and their forks (inside the caller's transaction).

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
    """
    space = spaces.get(con, space_id or DEFAULT_SPACE_ID)
    known: dict[str, set[str]] = {}
    ids: list[str] = []
    messages = forks = skipped = 0
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
                _count(f.messages, f.turns) for f in chat.forks)
            forks += len(chat.forks)
        if progress is not None:
            progress(done, len(chats))
    return Written(ids, messages, forks, skipped)


def _count(messages: int | None, items: Sequence[Turn]) -> int:
    return len(items) if messages is None else messages


def _meta(chat: NewChat, branch: str | None = None, fork: bool = False) -> dict[str, Any]:
    source: dict[str, Any] = {"source": chat.source}
    if chat.source_id is not None:
        source["id"] = chat.source_id
    source["at"] = now_ms()
    if branch is not None:
        source["branch"] = branch
    meta: dict[str, Any] = {IMPORT_KEY: source}
    if fork:
        meta[versions.KIND_KEY] = versions.VERSION
    return meta


def _write_chat(con: Any, space_id: str, chat: NewChat) -> str:
    created = chat.created_at or (chat.turns[0].created_at if chat.turns else now_ms())
    updated = max(chat.updated_at or (chat.turns[-1].created_at if chat.turns else 0), created)
    session_id = sessions.insert(
        con, space_id=space_id, title=chat.title, title_source="user", model=chat.model,
        system_prompt=chat.system_prompt, meta=_meta(chat),
        created_at=created, updated_at=updated,
    )
    _insert_turns(con, session_id, chat.turns)
    for fork in chat.forks:
        _write_fork(con, space_id, session_id, chat, fork, updated)
    return session_id


def _write_fork(con: Any, space_id: str, parent_id: str, chat: NewChat, fork: NewFork,
                chat_updated: int) -> None:
    """Write a branch as a version of the chat; never more recent than the chat, so the
    chat opens on the branch the export showed (``versions.shown_version``)."""
    copies = [replace(t, id=new_id()) for t in chat.turns[: fork.shared]]
    at = chat.turns[fork.shared - 1] if fork.shared else chat.turns[0]
    own = list(fork.turns)
    created = min(own[0].created_at if own else at.created_at, chat_updated)
    updated = min(max(own[-1].created_at if own else created, created), chat_updated - 1)
    fork_id = sessions.insert(
        con, space_id=space_id, title=fork.title, title_source="user", model=chat.model,
        system_prompt=chat.system_prompt, parent_session_id=parent_id,
        forked_from_turn_id=at.id, meta=_meta(chat, fork.branch, fork=True),
        created_at=created, updated_at=updated,
    )
    _insert_turns(con, fork_id, [*copies, *own])


_INSERT_TURNS = T.insert()


def _insert_turns(con: Any, session_id: str, items: Sequence[Turn]) -> None:
    """Insert a new session's turns in one statement (files go to the attachments table)."""
    rows = []
    for seq, turn in enumerate(items):
        values = turns.row_values(attachments.store_blocks(con, turn))
        values["session_id"] = session_id
        values["seq"] = seq
        rows.append(values)
    if rows:
        con.execute(_INSERT_TURNS, rows)
