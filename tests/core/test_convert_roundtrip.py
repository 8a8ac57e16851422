"""Round trips Parley -> Anthropic -> Parley and Parley -> OpenAI -> Parley.

What the target format can hold comes back equal; whenever something it cannot
hold is in the input, ``lost`` says so, and everything it can hold still comes
back, in order.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    TextOrigin,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    block_to_json,
)
from parley.core.convert import from_anthropic, from_openai, to_anthropic, to_openai

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.sampled_from(["a", "hello world", "日本語", "x\ny", " spaced ", "{code}", "Error:x"])
b64 = st.sampled_from(["AA==", "iVBORw0KGgo=", "/9j/4AAQ", "R0lGODlh"])
plain_b64 = st.sampled_from(["aGk=", "aGVsbG8gd29ybGQ=", "5pel5pys"])
json_values = st.sampled_from([None, True, 0, -3, "s", [1, "a"], {"k": [None]}, {"n": {"m": 1}}])
inputs = st.dictionaries(st.sampled_from(["q", "path", "n", "日"]), json_values, max_size=3)
tool_id = st.sampled_from(["toolu_01A", "call_x9", "t-1", "T_2", "a" * 30])

images = st.one_of(
    st.builds(ImageBlock, st.sampled_from(["image/png", "image/jpeg", "image/gif"]), b64),
    st.sampled_from(["png", "jpeg", "webp"]).map(
        lambda ext: ImageBlock(f"image/{ext}", url=f"https://x.test/p.{ext}")
    ),
)
pdfs = st.builds(DocumentBlock, st.just("application/pdf"), b64, words)

# --- Anthropic -----------------------------------------------------------------

a_parts = st.one_of(words.map(TextBlock), images, pdfs)
a_user_blocks = st.one_of(
    words.map(TextBlock),
    images,
    pdfs,
    st.builds(DocumentBlock, st.just("text/plain"), plain_b64, st.none() | words),
    st.builds(ToolResultBlock, tool_id, st.lists(a_parts, max_size=3).map(tuple), st.booleans()),
)
a_assistant_blocks = st.one_of(
    words.map(TextBlock),
    st.builds(ToolUseBlock, tool_id, words, inputs),
    st.builds(ThinkingBlock, st.text(max_size=5), words),
    st.just(UnknownBlock({"type": "redacted_thinking", "data": "enc"})),
    st.just(
        UnknownBlock({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}})
    ),
)


@st.composite
def anthropic_history(draw) -> list[Turn]:
    out = []
    for role in draw(st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=6)):
        blocks = a_user_blocks if role == "user" else a_assistant_blocks
        out.append(Turn(role, draw(st.lists(blocks, min_size=1, max_size=4))))
    return out


def shape(turns: list[Turn]) -> list[tuple[str, list[dict]]]:
    return [(t.role, [block_to_json(b) for b in t.blocks]) for t in turns]


# Blocks Anthropic cannot hold, mixed in: each must be reported.
inexpressible_user = st.one_of(
    words.map(lambda w: TextBlock(w, TextOrigin("signal", "slack"))),
    st.just(ImageBlock("image/bmp", "Qk0=")),
    st.just(DocumentBlock("application/zip", "UEs=", "a.zip")),
    st.just(ToolResultBlock("t1", (MediaPart("audio", "audio/wav", "UklG"),))),
    st.just(CompactSummaryBlock("sum", 1, "a", "b")),
)
inexpressible_assistant = st.one_of(
    st.just(ThinkingBlock("no signature")), st.just(UnknownBlock({"type": "x-odd"}))
)


def _is_subsequence(needles: list, haystack: list) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


@SETTINGS
@given(anthropic_history(), st.data())
def test_anthropic_round_trip_keeps_what_it_can_hold_and_reports_the_rest(turns, data):
    lost: list[str] = []
    back = from_anthropic(to_anthropic(turns, lost=lost), lost=lost)
    assert lost == []
    assert shape(back) == shape(turns)

    mixed: list[Turn] = []
    for t in turns:
        extra = inexpressible_user if t.role == "user" else inexpressible_assistant
        added = data.draw(st.lists(extra, max_size=2))
        at = data.draw(st.integers(0, len(t.blocks)))
        mixed.append(Turn(t.role, t.blocks[:at] + added + t.blocks[at:]))
    has_loss = any(len(m.blocks) != len(t.blocks) for m, t in zip(mixed, turns, strict=True))
    back = from_anthropic(to_anthropic(mixed, lost=lost))
    assert bool(lost) == has_loss
    kept = [(t.role, block_to_json(b)) for t in turns for b in t.blocks]
    got = [(t.role, block_to_json(b)) for t in back for b in t.blocks]
    assert _is_subsequence(kept, got)


# --- OpenAI ------------------------------------------------------------------------

o_results = st.builds(
    ToolResultBlock,
    tool_id,
    st.one_of(st.just(()), words.map(lambda w: (TextBlock(w),))),
    st.booleans(),
)
o_user_other = st.one_of(words.map(TextBlock), images, pdfs)


@st.composite
def openai_history(draw) -> list[Turn]:
    # Roles alternate: a user turn of tool results followed by another user turn
    # comes back as one turn (Chat Completions has no turn boundary there).
    first = draw(st.sampled_from(["user", "assistant"]))
    count = draw(st.integers(1, 6))
    out = []
    for k in range(count):
        role = first if k % 2 == 0 else ("assistant" if first == "user" else "user")
        if role == "user":
            results = draw(st.lists(o_results, max_size=2))
            others = draw(st.lists(o_user_other, max_size=3, min_size=0 if results else 1))
            out.append(Turn("user", results + others))
        else:
            texts = draw(st.lists(words.map(TextBlock), max_size=2))
            calls = draw(
                st.lists(
                    st.builds(ToolUseBlock, tool_id, words, inputs),
                    max_size=2,
                    min_size=0 if texts else 1,
                )
            )
            out.append(Turn("assistant", texts + calls))
    return out


o_inexpressible: list[Block] = [
    ThinkingBlock("t", "s"),
    ImageBlock("image/png", "AA=="),  # in an assistant turn
    UnknownBlock({"type": "redacted_thinking", "data": "x"}),
]


@SETTINGS
@given(openai_history(), st.none() | words, st.data())
def test_openai_round_trip_keeps_what_it_can_hold_and_reports_the_rest(turns, system, data):
    lost: list[str] = []
    back, got_system = from_openai(to_openai(turns, system=system, lost=lost), lost=lost)
    assert lost == []
    assert got_system == system
    assert shape(back) == shape(turns)

    mixed: list[Turn] = []
    for t in turns:
        if t.role == "assistant":
            extra = data.draw(st.lists(st.sampled_from(o_inexpressible), max_size=2))
            mixed.append(Turn("assistant", extra + t.blocks))
        else:
            media = data.draw(st.lists(images, max_size=1))
            blocks: list[Block] = [
                ToolResultBlock(b.tool_use_id, b.content + tuple(media), b.is_error)
                if isinstance(b, ToolResultBlock)
                else b
                for b in t.blocks
            ]
            mixed.append(Turn("user", blocks))
    changed = [m.blocks != t.blocks for m, t in zip(mixed, turns, strict=True)]
    back, _ = from_openai(to_openai(mixed, lost=lost))
    assert bool(lost) == any(changed)
    assert len(back) == len(turns)
    for t, b in zip(turns, back, strict=True):
        if t.role == "assistant":
            originals = [block_to_json(x) for x in t.blocks]
            assert _is_subsequence(originals, [block_to_json(x) for x in b.blocks])
        else:  # results keep their text; other blocks come back unchanged
            assert [block_to_json(x) for x in b.blocks if not isinstance(x, ToolResultBlock)] == [
                block_to_json(x) for x in t.blocks if not isinstance(x, ToolResultBlock)
            ]
            assert [r.tool_use_id for r in b.blocks if isinstance(r, ToolResultBlock)] == [
                r.tool_use_id for r in t.blocks if isinstance(r, ToolResultBlock)
            ]
