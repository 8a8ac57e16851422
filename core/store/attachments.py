"""Attached files (images, PDFs) stored once, by content, in the ``attachments`` table.

A file's key is the sha256 of its bytes (64 lowercase hex characters). When a
turn is saved (:func:`store_blocks`, called by ``turns._save``), every image
or document block that carries ``data`` — at the top level or inside a
tool_result — has its bytes put in the table (once: the same bytes attached
again, or in another session, reuse the row) and is saved with
``attachment_id`` set and ``data`` left out of the turn's JSON. Reading turns
back is therefore cheap however many files a session holds; :func:`hydrate`
puts the bytes back (base64) right before a request is built.

The triggers of :mod:`parley.core.store.schema` keep ``turn_attachments`` (which turn
references which file) in step with ``turns.blocks`` and delete a file when its
last reference goes, in the deleting transaction; forks share their parent's
rows. Functions take a Connection inside the caller's transaction.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeAlias

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from parley.core.content import (
    Block,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolResultPart,
    Turn,
    now_ms,
)
from parley.core.store.errors import AttachmentNotFound
from parley.core.store.schema import attachments as A

log = logging.getLogger(__name__)

File: TypeAlias = ImageBlock | DocumentBlock
#: Ids per ``IN (...)`` query (SQLite's default host-parameter limit is far above).
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class AttachmentInfo:
    """One stored file, without its bytes.

    Attributes:
        sha256: its id (the sha256 of the bytes, lowercase hex).
        media_type: e.g. ``image/png``, ``application/pdf``.
        size_bytes: the size of the bytes (not of their base64), bytes.
        created_at: when it was first stored, epoch ms.
    """

    sha256: str
    media_type: str
    size_bytes: int
    created_at: int


def sha256_hex(data: bytes) -> str:
    """Return the id a file's bytes are stored under: their sha256, lowercase hex."""
    return hashlib.sha256(data).hexdigest()


def _decode(block: File) -> bytes | None:
    try:
        return base64.b64decode(block.data or "", validate=True)
    except (binascii.Error, ValueError):
        return None


def put(con: Connection, data: bytes, media_type: str) -> str:
    """Store bytes once and return their id (an existing row is kept as it is)."""
    sha = sha256_hex(data)
    if con.execute(select(A.c.sha256).where(A.c.sha256 == sha)).first() is None:
        con.execute(
            A.insert().values(
                sha256=sha,
                media_type=media_type,
                size_bytes=len(data),
                data=data,
                created_at=now_ms(),
            )
        )
    return sha


def _require(con: Connection, sha: str) -> None:
    if con.execute(select(A.c.sha256).where(A.c.sha256 == sha)).first() is None:
        raise AttachmentNotFound(sha)


def _store_file(con: Connection, block: File) -> File:
    raw = _decode(block) if block.data else None
    if raw is not None:  # inline bytes: store them, keep a reference
        sha = put(con, raw, block.media_type)
        empty = None if isinstance(block, ImageBlock) else ""
        return replace(block, data=empty, attachment_id=sha)  # type: ignore[arg-type]
    if not block.data and block.attachment_id is not None:
        _require(con, block.attachment_id)
    return block  # no data, or data that is not base64: kept in the turn as it is


def store_blocks(con: Connection, turn: Turn) -> Turn:
    """Return the turn as it is saved: its files moved to the ``attachments`` table.

    The turn's own image and document blocks (the files a person attached)
    are stored; files inside tool results stay in the turn's JSON.

    Args:
        con: inside the saving transaction.
        turn: the turn about to be written.

    Returns:
        ``turn`` itself when it has no image or document block (the common
        case, a few µs); else a copy whose image/document blocks with base64
        ``data`` carry ``attachment_id`` and no ``data``. A block holding
        both has its data stored under the data's own sha256 (the data wins
        over a stale id). Data that is not valid base64 is kept inline.

    Raises:
        AttachmentNotFound: a block references (without data) a file that is not stored.
    """
    if not any(isinstance(b, ImageBlock | DocumentBlock) for b in turn.blocks):
        return turn
    return turn.with_blocks(
        _store_file(con, b) if isinstance(b, ImageBlock | DocumentBlock) else b
        for b in turn.blocks
    )


