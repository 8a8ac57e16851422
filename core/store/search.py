"""Full-text search over turns and session titles.

What a person types is made safe by :func:`parley.core.store.query.parse`: quoted
phrases, never FTS5 query syntax. All words must match (AND). The last
word also matches as a prefix (search as you type) unless the query ends with
a space or a closing quote, or the word is shorter than :func:`min_prefix_chars`
(4 characters; 3 in files with a 3-character prefix index). Words with no
letter or digit (only punctuation or emoji) are skipped; a query made only of
them raises InvalidSearchQuery.

Order: by FTS5's bm25 (titles 4× body) over every matching title and the
newest :data:`RECENT_WINDOW` matching turns; but when a phrase of the query is
common (a word of it in more than :data:`COMMON_ROWS` rows), newest first — matching titles
(newest session first), then turns (newest first) — with rank 0.0. Both keep a
search over 1M turns within tens of milliseconds. A session scope is a token
of the index itself (cheap); a space scope filters matches by their session's space.

One hit per message: every turn of a chat is indexed once, whatever branch it is on
(edits and regenerations are branches of the chat's tree, nothing copied; a hit on
another branch than the one shown is opened with ``Store.show_branch``, and says so:
``SearchHit.off_path``), and a message
copied into forks is one hit, in the chat where it was written, with the number of
other chats holding it (:mod:`parley.core.store.fork_copies`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.engine import Connection, CursorResult
from sqlalchemy.exc import OperationalError

from parley.core.store.dialect import is_postgresql
from parley.core.store.errors import InvalidSearchQuery
from parley.core.store.fork_copies import MAX_CANDIDATES, Collapser, RankedRows
from parley.core.store.models import SearchHit
from parley.core.store.query import MIN_PREFIX_CHARS, ParsedQuery, parse
from parley.core.store.schema import SCOPE_MARK, TITLE_ROWID_BASE, turn_path
from parley.core.store.snippets import compile_phrases, hit_text, make_snippet, plain_words

_PREFIX_OPTION = re.compile(r"\bprefix\s*=\s*'([\d\s,]+)'", re.IGNORECASE)


#: Ranking by relevance looks at the newest this-many matching turns (plus
#: every matching title): bm25 scores every row it ranks.
RECENT_WINDOW = 2000
#: A word found in more rows than this is "common". bm25 first counts every
#: row holding each phrase (its IDF), which for a common word in 1M turns costs
#: more than the whole search budget — and gives such a word almost no weight.
#: So a query with a common word lists its matches newest first instead.
COMMON_ROWS = 20_000

_IN_SPACE = """ AND CASE WHEN search_fts.rowid < :tb
    THEN EXISTS (SELECT 1 FROM turns t JOIN sessions s ON s.id = t.session_id
                 WHERE t.n = search_fts.rowid AND s.space_id = :space)
    ELSE EXISTS (SELECT 1 FROM sessions s WHERE s.n = search_fts.rowid - :tb
                 AND s.space_id = :space)
    END"""
_CUT = (
    "SELECT search_fts.rowid FROM search_fts WHERE search_fts MATCH :q AND search_fts.rowid < :tb"
    "{scope} ORDER BY search_fts.rowid DESC LIMIT 1 OFFSET :window - 1"
)
_RANKED = (
    "SELECT search_fts.rowid AS r, rank FROM search_fts WHERE search_fts MATCH :q "
    "AND search_fts.rowid >= :cut{scope} ORDER BY rank LIMIT :limit"
)
_NEWEST = (
    "SELECT search_fts.rowid AS r, 0.0 AS rank FROM search_fts WHERE search_fts MATCH :q"
    "{scope} ORDER BY search_fts.rowid DESC LIMIT :limit"
)
_PROBE = text(
    "SELECT search_fts.rowid FROM search_fts WHERE search_fts MATCH :q "
    "ORDER BY search_fts.rowid DESC LIMIT 1 OFFSET :k"
)
_BLOCKS = text("SELECT n, role, model, blocks FROM turns WHERE n IN :ns").bindparams(
    bindparam("ns", expanding=True)
)
_SHOWN = select(turn_path.c.turn_id).where(
    turn_path.c.turn_id.in_(bindparam("ids", expanding=True))
)


def _shown(con: Connection, turn_ids: list[str]) -> set[str]:
    """Those of ``turn_ids`` on their chat's path shown (one lookup in ``turn_path_by_turn``)."""
    return set(con.execute(_SHOWN, {"ids": turn_ids}).scalars()) if turn_ids else set()


