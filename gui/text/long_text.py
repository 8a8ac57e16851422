"""Huge messages and very long unbroken lines, shown without blocking the GUI thread.

Qt lays a transcript row out on the GUI thread, and the cost of one unbroken
line grows with the square of its length. Measured with QTextDocument at a
700 px width (offscreen, a 2-core machine shared with other work, so rough):

=========  ===============  ===========================================
chars      unbroken line    same text, a break chance every 100 chars
=========  ===============  ===========================================
16,000     9 ms             —
64,000     61 ms            25 ms
256,000    1,072 ms         45 ms
1,000,000  21,532 ms        189 ms
=========  ===============  ===========================================

So, for display only (the stored text, Copy message and exports keep every
character):

* a run of more than :data:`LONG_RUN` characters without a space gets a
  zero-width space every :data:`BREAK_EVERY` characters, so it wraps anywhere
  (:func:`breakable`; Copy of a code block takes them out again:
  :func:`unbreak`);
* a text longer than :data:`FOLD_CHARS` shows its first :data:`SHOWN_CHARS`
  characters (to the end of a line) and a line saying how much more there is
  (:func:`shown_text`), with "Show more": the next :data:`SHOWN_CHARS` characters in place of those
  (:func:`shown_part`; one part at a time, so showing one costs the same wherever it
  is in the text), and "Show earlier" above any part but the first. A search hit
  deep in such a text shows the part around it (:func:`part_around`).
"""

from __future__ import annotations

import re

#: A run of non-space characters longer than this gets break chances.
LONG_RUN = 1_000
#: One break chance every this many characters in such a run.
BREAK_EVERY = 100
#: A text longer than this (characters) is shown folded…
FOLD_CHARS = 200_000
#: …as its first this many characters (a part: "Show more" shows the next one)…
SHOWN_CHARS = 50_000
#: …up to this many fewer, to end where a line does (:func:`part_end`).
PART_SLACK = 2_000
#: A part shown for a search match starts about this many characters before it.
MATCH_LEAD = 1_000
ZWSP = "\u200b"

_RUN = re.compile(r"[^\s\u200b]{" + str(LONG_RUN + 1) + ",}")


def breakable(text: str) -> str:
    """``text`` with a zero-width space every :data:`BREAK_EVERY` characters of each
    run longer than :data:`LONG_RUN` without a space (others are left as they are)."""
    if len(text) <= LONG_RUN:
        return text

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        return ZWSP.join(run[i:i + BREAK_EVERY] for i in range(0, len(run), BREAK_EVERY))

    return _RUN.sub(cut, text)


def has_long_run(text: str) -> bool:
    """True when ``text`` holds a run longer than :data:`LONG_RUN` without a space."""
    return len(text) > LONG_RUN and _RUN.search(text) is not None


def unbreak(text: str) -> str:
    """Undo :func:`breakable` (for the clipboard)."""
    return text.replace(ZWSP, "")


def shown_text(text: str) -> tuple[str, int]:
    """What a transcript row shows of ``text``, and how many characters it leaves out.

    Returns:
        ``(display text, hidden characters)``: the whole text made
        :func:`breakable` (0 hidden), or for a text over :data:`FOLD_CHARS`
        its first :data:`SHOWN_CHARS` characters.
    """
    if len(text) <= FOLD_CHARS:
        return breakable(text), 0
    end = part_end(text, 0)
    return breakable(text[:end]), len(text) - end


def part_end(text: str, start: int) -> int:
    """Where the part of a folded ``text`` starting at ``start`` ends (exclusive): after
    its last line break in its last :data:`PART_SLACK` characters of
    :data:`SHOWN_CHARS`, else after its last space there, else at :data:`SHOWN_CHARS`
    (a part ends where a line does; it depends only on ``text[start:start + SHOWN_CHARS]``)."""
    end = start + SHOWN_CHARS
    if end >= len(text):
        return len(text)
    cut = text.rfind("\n", end - PART_SLACK, end)
    if cut == -1:
        cut = text.rfind(" ", end - PART_SLACK, end)
    return cut + 1 if cut != -1 else end


