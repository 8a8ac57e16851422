"""Ranking search matches on PostgreSQL: tsvector columns, GIN indexes, websearch_to_tsquery.

:func:`parley.core.store.search.search` parses what the person typed the same way on
both backends (:func:`parley.core.store.search.parse`), collapses copies in forks and
makes snippets the same way; only the ranked ``(r, rank)`` rows come from here
when the connection is PostgreSQL. ``r`` follows the SQLite index's rowids: a
turn's ``n``, or :data:`parley.core.store.schema.TITLE_ROWID_BASE` + a session's ``n``
for a title. ``rank`` is ``-ts_rank`` (lower is better, like bm25's), titles
weighing 4× body text, among every matching title and the newest
:data:`parley.core.store.search.RECENT_WINDOW` matching turns; but when more than
:data:`parley.core.store.search.COMMON_ROWS` turns match, newest first with rank 0.0
(ranking them all would cost too much), like a common word on SQLite.

The query: every phrase of the parsed query goes to ``websearch_to_tsquery``
as a quoted phrase (so ``or``, ``-`` and quotes typed by the person are plain
words, as on SQLite); the last word, when it matches as a prefix too, is added
with ``to_tsquery``'s ``:*``. Words are the prepared tokens of
:func:`parley.core.store.search.parse` (letters, digits and marks only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.engine import Connection, CursorResult

from parley.core.store.postgres.sql import SEARCH_CONFIG
from parley.core.store.schema import TITLE_ROWID_BASE

if TYPE_CHECKING:
    from parley.core.store.search import ParsedQuery

_CFG = f"'{SEARCH_CONFIG}'::regconfig"


def tsquery_parts(parsed: ParsedQuery) -> tuple[str, str]:
    """``(websearch text, prefix tsquery text)`` for a parsed query ('' when unused).

    Args:
        parsed: from :func:`parley.core.store.search.parse`.

    Returns:
        The quoted phrases for ``websearch_to_tsquery`` (all but the last when
        it is a prefix), and the ``to_tsquery`` text of the last phrase with
        ``:*`` on its last word (when the query ends with a prefix).
    """
    phrases = list(parsed.phrases)
    prefix = ""
    if parsed.prefix_last:
        last = phrases.pop()
        prefix = " <-> ".join(f"'{tok}'" for tok in last) + ":*"
    web = " ".join('"' + " ".join(tokens) + '"' for tokens in phrases)
    return web, prefix


def ranked(
    con: Connection,
    parsed: ParsedQuery,
    session_id: str | None,
    space_id: str | None,
    limit: int,
    window: int,
    common_rows: int,
) -> CursorResult[Any]:
    """Return ``(r, rank)`` rows, best first (see the module docstring).

    Args:
        con: a connection to PostgreSQL, in a read transaction.
        parsed: the parsed query.
        session_id: only this session's turns and title, or None.
        space_id: only sessions of this space, or None.
        limit: rows at most.
        window: rank among this many newest matching turns.
        common_rows: when more turns than this match, rank nothing: list the
            matching titles then turns newest first, rank 0.0 (as on SQLite, where a
            query with a word that common is listed so).
    """
    web, prefix = tsquery_parts(parsed)
    parts = []
    if web:
        parts.append(f"websearch_to_tsquery({_CFG}, :web)")
    if prefix:
        parts.append(f"to_tsquery({_CFG}, :prefix)")
    query = " && ".join(parts)
    turn_scope = ""
    title_scope = ""
    if session_id is not None:
        turn_scope += " AND t.session_id = :sid"
        title_scope += " AND s.id = :sid"
    elif space_id is not None:
        turn_scope += " AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.session_id " \
                      "AND s.space_id = :space)"
        title_scope += " AND s.space_id = :space"
    params: dict[str, Any] = {
        "web": web,
        "prefix": prefix,
        "sid": session_id,
        "space": space_id,
        "window": window,
        "tb": TITLE_ROWID_BASE,
        "limit": limit,
        "common": common_rows,
    }
    # The query is written out where it is used (not joined from a CTE), so the planner
    # sees it and estimates its matches: a rare word then reads the GIN index, not every row.
    q = f"({query})"
    found = [r[0] for r in con.execute(text(
        f"SELECT t.n FROM turns t WHERE t.search_vec @@ {q}{turn_scope} LIMIT :common + 1"),
        params)]
    if len(found) > common_rows:
        newest = (
            "SELECT r, 0.0 AS rank FROM ("
            f"(SELECT t.n AS r FROM turns t WHERE t.search_vec @@ {q}{turn_scope} "
            "ORDER BY t.n DESC LIMIT :limit) "
            "UNION ALL "
            f"SELECT :tb + s.n AS r FROM sessions s WHERE s.title_vec @@ {q}{title_scope}"
            ") hits ORDER BY r DESC LIMIT :limit"
        )
        return con.execute(text(newest), params)
    # Few enough to rank: the newest window of the turns found, and every matching title.
    params["ns"] = sorted(found, reverse=True)[:window]
    sql = (
        "SELECT r, rank FROM ("
        f"SELECT t.n AS r, -ts_rank(t.search_vec, {q}) AS rank FROM turns t "
        "WHERE t.n = ANY(:ns) "
        "UNION ALL "
        f"SELECT :tb + s.n AS r, -4 * ts_rank(s.title_vec, {q}) AS rank FROM sessions s "
        f"WHERE s.title_vec @@ {q}{title_scope}"
        ") hits ORDER BY rank, r DESC LIMIT :limit"
    )
    return con.execute(text(sql), params)
