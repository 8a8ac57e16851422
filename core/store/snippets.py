"""Search snippets: a short piece of a hit's text with the matches marked.

The index is contentless (see :mod:`parley.core.store.textindex`), so FTS5's own
``snippet()`` cannot be used; the few hits shown are highlighted here instead,
with a pattern per query phrase that, like the index, ignores case, Latin,
Greek and Cyrillic diacritics, and Arabic/Hebrew vowel marks.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict

from parley.core.store.models import MATCH_END, MATCH_START
from parley.core.store.textindex import MARKS, block_text, is_split_char

SNIPPET_CHARS = 160
CONTEXT_BEFORE = 40
#: A text's first this many characters are searched with the pattern; past them (a
#: huge pasted text) a match is looked for first as its words written plainly
#: (``str.find``, ~1 ms a megabyte, against ~40-100 ms for the pattern), the pattern
#: tried around each place found (:func:`first_match`).
MAX_SCAN_CHARS = 200_000
#: Places of a word tried past MAX_SCAN_CHARS before the whole rest is searched.
MAX_PROBES = 200
_OPTIONAL_MARKS = f"[{MARKS}\u0640]*"
_WORD = r"[^\W_]"


def _variants() -> dict[str, str]:
    table: dict[str, set[str]] = defaultdict(set)
    ranges = [(0xC0, 0x250), (0x370, 0x500), (0x1E00, 0x2000)]
    for a, b in ranges:
        for cp in range(a, b):
            ch = chr(cp)
            d = unicodedata.normalize("NFKD", ch)
            if len(d) > 1 and d[0].isalpha() and d[0] != ch:
                table[d[0].lower()].add(ch)
    return {k: "".join(sorted(v)) for k, v in table.items()}


_VARIANTS = _variants()


def _char_pattern(ch: str) -> str:
    extra = _VARIANTS.get(ch.lower(), "")
    core = f"[{re.escape(ch + extra)}]" if extra else re.escape(ch)
    return core + _OPTIONAL_MARKS


def phrase_pattern(tokens: list[str], prefix: bool) -> str:
    """Regex source matching one query phrase (prepared tokens) in original text."""
    body = r"[\W_]*".join("".join(_char_pattern(c) for c in tok) for tok in tokens)
    first, last = tokens[0][0], tokens[-1][-1]
    start = "" if is_split_char(first) else f"(?<!{_WORD})"
    if prefix:
        end = f"(?:{_WORD}|[{MARKS}])*"
    elif is_split_char(last):
        end = ""
    else:
        end = f"(?!{_WORD})"
    return start + body + end


def compile_phrases(phrases: list[list[str]], prefix_last: bool) -> re.Pattern[str]:
    """One pattern matching any of the query's phrases (longest first)."""
    parts = [
        phrase_pattern(tokens, prefix_last and i == len(phrases) - 1)
        for i, tokens in enumerate(phrases)
    ]
    parts.sort(key=len, reverse=True)
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


def plain_words(phrases: list[list[str]]) -> list[str]:
    """Each phrase's first token, lowercased: what :func:`first_match` looks for plainly."""
    return [tokens[0].lower() for tokens in phrases if tokens]


def first_match(text: str, pattern: re.Pattern[str],
                words: list[str] | None = None) -> re.Match[str] | None:
    """The first match of ``pattern`` in ``text``, found quickly in a huge text.

    The first :data:`MAX_SCAN_CHARS` characters are searched with the pattern. Past
    them, each of ``words`` (:func:`plain_words`) is looked for with ``str.find`` in
    the lowercased text and the pattern tried around each place found (at most
    :data:`MAX_PROBES`); when that finds nothing (a match written with other accents,
    or no ``words``), the pattern searches the rest.

    Returns:
        The match, or None when ``text`` has none.
    """
    found = pattern.search(text, 0, MAX_SCAN_CHARS)
    if found is not None or len(text) <= MAX_SCAN_CHARS:
        return found
    resume = MAX_SCAN_CHARS - 200  # a match across the cut
    if words:
        lowered = text.lower()
        shift = len(lowered) - len(text)  # lower() lengthens a few letters (İ)
        best: re.Match[str] | None = None
        for word in words:
            at, probes = lowered.find(word, resume), 0
            while at != -1 and probes < MAX_PROBES:
                found = pattern.search(text, max(resume, at - 64 - shift), at + len(word) + 64)
                if found is not None:
                    if best is None or found.start() < best.start():
                        best = found
                    break
                at, probes = lowered.find(word, at + 1), probes + 1
        if best is not None:
            return best
    return pattern.search(text, resume)


def make_snippet(text: str, pattern: re.Pattern[str], width: int = SNIPPET_CHARS,
                 words: list[str] | None = None) -> str:
    """Return about ``width`` characters of ``text`` around its first match, on one line.

    Args:
        text: the hit's text (a turn's searchable text, or a title).
        pattern: from :func:`compile_phrases`.
        width: snippet length in characters (before markers and ellipses).
        words: the query's words written plainly (:func:`plain_words`): a match deep
            in a huge text is found quickly (:func:`first_match`).

    Returns:
        The piece with every match inside it wrapped in ``\\x02`` … ``\\x03``,
        whitespace runs folded to one space, and "…" where text was cut. The
        start of the text when no match is found.
    """
    if MATCH_START in text or MATCH_END in text:
        text = text.replace(MATCH_START, "").replace(MATCH_END, "")
    first = first_match(text, pattern, words)
    start = 0
    if first is not None and first.start() > CONTEXT_BEFORE and len(text) > width:
        # as much of the text as fits: a short message is shown whole, so a message
        # and the reply quoting it differ (trial 16: both "…sierra oscar … needle150")
        start = min(first.start() - CONTEXT_BEFORE, len(text) - width)
        space = text.find(" ", start, first.start())
        start = space + 1 if space != -1 else start
    end = min(len(text), start + width)
    if first is not None and end < first.end():
        end = first.end()
    if end < len(text):
        space = text.rfind(" ", max(start + 1, end - 20), end)
        if space != -1 and (first is None or space >= first.end()):
            end = space
    out: list[str] = []
    pos = start
    for m in pattern.finditer(text, start, end):
        if m.end() == m.start():
            continue
        out += [text[pos : m.start()], MATCH_START, m.group(0), MATCH_END]
        pos = m.end()
    out.append(text[pos:end])
    piece = " ".join("".join(out).split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")


def hit_text(blocks_json: str | None, pattern: re.Pattern[str],
             words: list[str] | None = None) -> tuple[str, str]:
    """A turn's searchable text (``textindex.turn_text``) and the kind of its first block
    whose text matches ``pattern`` ("text", "thinking", "tool_use", "tool_result",
    "compact_summary", "document"; "" when none does or the JSON is not a list of blocks).
    """
    if not blocks_json:
        return "", ""
    try:
        data = json.loads(blocks_json)
    except ValueError:
        return blocks_json, ""
    if not isinstance(data, list):
        return "", ""
    texts = [(raw, block_text(raw)) for raw in data]
    part = next((str(raw.get("type", "")) for raw, t in texts
                 if t and first_match(t, pattern, words) is not None), "")
    return "\n".join(t for _raw, t in texts if t), part