def min_prefix_chars(con: Connection) -> int:
    """Characters the last word of a query needs to match as a prefix in this file.

    Returns:
        :data:`MIN_PREFIX_CHARS`, or less where the file's FTS5 index has a
        prefix index for every length from there up (``prefix='3'`` in files
        made before ``schema.SEARCH_DDL`` dropped it: 3).
    """
    if is_postgresql(con):
        return MIN_PREFIX_CHARS
    ddl = con.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'search_fts'"
    ).scalar()
    m = _PREFIX_OPTION.search(ddl or "")
    lengths = {int(x) for x in re.split(r"[\s,]+", m.group(1).strip())} if m else set()
    shortest = MIN_PREFIX_CHARS
    while shortest - 1 in lengths:
        shortest -= 1
    return shortest


def match_expression(parsed: ParsedQuery, session_id: str | None) -> str:
    """The FTS5 expression: the user's phrases, and the session's scope token (schema)."""
    if session_id is None:
        return parsed.match
    return parsed.match + ' "' + SCOPE_MARK + session_id.encode("utf-8").hex() + '"'


def _is_common(con: Connection, term: str) -> bool:
    """True if more than COMMON_ROWS rows hold ``term`` (reads at most that many, newest first).

    Probing single words, not phrases: a phrase of two common words is rare,
    but finding that out (or its bm25 IDF) reads both words' whole doclists.
    """
    probe = {"q": term, "k": COMMON_ROWS}
    return con.execute(_PROBE, probe).first() is not None


def _ranked(
    con: Connection, parsed: ParsedQuery, expr: str, space_id: str | None, limit: int
) -> CursorResult[Any]:
    """Return ``(rowid, rank)`` rows, best first: by bm25, or newest first (rank 0.0).

    The result is read as needed (``fetchmany``): newest-first rows are found one
    by one as they are read; ranked ones are all scored and sorted before the first.
    """
    scope = _IN_SPACE if space_id is not None else ""
    params = {
        "q": expr,
        "tb": TITLE_ROWID_BASE,
        "space": space_id,
        "window": RECENT_WINDOW,
        "limit": limit,
    }
    if any(_is_common(con, w) for w in parsed.words):
        return con.execute(text(_NEWEST.format(scope=scope)), params)
    cut = con.execute(text(_CUT.format(scope=scope)), params).scalar()
    params["cut"] = cut if cut is not None else -1
    return con.execute(text(_RANKED.format(scope=scope)), params)


def search(
    con: Connection,
    query: str,
    session_id: str | None,
    space_id: str | None,
    limit: int,
    exclude_session_ids: Collection[str] = (),
) -> list[SearchHit]:
    """See :meth:`parley.core.store.store.Store.search`."""
    parsed = parse(query, min_prefix_chars(con))
    if parsed is None or limit <= 0:
        return []
    expr = match_expression(parsed, session_id)
    space = space_id if session_id is None else None
    collapser = Collapser(con, space, session_id is None, exclude_session_ids)
    try:
        if is_postgresql(con):
            from parley.core.store.postgres import search as pg_search  # PostgreSQL only

            ranked: RankedRows = pg_search.ranked(
                con, parsed, session_id, space, max(limit, MAX_CANDIDATES), RECENT_WINDOW,
                COMMON_ROWS)
        else:
            ranked = _ranked(con, parsed, expr, space, max(limit, MAX_CANDIDATES))
        try:
            picks = collapser.pick(ranked, limit)
        finally:
            ranked.close()
    except OperationalError as exc:  # FTS5 rejected the expression: a bug in parse()
        if "fts5" in str(exc).lower():
            raise InvalidSearchQuery(query, "the search index could not read it") from exc
        raise
    pattern = compile_phrases(parsed.phrases, parsed.prefix_last)
    words = plain_words(parsed.phrases)
    sources = [p.source for _r, p in picks if p.source < TITLE_ROWID_BASE]
    rows: dict[int, Any] = {}
    if sources:
        rows.update((r.n, r) for r in con.execute(_BLOCKS, {"ns": sources}))
    shown = _shown(con, [p.turn_id for _r, p in picks if p.turn_id])
    hits = []
    for row, p in picks:
        turn = rows.get(p.source) if p.turn_id else None
        body, part = hit_text(turn.blocks, pattern, words) if turn is not None else ("", "")
        hits.append(SearchHit(
            p.session_id,
            p.turn_id,
            p.title,
            make_snippet(body if p.turn_id else p.title or "", pattern, words=words),
            float(row.rank),
            p.created_at,
            p.copies,
            p.turn_id is not None and p.turn_id not in shown,
            role=turn.role if turn is not None else "",
            model=turn.model if turn is not None else None,
            part=part,
        ))
    return hits
