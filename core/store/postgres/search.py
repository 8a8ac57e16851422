"""Ranking search matches on PostgreSQL: tsvector columns, GIN indexes, websearch_to_tsquery.

:func:`parley.core.store.search.search` parses what the person typed the same way on
both backends (:func:`parley.core.store.query.parse`), collapses copies in forks and
makes snippets the same way; only the ranked ``(r, rank)`` rows come from here
when the connection is PostgreSQL. ``r`` follows the SQLite index's rowids: a
turn's ``n``, or :data:`parley.core.store.schema.TITLE_ROWID_BASE` + a session's ``n``
for a title. ``rank`` is ``-ts_rank`` (lower is better, like bm25's), titles
weighing 4× body text, among every matching title and the newest
:data:`parley.core.store.search.RECENT_WINDOW` matching turns; but when a word of
the query is in more than :data:`parley.core.store.search.COMMON_ROWS` turns,
newest first with rank 0.0, as on SQLite.

Cost: a turn's ``tsvector`` is mostly stored out of line (TOAST), so reading it
(``@@`` checked on the row, ``ts_rank``) costs 5-20 µs a row; over 1M turns a
plan that checks every row takes seconds. So the statements here run with
sequential and plain index scans off (the GIN index is read as a bitmap, whose
rows need no second check unless the query is a phrase), and never read more
than about :data:`parley.core.store.search.COMMON_ROWS` rows: a word is probed
for being common by counting at most that many of its rows; the newest
matches of a common word are read in ranges of ``n`` from the newest, growing
until enough are read (a phrase of common words, say ``"with was"``, is checked
only on the rows of the range holding both words).

The query: every phrase of the parsed query goes to ``websearch_to_tsquery``
as a quoted phrase (so ``or``, ``-`` and quotes typed by the person are plain
words, as on SQLite); the last word, when it matches as a prefix too, is added
with ``to_tsquery``'s ``:*``. Words are the prepared tokens of
:func:`parley.core.store.query.parse` (letters, digits and marks only).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import text
from sqlalchemy.engine import Connection

from parley.core.store.postgres.sql import SEARCH_CONFIG
from parley.core.store.schema import TITLE_ROWID_BASE

if TYPE_CHECKING:
    from parley.core.store.query import ParsedQuery

_CFG = f"'{SEARCH_CONFIG}'::regconfig"


def tsquery_parts(parsed: ParsedQuery) -> tuple[str, str]:
    """``(websearch text, prefix tsquery text)`` for a parsed query ('' when unused).

    Args:
        parsed: from :func:`parley.core.store.query.parse`.

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


#: Turns (of ``n``) read first from the newest for a common word's matches; each
#: further range is twice as long.
FIRST_SPAN = 20_000
#: A word estimated in this many times ``COMMON_ROWS`` turns is common without counting
#: (counting reads ``COMMON_ROWS`` scattered rows: ~100 ms at 1M turns; building a
#: common word's bitmap alone ~40 ms).
SURELY_COMMON = 1.25
#: … and estimated in this many turns at least (small tables' estimates are rough).
MIN_SURE = 1000
#: Planner settings of the search's statements (module doc): the GIN index as a
#: bitmap, and memory enough to keep a common word's bitmap exact (a lossy one
#: checks every row of its pages again).
_PLANNER = {"enable_seqscan": "off", "enable_indexscan": "off", "work_mem": "64MB"}


class Row(NamedTuple):
    """One ranked row: ``r`` (a turn's ``n`` or a title's rowid), ``rank``."""

    r: int
    rank: float


class Rows:
    """Ranked rows made as they are read (:class:`parley.core.store.fork_copies.RankedRows`).

    Holds the search's planner settings until :meth:`close`, which puts back the
    connection's own.
    """

    def __init__(self, con: Connection, rows: Iterator[Row], saved: dict[str, str]) -> None:
        self._con = con
        self._rows = rows
        self._saved = saved

    def fetchmany(self, size: int) -> Sequence[Row]:
        """The next ``size`` rows at most (an empty list at the end)."""
        return list(islice(self._rows, size))

    def close(self) -> None:
        """Stop reading and restore the planner settings."""
        if self._saved:
            _set(self._con, self._saved)
            self._saved = {}


def _set(con: Connection, settings: dict[str, str]) -> None:
    """Set ``settings`` for the rest of the transaction (``set_config(…, true)``)."""
    calls = ", ".join(f"set_config('{k}', :{k}, true)" for k in settings)
    con.execute(text(f"SELECT {calls}"), settings)