def shown_text_after(previous: tuple[str, str, int] | None, text: str) -> tuple[str, int]:
    """:func:`shown_text` of ``text``, reusing the result for a text it extends.

    While a reply streams, each text is the one before and a few characters more; the
    break chances of the part up to its last space or line break are those found
    before (a run without a space ends there), so only the tail is looked at again.

    Args:
        previous: an earlier ``(text, *shown_text(text))``, or None.
        text: the text to show.

    Returns:
        The same as ``shown_text(text)``.
    """
    if previous is None:
        return shown_text(text)
    old, old_shown, old_hidden = previous
    if text is old or text == old:
        return old_shown, old_hidden
    if not text.startswith(old):
        return shown_text(text)
    if len(text) > FOLD_CHARS:
        if len(old) > FOLD_CHARS:  # the same first part
            return old_shown, len(text) - part_end(text, 0)
        return shown_text(text)
    cut = max(old.rfind(" "), old.rfind("\n"), old.rfind("\t")) + 1  # a run stops there
    if cut <= 0:
        return shown_text(text)
    old_tail = breakable(old[cut:])
    return old_shown[: len(old_shown) - len(old_tail)] + breakable(text[cut:]), 0


def shown_part(text: str, start: int) -> tuple[str, int, int]:
    """What a transcript row shows of a folded ``text`` from character ``start`` on.

    Args:
        text: a text longer than :data:`FOLD_CHARS` (a shorter one is shown whole).
        start: the first character shown (0: the text's start; clamped to the text).

    Returns:
        ``(display text, characters before it, characters after it)``: at most
        :data:`SHOWN_CHARS` characters, made :func:`breakable`.
    """
    if len(text) <= FOLD_CHARS:
        return breakable(text), 0, 0
    start = max(0, min(start, len(text) - 1))
    end = part_end(text, start)
    return breakable(text[start:end]), start, len(text) - end


def next_part(text: str, start: int) -> int:
    """The start of the part after the one starting at ``start`` (:func:`shown_part`)."""
    return min(part_end(text, start), max(0, len(text) - 1))


def previous_part(text: str, start: int) -> int:
    """The start of the part before the one starting at ``start`` (0: the first part):
    the part that ends there, when one does, else a part ending about there."""
    at = max(0, start - SHOWN_CHARS)
    if at and part_end(text, at) != start:
        line = text.find("\n", at, at + PART_SLACK)  # the start of a line, as parts end
        at = line + 1 if line != -1 and line + 1 < start else at
    return at


def part_around(text: str, at: int) -> int:
    """The start of a part of a folded ``text`` that shows character ``at`` near its top
    (a search match: the part's first lines are made first, ``specs.PART_BUDGET_MS``):
    0 when the first part shows it, else the start of a line (or, in a long line, a
    word) about :data:`MATCH_LEAD` characters before it; "Show earlier" shows the rest.

    Args:
        text: the whole text.
        at: a character's index in ``text`` (a search match).
    """
    if len(text) <= FOLD_CHARS or at + 200 < part_end(text, 0):
        return 0
    start = max(0, at - MATCH_LEAD)
    line = text.rfind("\n", max(0, start - MATCH_LEAD), start)
    if line != -1:
        return line + 1
    space = text.rfind(" ", max(0, start - 200), start)
    return space + 1 if space != -1 else start


def folded_note(hidden: int) -> str:
    """The line under a folded text (plain words, no markup; "Show more" follows it)."""
    size = f"{hidden / 1_000_000:,.1f} million" if hidden >= 1_000_000 else f"{hidden:,}"
    return (f"… {size} more characters not shown here (so Parley stays quick). The whole "
            "message is kept: Copy message copies all of it, Export saves it.")


def earlier_note(before: int) -> str:
    """The line above a later part of a folded text (plain words; "Show earlier" follows)."""
    size = f"{before / 1_000_000:,.1f} million" if before >= 1_000_000 else f"{before:,}"
    return f"… {size} earlier characters not shown here."
