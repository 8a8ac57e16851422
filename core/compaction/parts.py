"""Cutting a transcript too long for the summary model into parts that each fit.

Used by ``parley.core.compaction.summary`` when the turns to summarize do not fit
the summary model's window as one transcript (or the one answer was refused):
each part is summarized on its own (``parley.core.compaction.prompt.part_prompt``),
then the parts' summaries are combined — no turn is left out.

Rules:

* turns are rendered in full (``render_turn`` level 0: text whole, tool
  input / output capped at ``TOOL_CHARS[0]`` characters) and packed in order,
  as many per part as fit ``budget`` tokens (``parley.core.context.tokens.text_tokens``);
* a turn longer than a part on its own is cut into consecutive pieces, each
  in its own part, marked ``[continued in the next part]`` / ``[continued
  from the previous part]``, so its text reaches the summarizer whole;
* :func:`group` packs summaries for combining the same way (never cutting one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from parley.core.compaction.prompt import render_turn
from parley.core.content import Turn
from parley.core.context.tokens import text_tokens

CONTINUES = "[continued in the next part]"
CONTINUED = "[continued from the previous part]"
#: Separator tokens counted between two turns of a part.
JOIN_TOKENS = 1
#: Parts are never made smaller than this many tokens (a cut needs room for its marks).
MIN_PART_TOKENS = 64


def transcript_tokens(turns: Sequence[Turn]) -> int:
    """Estimated tokens of ``turns`` as a full transcript (what a summary of them replaces)."""
    return sum(text_tokens(render_turn(t)) for t in turns) + JOIN_TOKENS * len(turns)


def _pieces(text: str, budget: int) -> list[str]:
    """``text`` cut into consecutive pieces of at most ``budget`` tokens (with their marks)."""
    room = max(1, budget - text_tokens(CONTINUES) - text_tokens(CONTINUED) - 2)
    pieces: list[str] = []
    rest = text
    while text_tokens(rest) > room:
        cut = max(1, int(len(rest) * room / text_tokens(rest)))
        while cut > 1 and text_tokens(rest[:cut]) > room:
            cut = max(1, cut * 9 // 10)
        newline = rest.rfind("\n", cut // 2, cut)  # prefer to cut at a line break
        cut = newline + 1 if newline > 0 else cut
        pieces.append(rest[:cut])
        rest = rest[cut:]
    pieces.append(rest)
    out = []
    for i, piece in enumerate(pieces):
        head = f"{CONTINUED}\n" if i else ""
        tail = f"\n{CONTINUES}" if i < len(pieces) - 1 else ""
        out.append(f"{head}{piece}{tail}")
    return out


def split_parts(turns: Sequence[Turn], budget: int) -> list[str]:
    """The transcript of ``turns`` as consecutive part bodies of at most ``budget`` tokens.

    Args:
        turns: the turns to summarize, oldest first (a previous summary first).
        budget: the most tokens one part's transcript may hold (>= 1; raised
            to :data:`MIN_PART_TOKENS`).

    Returns:
        The parts' transcript texts, oldest first; every turn's rendered text
        is in them, in order, whole or cut into pieces.
    """
    budget = max(MIN_PART_TOKENS, budget)
    items: list[str] = []
    for turn in turns:
        text = render_turn(turn)
        if text_tokens(text) + JOIN_TOKENS > budget:
            items.extend(_pieces(text, budget - JOIN_TOKENS))
        else:
            items.append(text)
    return ["\n\n".join(g) for g in group(items, budget)]


def group(items: Sequence[str], budget: int) -> list[list[str]]:
    """Consecutive items packed into groups of at most ``budget`` tokens (an item
    longer than that alone in its group)."""
    groups: list[list[str]] = []
    size = math.inf
    for item in items:
        tokens = text_tokens(item) + JOIN_TOKENS
        if size + tokens > budget or not groups:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += tokens
    return groups