def _plan(con: Connection) -> dict[str, str]:
    """Apply :data:`_PLANNER`; return the settings it replaced."""
    names = ", ".join(f"current_setting('{k}')" for k in _PLANNER)
    saved = dict(zip(_PLANNER, con.execute(text(f"SELECT {names}")).one(), strict=True))
    _set(con, _PLANNER)
    return saved


def _word_queries(parsed: ParsedQuery) -> list[tuple[str, str]]:
    """Each word of the query alone as ``(SQL tsquery expression, its text)``, deduplicated."""
    out: dict[tuple[str, str], None] = {}
    tokens = [tok for phrase in parsed.phrases for tok in phrase]
    for k, tok in enumerate(tokens):
        if parsed.prefix_last and k == len(tokens) - 1:
            out[(f"to_tsquery({_CFG}, :w)", f"'{tok}':*")] = None
        else:
            out[(f"websearch_to_tsquery({_CFG}, :w)", f'"{tok}"')] = None
    return list(out)


def _estimate(con: Connection, expr: str, word: str) -> float:
    """The planner's estimate of the turns holding ``word`` (from the table's statistics)."""
    literal = "'" + word.replace("'", "''") + "'"
    plan = con.execute(text(
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM turns t WHERE t.search_vec @@ "
        + expr.replace(":w", literal))).scalar()
    return float(plan[0]["Plan"]["Plan Rows"]) if plan else 0.0


def _is_common(con: Connection, parsed: ParsedQuery, common_rows: int) -> bool:
    """True if a word of the query is in over ``common_rows`` turns.

    A word the planner's statistics put in over :data:`SURELY_COMMON` times
    ``common_rows`` turns (and over :data:`MIN_SURE` turns) is taken as common
    without counting; any other is counted, reading ``common_rows`` + 1 rows at most.
    """
    words = _word_queries(parsed)
    if any(_estimate(con, expr, word) > max(SURELY_COMMON * common_rows, MIN_SURE)
           for expr, word in words):
        return True
    for expr, word in words:
        found = con.execute(text(
            f"SELECT count(*) FROM (SELECT 1 FROM turns t WHERE t.search_vec @@ {expr} "
            "LIMIT :lim) x"), {"w": word, "lim": common_rows + 1}).scalar()
        if (found or 0) > common_rows:
            return True
    return False


def ranked(
    con: Connection,
    parsed: ParsedQuery,
    session_id: str | None,
    space_id: str | None,
    limit: int,
    window: int,
    common_rows: int,
) -> Rows:
    """Return ``(r, rank)`` rows, best first, read as needed (see the module docstring).

    Args:
        con: a connection to PostgreSQL, in a read transaction.
        parsed: the parsed query.
        session_id: only this session's turns and title, or None.
        space_id: only sessions of this space, or None.
        limit: rows at most.
        window: rank among this many newest matching turns.
        common_rows: when a word of the query is in more turns than this, rank
            nothing: list the matching titles then turns newest first, rank 0.0 (as
            on SQLite, where a query with a word that common is listed so).

    Returns:
        Rows to :meth:`Rows.close` when read (it restores the planner's settings).
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
    }
    # The query is written out where it is used (not joined from a CTE), so the planner
    # sees it and estimates its matches.
    q = f"({query})"
    low, high = con.execute(text("SELECT min(n), max(n) FROM turns")).one()
    saved = _plan(con)
    if _is_common(con, parsed, common_rows):
        titles = (f"SELECT s.n FROM sessions s WHERE s.title_vec @@ {q}{title_scope} "
                  "ORDER BY s.n DESC LIMIT :limit")
        turns = (f"SELECT t.n FROM turns t WHERE t.search_vec @@ {q}{turn_scope} "
                 "AND t.n > :lo AND t.n <= :hi ORDER BY t.n DESC")

        def newest() -> Iterator[Row]:
            for (n,) in con.execute(text(titles), params):
                yield Row(TITLE_ROWID_BASE + n, 0.0)
            hi, span = high, FIRST_SPAN
            while hi is not None and hi >= low:
                for (n,) in con.execute(text(turns), {**params, "lo": hi - span, "hi": hi}):
                    yield Row(n, 0.0)
                hi, span = hi - span, span * 2

        return Rows(con, islice(newest(), limit), saved)
    # No word in more than common_rows turns: neither are the query's matches. Rank the
    # newest window of them, and every matching title.
    found = [r[0] for r in con.execute(text(
        f"SELECT t.n FROM turns t WHERE t.search_vec @@ {q}{turn_scope}"), params)]
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
    rows = (Row(r, float(rank)) for r, rank in con.execute(text(sql), params))
    return Rows(con, rows, saved)
