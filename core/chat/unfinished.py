"""The words for a reply that did not finish, the same in the window and in the exports.

A reply is unfinished (``Turn.aborted``) when the person stopped it (Esc), when a failure
cut it off (``Turn.failure``: its cause, kept with it), or when Parley closed before it
finished (``Turn.cut_off``). The transcript's mark under it
(``parley.gui.transcript.specs.aborted_mark``), the note offering Retry after a restart,
and the Markdown export (``parley.core.export.to_markdown``, read back by
``parley.core.convert.markdown``) all say which, with these words.
"""

from __future__ import annotations

import re

from parley.core.content import FAILED_STOP, OTHER_FAILURE, Turn

#: ``Turn.failure`` -> the few words saying why a failure cut a reply off.
FAILED_WHY: dict[str, str] = {
    "connection": "connection lost",
    "timeout": "no data came in time",
    "unreadable": "the server sent unreadable data",
    "ended": "the server ended the stream early",
    "process": "Parley's connection process stopped",
    "error": "the provider sent an error",
    OTHER_FAILURE: "an error",
}
#: Why a reply Parley's end cut off stopped, in the same few words.
CLOSED_WHY = "Parley closed"

#: The Markdown export's line over a reply stopped with Esc (or one failed before Parley
#: kept why), and over one cut off (``{why}``: :func:`cut_why`).
STOPPED_LINE = "*(stopped before it finished)*"
CUT_LINE = "*(cut off before it finished — {why})*"
_LINE = re.compile(r"^\*\((stopped|cut off) before it finished(?: — ([^\n]*?))?\)\*(?:\n|$)")

#: The note under a reply a failure cut off, in a chat opened again (after a restart):
#: the run's own error is gone, the cause is kept; Retry is offered as before.
CUT_NOTE = ("This reply was cut off — {why}. What arrived is kept; retry to get a full "
            "answer.")


def failure_why(turn: Turn) -> str | None:
    """The words for why a failure cut ``turn`` off (``Turn.failure``), or None when no
    failure did (stopped with Esc, cut off by Parley's end, or finished)."""
    failure = turn.failure
    if failure is None:
        return None
    return FAILED_WHY.get(failure, FAILED_WHY[OTHER_FAILURE])


def cut_why(turn: Turn) -> str | None:
    """Why ``turn`` was cut off (a failure's words, or :data:`CLOSED_WHY`); None for a
    reply stopped with Esc or a finished one."""
    if not turn.aborted:
        return None
    why = failure_why(turn)
    if why is None and turn.cut_off:
        return CLOSED_WHY
    return why


def markdown_line(turn: Turn) -> str | None:
    """The Markdown export's line over ``turn`` when it did not finish, else None."""
    if not turn.aborted:
        return None
    why = cut_why(turn)
    return STOPPED_LINE if why is None else CUT_LINE.format(why=why)


def read_markdown_line(body: str) -> tuple[str, bool, str | None] | None:
    """Read :func:`markdown_line`'s line back from the start of a section's ``body``.

    Returns:
        None when the body starts with no such line; else ``(rest, cut_off,
        stop_reason)``: the body after the line, whether Parley's end cut it off, and the
        ``Turn.stop_reason`` of a failure (``"failed:<cause>"``; None otherwise). A reason
        in words this version does not know reads as ``failed:other``.
    """
    found = _LINE.match(body)
    if found is None:
        return None
    rest = body[found.end():].lstrip("\n")
    if found.group(1) == "stopped":
        return rest, False, None
    why = found.group(2) or ""
    if why == CLOSED_WHY:
        return rest, True, None
    cause = next((c for c, words in FAILED_WHY.items() if words == why), OTHER_FAILURE)
    return rest, False, FAILED_STOP + cause
