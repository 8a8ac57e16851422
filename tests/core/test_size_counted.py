"""A count of the request after a compaction anchors its size like a reply's usage
(parley.core.context.size): the last reply before the summary measured a history no
longer sent; the count measures the compacted one, and a later reply takes over."""

from __future__ import annotations

from parley.core.content import CompactSummaryBlock, TextBlock, Turn, Usage
from parley.core.context.size import Counted, find_anchor, measured_tokens
from parley.core.providers.base import ChatRequest
from parley.core.providers.capabilities import CAPS_BY_KIND

MODEL = "anthropic:claude-sonnet-4-6"
CAPS = CAPS_BY_KIND["anthropic"]


def _reply(text: str, tokens: int) -> Turn:
    return Turn("assistant", [TextBlock(text)], usage=Usage(input_tokens=tokens),
                model=MODEL)


def _compacted() -> list[Turn]:
    """Ten turns, a reply that measured them, then a summary of the first eight."""
    turns = [Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i} " * 20)])
             for i in range(10)]
    turns.append(_reply("Noted.", 5_000))
    block = CompactSummaryBlock("The user counted to ten.", 8, turns[0].id, turns[7].id)
    return [*turns, Turn("user", [block])]


def test_a_summary_after_the_last_reply_leaves_no_anchor_without_a_count() -> None:
    stored = _compacted()
    assert find_anchor(stored, MODEL) is None
    request = ChatRequest("", stored)
    assert measured_tokens(CAPS, request, MODEL) is None


def test_the_count_of_the_compacted_request_anchors_it_and_what_follows() -> None:
    stored = _compacted()
    counted = Counted(stored[-1].id, MODEL, 700)
    anchor = find_anchor(stored, MODEL, counted)
    assert anchor is not None and (anchor.index, anchor.input_tokens) == (len(stored), 700)
    assert measured_tokens(CAPS, ChatRequest("", stored), MODEL, counted=counted) == 700

    grown = [*stored, Turn("user", [TextBlock("One more " * 10)])]
    more = measured_tokens(CAPS, ChatRequest("", grown), MODEL, counted=counted)
    assert more is not None and more > 700  # the count plus the message's estimate

    answered = [*grown, _reply("Fine.", 760)]
    anchor = find_anchor(answered, MODEL, counted)
    assert anchor is not None and anchor.input_tokens == 760  # the newer reply wins


def test_a_count_by_another_model_or_of_a_turn_no_longer_stored_is_not_used() -> None:
    stored = _compacted()
    assert find_anchor(stored, "anthropic:claude-haiku-4-5",
                       Counted(stored[-1].id, MODEL, 700)) is None
    assert find_anchor(stored, MODEL, Counted("gone", MODEL, 700)) is None
