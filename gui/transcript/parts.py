"""Which part of a huge text block a row shows ("Show more", a search hit deep in it).

A text over ``long_text.FOLD_CHARS`` characters is shown a part of
``long_text.SHOWN_CHARS`` characters at a time (``Node.parts``); these helpers say
which part comes next, and which part shows a search match. Each looks at one row's
blocks with ``str`` searches: a few milliseconds for a 1 MB text.
"""

from __future__ import annotations

import re

from parley.core.attachments.files import parse_text_file
from parley.core.content import TextBlock
from parley.gui.text.long_text import FOLD_CHARS, SHOWN_CHARS, next_part, part_around
from parley.gui.transcript.rows import Node


def _folded(node: Node) -> list[tuple[int, str]]:
    """(block index, text) of the row's text blocks shown folded, in order."""
    if node.kind != "turn":
        return []
    return [(i, b.text) for i, b in enumerate(node.turn.blocks)
            if isinstance(b, TextBlock) and len(b.text) > FOLD_CHARS
            and parse_text_file(b) is None]  # an attached file is a chip, not a text


def more_of(node: Node) -> tuple[int, int] | None:
    """``(block index, start)`` of the part "Show more" shows next in the row (its first
    folded text block with characters after the part shown), or None."""
    for i, text in _folded(node):
        start = node.parts.get(i, 0) if node.parts else 0
        if start + SHOWN_CHARS < len(text):
            return i, next_part(text, start)
    return None


def parts_for(node: Node, words: list[str]) -> dict[int, int] | None:
    """The parts to show so the first of ``words`` (any case) in each folded text block
    of the row is shown: ``{block index: start}`` (``Node.parts``), None when every
    such block shows its first part then. Looked for in the lowercased text with
    ``str.find`` (~2 ms a megabyte; an ``re`` search ignoring case took ~20 ms)."""
    needles = [w.lower() for w in words if w]
    if not needles:
        return None
    parts: dict[int, int] = {}
    for i, text in _folded(node):
        at = _first(text, needles)
        start = part_around(text, at) if at is not None else 0
        if start:
            parts[i] = start
    return parts or None


def _first(text: str, needles: list[str]) -> int | None:
    """Where the first of ``needles`` (lowercase) is in ``text``, ignoring case."""
    lowered = text.lower()
    if len(lowered) == len(text):
        found = [at for at in (lowered.find(n) for n in needles) if at != -1]
        return min(found) if found else None
    # lower() lengthened a letter (İ): the places differ; a slower search that keeps them
    pattern = re.compile("|".join(re.escape(n) for n in needles), re.IGNORECASE)
    match = pattern.search(text)
    return match.start() if match is not None else None
