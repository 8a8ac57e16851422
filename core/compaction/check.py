"""Whether a model's answer is a summary good enough to replace turns.

A summary replaces turns in the model's context, so a wrong one loses the
conversation for the model. An answer is refused (:class:`Verdict` with a
``reason``) when:

* ``no-summary`` — it holds no ``<summary>`` section, or an empty one
  (:func:`parley.core.compaction.prompt.extract_summary`): a reply to the
  conversation, an error page, an echo of the request;
* ``cut-off`` — the model stopped at its output limit (``Stop`` reason
  ``max_tokens``): the later sections, often the exact details, are missing;
* ``too-short`` — it is shorter than :func:`summary_floor` of what it
  replaces: "3:00" for nine turns is not a summary.

The floor, in estimated tokens (``parley.core.context.tokens.text_tokens``) of the text it
replaces as a transcript: :data:`FLOOR_SHARE` (2 %) of it, at least
:data:`FLOOR_MIN` (25) tokens, at most :data:`FLOOR_MAX` (500) tokens, and
never more than a quarter of it (a summary of a few short lines may be short).
A useful summary compresses a conversation 10–50 times; 2 % allows 50×. The
500-token cap keeps very long chats from asking for long summaries: five
sections with their exact details take more than that.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from parley.core.compaction.prompt import extract_summary
from parley.core.context.tokens import text_tokens

Rejection: TypeAlias = Literal["no-summary", "cut-off", "too-short"]

#: Share of the replaced text's tokens a summary must reach.
FLOOR_SHARE = 0.02
#: Least floor in tokens (unless a quarter of the replaced text is less).
FLOOR_MIN = 25
#: Greatest floor in tokens.
FLOOR_MAX = 500


def summary_floor(replaced_tokens: int) -> int:
    """The fewest tokens a summary of ``replaced_tokens`` tokens of transcript may have.

    Examples: 60 → 15 (a quarter), 1,000 → 25, 10,000 → 200, 150,000 → 500.
    """
    share = max(FLOOR_MIN, round(replaced_tokens * FLOOR_SHARE))
    return max(1, min(FLOOR_MAX, replaced_tokens // 4, share))


@dataclass(frozen=True)
class Verdict:
    """What was made of an answer.

    Attributes:
        summary: the summary (None when refused).
        reason: why it was refused (None when accepted).
        tokens: the summary's estimated tokens (0 when there is none).
        floor: the least tokens it needed.
    """

    summary: str | None
    reason: Rejection | None = None
    tokens: int = 0
    floor: int = 0

    @property
    def ok(self) -> bool:
        """True when the summary may replace the turns."""
        return self.summary is not None


def check_answer(text: str, stop_reason: str | None, replaced_tokens: int) -> Verdict:
    """Judge a model's answer to a summary request.

    Args:
        text: the answer's text.
        stop_reason: the ``Stop`` event's reason (None when none came).
        replaced_tokens: estimated tokens of the transcript the summary replaces.
    """
    floor = summary_floor(replaced_tokens)
    summary = extract_summary(text)
    if summary is None:
        return Verdict(None, "no-summary", 0, floor)
    tokens = text_tokens(summary)
    if stop_reason == "max_tokens":
        return Verdict(None, "cut-off", tokens, floor)
    if tokens < floor:
        return Verdict(None, "too-short", tokens, floor)
    return Verdict(summary, None, tokens, floor)
