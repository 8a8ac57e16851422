"""Cutting markdown into top-level blocks, so a streaming reply re-renders only its end.

:func:`split_blocks` cuts where CommonMark starts a new top-level block (see its
docstring); :func:`split_blocks_after` reuses the cut of a text the new one
extends, so the cost of each streamed update follows the tail, not the reply.
This module does not import Qt.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"([-+*]|\d{1,9}[.)])(\s|$)")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.M)


def split_blocks(text: str) -> list[str]:
    """Cut markdown into chunks that render the same apart as together.

    A cut is made before a line that starts in column 0 after a blank line
    (unless it is a list item: the list may go on), and around fenced code
    blocks that start in column 0 — places where CommonMark starts a new
    top-level block. A long reply that grows at its end therefore
    only changes its last chunk. Text with link reference definitions
    (``[x]: url``) is not cut, since a definition applies to the whole text.

    Args:
        text: markdown source.

    Returns:
        Chunks whose concatenation is ``text`` (``[]`` for empty text).
    """
    if not text:
        return []
    if _REF_DEF.search(text):
        return [text]
    chunks: list[str] = []
    cur: list[str] = []
    fence: str | None = None
    has_content = False
    prev_blank = False

    def flush() -> None:
        nonlocal cur, has_content
        if cur:
            chunks.append("".join(cur))
        cur, has_content = [], False

    for line in text.splitlines(keepends=True):
        if fence is not None:
            cur.append(line)
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
                flush()
                prev_blank = False
            continue
        blank = not line.strip()
        opener = _FENCE_OPEN.match(line)
        if opener and not (opener.group(1)[0] == "`" and "`" in line[opener.end() :]):
            if has_content:
                flush()
            elif cur and chunks:  # only blank lines since the last chunk: keep them there
                chunks[-1] += "".join(cur)
                cur = []
            fence = opener.group(1)
            cur.append(line)
            has_content = True
            prev_blank = False
            continue
        if (
            not blank
            and prev_blank
            and has_content
            and line[0] not in " \t"
            and not _LIST_ITEM.match(line)  # a list may go on after a blank line (loose list)
        ):
            flush()
        cur.append(line)
        has_content = has_content or not blank
        prev_blank = blank
    if cur:
        if has_content or not chunks:
            chunks.append("".join(cur))
        else:
            chunks[-1] += "".join(cur)
    return chunks


def split_blocks_after(previous: tuple[str, list[str]] | None, text: str) -> list[str]:
    """:func:`split_blocks` of ``text``, reusing the split of a text it extends.

    While a reply streams, each new text is the previous one plus a few
    characters. Only the previous last chunk can change, so only it and the
    new characters are split again: the cost follows the tail, not the reply.

    Args:
        previous: an earlier ``(text, split_blocks(text))``, or None.
        text: the text to split.

    Returns:
        The same chunks as ``split_blocks(text)``.
    """
    return split_blocks_kept(previous, text)[0]


def split_blocks_kept(previous: tuple[str, list[str]] | None, text: str
                      ) -> tuple[list[str], int]:
    """:func:`split_blocks_after`, and how many leading chunks of ``previous`` it kept.

    Returns:
        ``(chunks, kept)``: the same chunks as ``split_blocks(text)``, whose first
        ``kept`` are the very string objects of the previous split (their pieces need
        no new look: ``parley.gui.transcript.specs``); 0 when nothing was reused.
    """
    if previous is None:
        return split_blocks(text), 0
    old_text, old_chunks = previous
    if text == old_text:
        return old_chunks, len(old_chunks)
    if len(old_chunks) >= 2 and len(text) < len(old_text) and old_text.startswith(text):
        return _split_prefix(old_chunks, text)
    if len(old_chunks) < 2 or not text.startswith(old_text):
        return split_blocks(text), 0
    keep = len(old_chunks) - 1
    last = old_chunks[-1]
    if "\n" not in last or not last.split("\n", 1)[0].strip():
        # The chunk before changes too when the last one's first line is still being
        # written (``1`` becoming a list item ``1.``, a fence becoming ```` ```a`b````: no
        # longer a start) or when it begins with blank lines (as one after a code block
        # does): if a fence opens after them, they move to the chunk before (see
        # split_blocks). So split again from that one: a chunk starts a split afresh.
        keep -= 1
    tail_start = len(old_text) - sum(len(chunk) for chunk in old_chunks[keep:])
    if _REF_DEF.search(text, tail_start):
        return split_blocks(text), 0  # a reference definition applies to the whole text
    return old_chunks[:keep] + split_blocks(text[tail_start:]), keep


def _split_prefix(old_chunks: list[str], text: str) -> tuple[list[str], int]:
    """:func:`split_blocks_kept` of ``text``, the start of the text ``old_chunks`` split
    (a huge reply shown folded from now on: its first part alone)."""
    if _REF_DEF.search(text):
        return split_blocks(text), 0
    ends = list(accumulate(map(len, old_chunks)))
    cut = bisect_right(ends, len(text))  # old_chunks[:cut] lie whole in ``text``
    # The chunk the text ends in may lose the line that began it (a fence cut short), so
    # the one before may change too (see split_blocks_after): split again from there.
    keep = max(0, cut - 1)
    if keep and not old_chunks[keep].split("\n", 1)[0].strip():
        keep -= 1  # it begins with blank lines: they may move to the chunk before
    start = ends[keep - 1] if keep else 0
    return old_chunks[:keep] + split_blocks(text[start:]), keep
