"""Space documents: files a space gives to every chat in it (rows of ``space_documents``).

A document keeps its bytes (so it can be saved again or read anew) and its text by
page in ``space_document_pages`` (read by :mod:`parley.core.attachments.document_text`
before the write). Adding, replacing and removing are one transaction each; a
space's deletion takes its documents with it (foreign-key cascade).

:func:`search` finds pages by words: SQLite's FTS5 index ``space_document_fts``
(bm25 order, ``snippet``), or on PostgreSQL ``to_tsvector`` / ``websearch_to_tsquery``
over the pages of that one space (``ts_rank`` order, ``ts_headline``) — a space's
documents are few, so no stored index is kept there.

Functions take a Connection inside the caller's transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, select, text, update
from sqlalchemy.engine import Connection, Row

from parley.core.attachments.document_text import DocumentText
from parley.core.content import new_id, now_ms
from parley.core.store.errors import DocumentNotFound, InvalidSearchQuery
from parley.core.store.schema import space_document_pages as P
from parley.core.store.schema import space_documents as D
from parley.core.store.spaces import get as get_space

#: Marks around matched words in :attr:`DocumentHit.snippet`.
MATCH_START, MATCH_END = "**", "**"
_WORD = re.compile(r"\w+", re.UNICODE)
_PHRASE = re.compile(r'"([^"]*)"')
MAX_QUERY_CHARS = 500


@dataclass(frozen=True, slots=True)
class SpaceDocument:
    """One document of a space, without its bytes or text.

    Attributes:
        id: its id (32 hex characters).
        space_id: the space it belongs to.
        name: the file name shown.
        media_type: ``application/pdf`` or ``text/plain``.
        sha256: the sha256 of its bytes (lowercase hex).
        size_bytes: the size of the file, bytes.
        pages: its page count (1 for a text file).
        tokens: the estimated tokens of its text.
        created_at / updated_at: epoch ms (updated when replaced).
    """

    id: str
    space_id: str
    name: str
    media_type: str
    sha256: str
    size_bytes: int
    pages: int
    tokens: int
    created_at: int
    updated_at: int


@dataclass(frozen=True, slots=True)
class DocumentHit:
    """One page matching a search.

    Attributes:
        document_id / name: the document.
        page: the page number, from 1.
        pages: the document's page count.
        snippet: text around the match, matched words in ``**…**``.
    """

    document_id: str
    name: str
    page: int
    pages: int
    snippet: str


_COLUMNS = (D.c.id, D.c.space_id, D.c.name, D.c.media_type, D.c.sha256, D.c.size_bytes,
            D.c.pages, D.c.tokens, D.c.created_at, D.c.updated_at)


def _document(row: Row) -> SpaceDocument:
    return SpaceDocument(*row)


def get(con: Connection, document_id: str) -> SpaceDocument:
    """Return one document. Raises DocumentNotFound."""
    row = con.execute(select(*_COLUMNS).where(D.c.id == document_id)).first()
    if row is None:
        raise DocumentNotFound(document_id)
    return _document(row)


def list_for(con: Connection, space_id: str) -> list[SpaceDocument]:
    """Return a space's documents in the order they were added."""
    rows = con.execute(
        select(*_COLUMNS).where(D.c.space_id == space_id).order_by(D.c.position, D.c.created_at)
    )
    return [_document(r) for r in rows]


def _write_pages(con: Connection, document_id: str, pages: list[str]) -> None:
    if pages:
        con.execute(P.insert(), [
            {"document_id": document_id, "page": i, "text": t} for i, t in enumerate(pages, 1)
        ])


def unique_name(con: Connection, space_id: str, name: str, but: str | None = None) -> str:
    """``name``, or "notes (2).txt", "notes (3).txt"… when another document of the space
    (not ``but``, a document's id) has it already: the model and its search cite
    documents by name, so two must not share one."""
    rows = con.execute(select(D.c.name).where(D.c.space_id == space_id, D.c.id != (but or "")))
    taken = {r[0].casefold() for r in rows}
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    n, candidate = 1, name
    while candidate.casefold() in taken:
        n += 1
        candidate = f"{stem} ({n}){dot}{ext}"
    return candidate


def add(con: Connection, space_id: str, name: str, data: bytes, doc: DocumentText) -> SpaceDocument:
    """Add a document to a space, placed last.

    Args:
        space_id: the space.
        name: the file name shown; "notes (2).txt" when the space has a "notes.txt"
            already (:func:`unique_name`: compare the returned document's name).
        data: the file's bytes.
        doc: its text as :func:`~parley.core.attachments.document_text.read_document` read it.

    Raises:
        SpaceNotFound: no such space.
    """
    get_space(con, space_id)
    position = con.execute(
        select(func.coalesce(func.max(D.c.position), -1) + 1).where(D.c.space_id == space_id)
    ).scalar_one()
    document_id, now = new_id(), now_ms()
    name = unique_name(con, space_id, name)
    con.execute(D.insert().values(
        id=document_id, space_id=space_id, name=name, media_type=doc.media_type,
        sha256=hashlib.sha256(data).hexdigest(), size_bytes=len(data), data=data,
        pages=len(doc.pages), tokens=doc.tokens, position=position, created_at=now,
        updated_at=now,
    ))
    _write_pages(con, document_id, doc.pages)
    return get(con, document_id)


