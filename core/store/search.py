"""Full-text search over turns and session titles.

What a person types is never passed to FTS5 as query syntax. It is cut into
words (a ``"quoted phrase"`` stays one phrase; an unbalanced quote is ignored),
each word is prepared like the indexed text (:func:`core.store.textindex.normalize`)
and becomes a quoted FTS5 phrase, so ``*``, ``-``, ``:``, parentheses and the
words AND/OR/NOT/NEAR are plain text. All words must match (AND). The last
word also matches as a prefix (search as you type) unless the query ends with
a space or a closing quote. Words with no letter or digit (only punctuation or
emoji) are skipped; a query made only of them raises InvalidSearchQuery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError

from core.store.errors import InvalidSearchQuery
from core.store.models import SearchHit
from core.store.snippets import compile_phrases, make_snippet
from core.store.textindex import TOKEN_RE, is_split_char, normalize, turn_text

MAX_QUERY_CHARS = 1000
MAX_PHRASES = 32
MIN_PREFIX_CHARS = 2
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A user query made safe: ``match`` is an FTS5 expression of quoted phrases."""

    match: str
    phrases: list[list[str]]
    prefix_last: bool


def parse(query: str) -> ParsedQuery | None:
    """Turn what a person typed into an FTS5 expression (None for an empty query).

    Raises:
        InvalidSearchQuery: too long, too many words, or nothing searchable in it.
    """
    if not query.strip():
        return None
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidSearchQuery(
            query[:40] + "…", f"it is longer than {MAX_QUERY_CHARS} characters; use a few words"
        )
    parts: list[tuple[str, bool]] = []
    pos = 0
    for m in _QUOTED.finditer(query):
        parts += [(w, False) for w in query[pos : m.start()].split()]
        parts.append((m.group(1), True))
        pos = m.end()
    parts += [(w, False) for w in query[pos:].replace('"', " ").split()]
    phrases: list[list[str]] = []
    last_quoted = False
    for words, quoted in parts:
        tokens = TOKEN_RE.findall(normalize(words))
        if tokens:
            phrases.append(tokens)
            last_quoted = quoted
    if not phrases:
        raise InvalidSearchQuery(query, "it has no letters or digits to look for")
    if len(phrases) > MAX_PHRASES:
        raise InvalidSearchQuery(query[:40] + "…", f"it has more than {MAX_PHRASES} words")
    last = phrases[-1][-1]
    prefix_last = (
        not last_quoted
        and not query[-1].isspace()
        and not query.endswith('"')
        and len(last) >= MIN_PREFIX_CHARS
        and not is_split_char(last[0])
    )
    terms = ['"' + " ".join(tokens) + '"' for tokens in phrases]
    if prefix_last:
        terms[-1] += "*"
    return ParsedQuery(" ".join(terms), phrases, prefix_last)


_SCOPES = {
    None: "",
    "session": """ AND CASE WHEN search_fts.rowid > 0
        THEN EXISTS (SELECT 1 FROM turns t WHERE t.n = search_fts.rowid AND t.session_id = :sid)
        ELSE EXISTS (SELECT 1 FROM sessions s WHERE s.n = -search_fts.rowid AND s.id = :sid)
        END""",
    "space": """ AND CASE WHEN search_fts.rowid > 0
        THEN EXISTS (SELECT 1 FROM turns t JOIN sessions s ON s.id = t.session_id
                     WHERE t.n = search_fts.rowid AND s.space_id = :space)
        ELSE EXISTS (SELECT 1 FROM sessions s WHERE s.n = -search_fts.rowid
                     AND s.space_id = :space)
        END""",
}

_TURN_HITS = text(
    "SELECT t.n, t.id, t.session_id, t.blocks, t.created_at, s.title "
    "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.n IN :ns"
).bindparams(bindparam("ns", expanding=True))
_TITLE_HITS = text(
    "SELECT s.n, s.id, s.title, s.updated_at FROM sessions s WHERE s.n IN :ns"
).bindparams(bindparam("ns", expanding=True))


def search(
    con: Connection,
    query: str,
    session_id: str | None,
    space_id: str | None,
    limit: int,
) -> list[SearchHit]:
    """See :meth:`core.store.store.Store.search`."""
    parsed = parse(query)
    if parsed is None or limit <= 0:
        return []
    scope = "session" if session_id is not None else "space" if space_id is not None else None
    sql = (
        "SELECT search_fts.rowid AS r, rank FROM search_fts WHERE search_fts MATCH :q"
        + _SCOPES[scope]
        + " ORDER BY rank LIMIT :limit"
    )
    params = {"q": parsed.match, "limit": limit, "sid": session_id, "space": space_id}
    try:
        ranked = con.execute(text(sql), params).all()
    except OperationalError as exc:  # FTS5 rejected the expression: a bug in parse()
        if "fts5" in str(exc).lower():
            raise InvalidSearchQuery(query, "the search index could not read it") from exc
        raise
    pattern = compile_phrases(parsed.phrases, parsed.prefix_last)
    turn_ns = [r.r for r in ranked if r.r > 0]
    title_ns = [-r.r for r in ranked if r.r < 0]
    hits: dict[int, SearchHit] = {}
    if turn_ns:
        for row in con.execute(_TURN_HITS, {"ns": turn_ns}):
            snippet = make_snippet(turn_text(row.blocks), pattern)
            hits[row.n] = SearchHit(row.session_id, row.id, row.title, snippet, 0.0, row.created_at)
    if title_ns:
        for row in con.execute(_TITLE_HITS, {"ns": title_ns}):
            snippet = make_snippet(row.title or "", pattern)
            hits[-row.n] = SearchHit(row.id, None, row.title, snippet, 0.0, row.updated_at)
    return [
        SearchHit(h.session_id, h.turn_id, h.session_title, h.snippet, float(r.rank), h.created_at)
        for r in ranked
        if (h := hits.get(r.r)) is not None
    ]
