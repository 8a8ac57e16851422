"""Property tests: whatever the stored history, what goes on the wire is accepted.

Histories mix aborted turns, orphaned tool_use / tool_result blocks, reused
tool ids, same-role runs, empty turns, leading assistant turns, blocks in the
wrong role, thinking with and without signature, unknown blocks, images and
documents in tool results, and compaction summaries with valid, reversed and
dangling ranges.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)
from parley.core.convert import to_anthropic, to_openai
from parley.core.providers.capabilities import ANTHROPIC, OPENAI, OPENAI_COMPATIBLE
from parley.core.wire import to_messages
from tests.fakes.validation import validate_anthropic, validate_openai

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOOL_IDS = ["toolu_1", "toolu_2", "call_3", "fn:weather.0", "x" * 45]

texts = st.sampled_from(["", " ", "\n\t", "hello", "trailing space ", "ünïcødé 日本", "a\n\n"])
images = st.sampled_from(
    [
        ImageBlock("image/png", "iVBORw0KGgo="),
        ImageBlock("image/jpeg", url="https://example.com/cat.jpg"),
        ImageBlock("image/bmp", "Qk0="),
    ]
)
documents = st.sampled_from(
    [
        DocumentBlock("application/pdf", "JVBERi0xLjQ=", "a.pdf"),
        DocumentBlock("text/plain", "aGVsbG8=", "notes.txt"),
        DocumentBlock("application/msword", "AAAA"),
    ]
)
parts = st.one_of(
    texts.map(TextBlock),
    images,
    documents,
    st.just(MediaPart("audio", "audio/wav", "UklGRg==")),
)
tool_results = st.builds(
    ToolResultBlock,
    st.sampled_from(TOOL_IDS),
    st.lists(parts, max_size=3).map(tuple),
    st.booleans(),
)
tool_uses = st.builds(
    ToolUseBlock,
    st.sampled_from(TOOL_IDS),
    st.sampled_from(["search", "screenshot"]),
    st.dictionaries(st.sampled_from(["q", "n"]), st.integers(0, 3) | st.text(max_size=3)),
)
thinking = st.builds(
    ThinkingBlock, st.sampled_from(["", "hmm"]), st.sampled_from([None, "", "sig"])
)
unknown = st.sampled_from(
    [UnknownBlock({"type": "redacted_thinking", "data": "abc"}), UnknownBlock({"type": "x-odd"})]
)
legacy_summary = st.just(CompactSummaryBlock("old summary", legacy=True))
any_block = st.one_of(
    texts.map(TextBlock),
    images,
    documents,
    tool_results,
    tool_uses,
    thinking,
    unknown,
    legacy_summary,
)
user_block = st.one_of(texts.map(TextBlock), tool_results, tool_results, images, documents)
assistant_block = st.one_of(texts.map(TextBlock), tool_uses, tool_uses, thinking, unknown)


user_blocks = st.lists(st.one_of(user_block, user_block, user_block, any_block), max_size=4)
assistant_blocks = st.lists(
    st.one_of(assistant_block, assistant_block, assistant_block, any_block), max_size=4
)
aborted = st.sampled_from([False, False, False, True])


@st.composite
def turn(draw) -> Turn:
    role = draw(st.sampled_from(["user", "assistant"]))
    blocks = draw(user_blocks if role == "user" else assistant_blocks)
    return Turn(role, blocks, aborted=draw(aborted))


@st.composite
def history(draw) -> list[Turn]:
    turns = draw(st.lists(turn(), min_size=1, max_size=12))
    for _ in range(draw(st.integers(0, 2))):
        ids = [t.id for t in turns] + ["missing"]
        first, last = draw(st.sampled_from(ids)), draw(st.sampled_from(ids))
        summary = CompactSummaryBlock("summary of earlier", 2, first, last)
        role = draw(st.sampled_from(["user", "assistant"]))
        extra = draw(st.lists(user_block, max_size=1))
        at = draw(st.integers(0, len(turns)))
        turns.insert(at, Turn(role, [summary, *extra], aborted=draw(aborted)))
    return turns


def _check_structure(wire: list[Turn]) -> None:
    assert wire[0].role == "user"
    for prev, cur in zip(wire, wire[1:], strict=False):
        assert prev.role != cur.role
    for t in wire:
        assert t.blocks and not t.aborted
        assert not any(isinstance(b, CompactSummaryBlock) for b in t.blocks)


def _check_pairing(wire: list[Turn]) -> None:
    for prev, cur in zip(wire, wire[1:], strict=False):
        if cur.role == "user":
            uses = [b.id for b in prev.blocks if isinstance(b, ToolUseBlock)]
            results = [b.tool_use_id for b in cur.blocks if isinstance(b, ToolResultBlock)]
            assert sorted(results) == sorted(uses)


def _check_provider(wire: list[Turn], caps) -> None:
    if caps is ANTHROPIC:
        body = {"messages": to_anthropic(wire), "system": "be brief"}
        assert validate_anthropic(body) is None, body
        return
    assert wire[-1].role == "user"  # user-tail rule
    assert not any(isinstance(b, ThinkingBlock) for t in wire for b in t.blocks)
    results = [b for t in wire for b in t.blocks if isinstance(b, ToolResultBlock)]
    assert all(isinstance(p, TextBlock | MediaPart) for r in results for p in r.content)
    body = {"messages": to_openai(wire, system="be brief")}
    assert validate_openai(body) is None, body


@SETTINGS
@given(history())
def test_the_wire_is_always_accepted_and_never_touches_the_stored_turns(turns):
    before = [t.to_json() for t in turns]
    objects = [(t, t.blocks, list(t.blocks)) for t in turns]
    for caps in (ANTHROPIC, OPENAI, OPENAI_COMPATIBLE):
        wire = to_messages(turns, caps)
        if wire:
            _check_structure(wire)
            _check_pairing(wire)
            _check_provider(wire, caps)
        for t in wire:  # whatever a caller does to the result stays there
            t.blocks.clear()
            t.aborted = True
    assert [t.to_json() for t in turns] == before
    for t, blocks, items in objects:
        assert t.blocks is blocks and t.blocks == items
