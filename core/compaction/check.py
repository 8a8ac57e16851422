"""Whether a model's answer is a summary good enough to replace turns.

A summary replaces turns in the model's context, so a wrong one loses the
conversation for the model. The summary is the answer's ``<summary>`` section
(:func:`parley.core.compaction.prompt.extract_summary`); when the answer has none and
the caller says what it summarizes (:class:`Source`), the whole answer may stand as
the summary — a good summary in the wrong wrapper is still a summary — unless it is
empty, an echo of the request (it repeats the request's instructions or markup,
:data:`ECHO_MARKERS`), or not about what it replaces: fewer than
:data:`MIN_SHARED_WORDS` of its distinct content words (four letters or more,
:data:`COMMON_WORDS` aside), or under :data:`SHARED_SHARE` of them, occur in the
summarized turns before the last message (a reply to the last message, or to nothing).
An answer is refused (:class:`Verdict` with a ``reason``) when:

* ``no-summary`` — it holds no ``<summary>`` section, or an empty one, and is not
  one without tags as above: a reply to the conversation, an error page, an
  echo of the request;
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

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from parley.core.compaction.prompt import ECHO_MARKERS, extract_summary
from parley.core.context.tokens import text_tokens

Rejection: TypeAlias = Literal["no-summary", "cut-off", "too-short"]

#: Share of the replaced text's tokens a summary must reach.
FLOOR_SHARE = 0.02
#: Least floor in tokens (unless a quarter of the replaced text is less).
FLOOR_MIN = 25
#: Greatest floor in tokens.
FLOOR_MAX = 500
#: An answer without tags must share at least this many distinct content words with
#: the turns it summarizes (the last message aside)…
MIN_SHARED_WORDS = 3
#: …and at least this share of its own distinct content words.
SHARED_SHARE = 0.1
#: Words too common to show what an answer is about.
COMMON_WORDS = frozenset(re.findall(r"\w+", """
    about above after again also been before being below between both could does doing
    down during each from further have having here hers herself himself into itself just
    more most myself once only other ours over same should some such than that their
    theirs them themselves then there these they this those through under until very
    were what when where which while whom will with would your yours yourself sure
    happy help know anything else thanks thank please like"""))

_WORD = re.compile(r"[^\W_]{4,}")


def content_words(text: str) -> frozenset[str]:
    """Distinct words of four letters or digits or more, lower-cased, common ones aside."""
    return frozenset(w for w in (m.lower() for m in _WORD.findall(text))
                     if w not in COMMON_WORDS)


@dataclass(frozen=True)
class Source:
    """What a summary request summarizes, for judging an answer without tags.

    Attributes:
        words: :func:`content_words` of the summarized text, its last message aside.
    """

    words: frozenset[str]

    @classmethod
    def of(cls, texts: Iterable[str]) -> Source:
        """From the summarized pieces in order (the last left out when there are more)."""
        pieces = list(texts)
        if len(pieces) > 1:
            pieces = pieces[:-1]
        words: set[str] = set()
        for piece in pieces:
            words |= content_words(piece)
        return cls(frozenset(words))


def untagged_summary(text: str, source: Source) -> str | None:
    """The answer as a summary when it has no ``<summary>`` section (module docstring);
    None when it is empty, an echo of the request, or not about what it replaces."""
    answer = text.strip()
    if not answer:
        return None
    lowered = answer.lower()
    if any(marker.lower() in lowered for marker in ECHO_MARKERS):
        return None
    words = content_words(answer)
    shared = len(words & source.words)
    if shared < MIN_SHARED_WORDS or shared < SHARED_SHARE * len(words):
        return None
    return answer


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


def check_answer(
    text: str, stop_reason: str | None, replaced_tokens: int, source: Source | None = None
) -> Verdict:
    """Judge a model's answer to a summary request.

    Args:
        text: the answer's text.
        stop_reason: the ``Stop`` event's reason (None when none came).
        replaced_tokens: estimated tokens of the transcript the summary replaces.
        source: what was summarized; None: an answer without tags is no summary.
    """
    floor = summary_floor(replaced_tokens)
    summary = extract_summary(text)
    if summary is None and source is not None:
        summary = untagged_summary(text, source)
    if summary is None:
        return Verdict(None, "no-summary", 0, floor)
    tokens = text_tokens(summary)
    if stop_reason == "max_tokens":
        return Verdict(None, "cut-off", tokens, floor)
    if tokens < floor:
        return Verdict(None, "too-short", tokens, floor)
    return Verdict(summary, None, tokens, floor)