def data_of(con: Connection, sha: str) -> bytes:
    """Return a stored file's bytes. Raises AttachmentNotFound."""
    data = con.execute(select(A.c.data).where(A.c.sha256 == sha)).scalar()
    if data is None:
        raise AttachmentNotFound(sha)
    return bytes(data)


def infos(con: Connection, shas: Iterable[str]) -> dict[str, AttachmentInfo]:
    """Return ``{sha: info}`` for the stored ones among ``shas`` (unknown ids are left out)."""
    wanted = list(dict.fromkeys(shas))
    found: dict[str, AttachmentInfo] = {}
    cols = (A.c.sha256, A.c.media_type, A.c.size_bytes, A.c.created_at)
    for i in range(0, len(wanted), _CHUNK):
        q = select(*cols).where(A.c.sha256.in_(wanted[i : i + _CHUNK]))
        for r in con.execute(q):
            found[r.sha256] = AttachmentInfo(r.sha256, r.media_type, r.size_bytes, r.created_at)
    return found


def usage(con: Connection) -> tuple[int, int]:
    """Return ``(files, bytes)`` stored: how many files and their total size."""
    row = con.execute(select(func.count(), func.coalesce(func.sum(A.c.size_bytes), 0))).one()
    return int(row[0]), int(row[1])


# --- hydrate ----------------------------------------------------------------


def _refs(blocks: Iterable[Block | ToolResultPart], into: set[str]) -> None:
    for b in blocks:
        if isinstance(b, ImageBlock | DocumentBlock):
            if b.attachment_id is not None and not b.data:
                into.add(b.attachment_id)
        elif isinstance(b, ToolResultBlock):
            _refs(b.content, into)


def missing_data(turns: Sequence[Turn]) -> set[str]:
    """Return the ids of the files the turns reference without their data."""
    shas: set[str] = set()
    for t in turns:
        _refs(t.blocks, shas)
    return shas


def _fill(block: File, data: dict[str, str]) -> File | TextBlock:
    if block.data or block.attachment_id is None:
        return block
    b64 = data.get(block.attachment_id)
    if b64 is None:  # cannot happen through the store (a foreign key and triggers)
        log.warning("attachment %s is missing from the store", block.attachment_id)
        what = "image" if isinstance(block, ImageBlock) else "document"
        return TextBlock(f"[{what} {block.media_type}: the file is missing from Parley's data]")
    return replace(block, data=b64)


def _fill_part(part: ToolResultPart, data: dict[str, str]) -> ToolResultPart:
    return _fill(part, data) if isinstance(part, ImageBlock | DocumentBlock) else part


def _fill_turn(turn: Turn, data: dict[str, str]) -> Turn:
    refs: set[str] = set()
    _refs(turn.blocks, refs)
    if not refs:
        return turn
    out: list[Block] = []
    for b in turn.blocks:
        if isinstance(b, ImageBlock | DocumentBlock):
            out.append(_fill(b, data))
        elif isinstance(b, ToolResultBlock):
            out.append(replace(b, content=tuple(_fill_part(p, data) for p in b.content)))
        else:
            out.append(b)
    return turn.with_blocks(out)


def hydrate(con: Connection, turns: Sequence[Turn]) -> list[Turn]:
    """See :meth:`parley.core.store.store.Store.hydrate`."""
    shas = list(missing_data(turns))
    if not shas:
        return list(turns)
    data: dict[str, str] = {}
    for i in range(0, len(shas), _CHUNK):
        q = select(A.c.sha256, A.c.data).where(A.c.sha256.in_(shas[i : i + _CHUNK]))
        for sha, raw in con.execute(q):
            data[sha] = base64.b64encode(raw).decode("ascii")
    return [_fill_turn(t, data) for t in turns]