def replace(con: Connection, document_id: str, name: str, data: bytes,
            doc: DocumentText) -> SpaceDocument:
    """Put a new file in a document's place (its position kept; its name made unique in
    the space as for :func:`add`). Raises DocumentNotFound."""
    name = unique_name(con, get(con, document_id).space_id, name, but=document_id)
    con.execute(delete(P).where(P.c.document_id == document_id))
    con.execute(update(D).where(D.c.id == document_id).values(
        name=name, media_type=doc.media_type, sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data), data=data, pages=len(doc.pages), tokens=doc.tokens,
        updated_at=now_ms(),
    ))
    _write_pages(con, document_id, doc.pages)
    return get(con, document_id)


def remove(con: Connection, document_id: str) -> None:
    """Remove a document and its text. Raises DocumentNotFound."""
    get(con, document_id)
    con.execute(delete(P).where(P.c.document_id == document_id))
    con.execute(delete(D).where(D.c.id == document_id))


def data_of(con: Connection, document_id: str) -> bytes:
    """Return a document's bytes. Raises DocumentNotFound."""
    data = con.execute(select(D.c.data).where(D.c.id == document_id)).scalar()
    if data is None:
        raise DocumentNotFound(document_id)
    return bytes(data)


def page_texts(con: Connection, document_id: str) -> list[str]:
    """Return a document's text by page (index 0 is page 1)."""
    rows = con.execute(
        select(P.c.text).where(P.c.document_id == document_id).order_by(P.c.page)
    )
    return [r[0] for r in rows]


def _fts_query(query: str) -> str:
    """Words matched as typed (all of them), "quoted" phrases kept together."""
    parts = [" ".join(_WORD.findall(p)) for p in _PHRASE.findall(query)]
    rest = _PHRASE.sub(" ", query)
    parts += _WORD.findall(rest)
    return " ".join(f'"{p}"' for p in parts if p)


def search(con: Connection, space_id: str, query: str, limit: int = 8,
           document_ids: Sequence[str] | None = None) -> list[DocumentHit]:
    """Find the pages of a space's documents that hold every word of ``query``.

    Args:
        space_id: the space whose documents are searched.
        query: words (all must match; "quoted" words must be next to each other).
        limit: at most this many pages.
        document_ids: only these documents (None: all of the space's; []: none).

    Returns:
        The best pages first (bm25 on SQLite, ``ts_rank`` on PostgreSQL).

    Raises:
        InvalidSearchQuery: no word in the query, or it is longer than
            :data:`MAX_QUERY_CHARS`.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidSearchQuery(query[:40] + "…", f"longer than {MAX_QUERY_CHARS} characters")
    match = _fts_query(query)
    if not match:
        raise InvalidSearchQuery(query, "it has no word to look for")
    if document_ids is not None and not document_ids:
        return []
    only = " AND d.id IN :ids" if document_ids is not None else ""
    params = {"q": match, "space": space_id, "limit": limit}
    if document_ids is not None:
        params["ids"] = list(document_ids)
    if con.dialect.name == "postgresql":
        return _search_pg(con, only, params)
    sql = text(
        "SELECT d.id, d.name, p.page, d.pages, "
        "snippet(space_document_fts, 0, :a, :b, '…', 24) "
        "FROM space_document_fts JOIN space_document_pages p ON p.n = space_document_fts.rowid "
        "JOIN space_documents d ON d.id = p.document_id "
        f"WHERE space_document_fts MATCH :q AND d.space_id = :space{only} "
        "ORDER BY space_document_fts.rank LIMIT :limit"
    )
    rows = con.execute(_expanding(sql, only), {"a": MATCH_START, "b": MATCH_END, **params})
    return [DocumentHit(*r) for r in rows]


def _expanding(sql: Any, only: str) -> Any:
    return sql.bindparams(bindparam("ids", expanding=True)) if only else sql


def _search_pg(con: Connection, only: str, params: dict[str, Any]) -> list[DocumentHit]:
    sql = text(
        "SELECT d.id, d.name, p.page, d.pages, ts_headline('simple', p.text, q, "
        "'StartSel=**, StopSel=**, MaxWords=30, MinWords=12') "
        "FROM space_document_pages p JOIN space_documents d ON d.id = p.document_id, "
        "websearch_to_tsquery('simple', :q) q "
        f"WHERE d.space_id = :space{only} AND to_tsvector('simple', p.text) @@ q "
        "ORDER BY ts_rank(to_tsvector('simple', p.text), q) DESC, d.position, p.page "
        "LIMIT :limit"
    )
    rows = con.execute(_expanding(sql, only), params)
    return [DocumentHit(*r) for r in rows]
