"""What a person types into a search, made safe: phrases of prepared tokens.

The query is never passed to the index as query syntax. It is cut into words (a
``"quoted phrase"`` stays one phrase; an unbalanced quote is ignored), each word is
prepared like the indexed text (:func:`parley.core.store.textindex.normalize`) and becomes
a quoted phrase, so ``*``, ``-``, ``:``, parentheses and AND/OR/NOT/NEAR are plain text.
Both backends search with the same :class:`ParsedQuery`: SQLite's FTS5
(:mod:`parley.core.store.search`) and PostgreSQL (:mod:`parley.core.store.postgres.search`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from parley.core.store.errors import InvalidSearchQuery
from parley.core.store.textindex import TOKEN_RE, is_split_char, normalize

MAX_QUERY_CHARS = 1000
MAX_PHRASES = 32
#: The last word of a query of this many characters or more also matches as a
#: prefix. Without a prefix index, FTS5 merges the doclists of every indexed word
#: that starts with it: measured on 1M turns, 10-70 ms for 4 characters but up to
#: 450 ms for 3. Files whose index has a 3-character prefix index (made before
#: schema.SEARCH_DDL dropped it) keep 3 (:func:`parley.core.store.search.min_prefix_chars`).
MIN_PREFIX_CHARS = 4
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A user query made safe.

    Attributes:
        match: an FTS5 expression of quoted phrases (implicit AND).
        phrases: each phrase's prepared tokens (for highlighting).
        prefix_last: the last phrase ends with a prefix (``*``).
        words: every token as its own quoted FTS5 term (the last one with ``*``
            when ``prefix_last``): what the search probes to tell a common word.
    """

    match: str
    phrases: list[list[str]]
    prefix_last: bool
    words: tuple[str, ...] = ()


def parse(query: str, min_prefix: int = MIN_PREFIX_CHARS) -> ParsedQuery | None:
    """Turn what a person typed into an FTS5 expression (None for an empty query).

    Args:
        query: what the person typed.
        min_prefix: characters the last word needs to match as a prefix too.

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
        and len(last) >= min_prefix
        and not is_split_char(last[0])
    )
    terms = ['"' + " ".join(tokens) + '"' for tokens in phrases]
    if prefix_last:
        terms[-1] += "*"
    probes = ['"' + tok + '"' for tokens in phrases for tok in tokens]
    if prefix_last:
        probes[-1] += "*"
    return ParsedQuery(" ".join(terms), phrases, prefix_last, tuple(dict.fromkeys(probes)))
