"""The compaction planner and request transforms, as pure functions (no server, no database)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from parley.core.compaction.plan import plan_compaction, restorable_files
from parley.core.compaction.prompt import extract_summary, note_text, transcript_prompt
from parley.core.compaction.wire import hide_tool_output, stub_for_overflow
from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    apply_compactions,
)
from parley.core.convert.anthropic import to_anthropic
from parley.core.convert.openai import to_openai
from parley.core.providers.capabilities import ANTHROPIC, OPENAI
from parley.core.wire import to_messages
from tests.fakes.validation import validate_anthropic, validate_openai


def u(text: str) -> Turn:
    return Turn("user", [TextBlock(text)])


def a(text: str) -> Turn:
    return Turn("assistant", [TextBlock(text)])


def call(i: int) -> Turn:
    return Turn("assistant", [TextBlock(f"calling {i}"), ToolUseBlock(f"toolu_{i}", "run", {})])


def result(i: int, text: str = "output") -> Turn:
    return Turn("user", [ToolResultBlock(f"toolu_{i}", (TextBlock(text),))])


def summarize(stored: list[Turn], keep: int) -> list[Turn]:
    """What the Compactor appends, without a model: stored + a summary turn."""
    plan = plan_compaction(stored, keep)
    assert plan is not None
    block = CompactSummaryBlock("S", plan.replaced_count, plan.first_turn_id, plan.last_turn_id)
    return [*stored, Turn("user", [block])]


def test_boundary_moves_back_to_keep_a_tool_call_with_its_result():
    stored = [u("q"), a("a"), u("go"), call(1), result(1), call(2), result(2), a("done")]
    plan = plan_compaction(stored, 2)  # the 2nd-last turn answers toolu_2
    assert plan is not None
    assert plan.kept[0] is stored[5]  # moved back to the call
    assert plan.last_turn_id == stored[4].id and plan.replaced_count == 5


def test_boundary_moves_forward_when_nothing_would_be_left_to_summarize():
    stored = [call(1), result(1), a("done")]
    plan = plan_compaction(stored, 2)
    assert plan is not None and plan.kept == [stored[2]]
    plan = plan_compaction([call(1), result(1)], 1)  # no cut keeps the pair: all summarized
    assert plan is not None and plan.kept == [] and plan.replaced_count == 2


def test_nothing_to_compact_and_keep_zero():
    stored = [u("1"), a("2"), u("3")]
    assert plan_compaction(stored, 3) is None
    plan = plan_compaction(stored, 0)
    assert plan is not None and plan.kept == [] and plan.replaced_count == 3


def test_aborted_turns_are_not_counted_and_are_dropped():
    stored = [u("1"), Turn("assistant", [TextBlock("cut")], aborted=True), a("2"), u("3"), a("4")]
    plan = plan_compaction(stored, 2)
    assert plan is not None and plan.kept == stored[3:]
    assert plan.dropped_count == 1 and plan.replaced_count == 3
    assert stored[1] not in plan.summarized


def test_recompaction_range_starts_at_the_first_turn_even_when_the_summary_came_mid_run():
    stored = [u("1"), a("2"), u("3"), a("4"), u("5")]
    first = summarize(stored, 2)  # summary stored after u("5"), before its reply
    first.append(a("6"))
    first += [u("7"), a("8")]
    plan = plan_compaction(first, 2)
    assert plan is not None and plan.first_turn_id == stored[0].id
    assert [t.text() for t in plan.summarized[1:]] == ["4", "5", "6"]
    assert plan.previous and plan.previous[0].summary == "S"
    assert plan.replaced_count == 6  # summary turns are not counted
    after = summarize(first, 2)
    assert [t.text() for t in apply_compactions(after)[1:]] == ["7", "8"]


def test_restored_files_are_the_most_recent_user_attachments_within_budget():
    img = [ImageBlock("image/png", data=f"AAAA{i}") for i in range(5)]
    turns = [Turn("user", [TextBlock("look"), b]) for b in img]
    turns.append(Turn("assistant", [TextBlock("x"), ImageBlock("image/png", data="ZZZZ")]))
    assert restorable_files(turns, 1_000_000) == img[2:]
    assert restorable_files(turns, 2_000) == []  # 25% of 2k cannot hold one image


def test_tail_hides_old_results_and_overflow_stubs_older_output_and_files():
    big = "data " * 400
    stored = [u("q"), call(1), result(1, big), call(2), result(2, big), call(3), result(3, "ok")]
    hidden = hide_tool_output(stored, 3)  # the last 3 turns: call 2's result stays
    assert hidden[2].blocks[0].content[0].text.startswith("[tool output hidden")  # type: ignore
    assert hidden[4] is stored[4] and hidden[6] is stored[6]
    assert stored[2].blocks[0].content[0].text == big  # type: ignore[union-attr]
    with_image = [Turn("user", [ImageBlock("image/png", data="QUJD")]), a("ok"), *stored]
    stubbed = stub_for_overflow(with_image)
    assert stubbed[0].blocks[0].text.startswith("[image hidden")  # type: ignore[union-attr]
    assert stubbed[-1] is with_image[-1]  # the last user turn goes whole


def test_prompts_and_summary_extraction():
    assert extract_summary("Sure!\n<summary>\n## Topic\nX\n</summary>") == "## Topic\nX"
    assert extract_summary("<summary>cut off") == "cut off"
    assert extract_summary("plain answer") is None  # no tags: not a summary
    assert extract_summary("  <summary> </summary> ") is None
    note = note_text([u("keep me please")], has_previous=True)
    assert "«keep me please»" in note and "Update that summary" in note
    prompt = transcript_prompt([call(1), result(1, "x" * 20_000)], level=1)
    assert "called tool `run`" in prompt and "characters left out" in prompt
    assert "did not fit" not in prompt and len(prompt) < 5_000
    long_text = "word " * 4_000  # what people wrote is never clipped, at any level
    assert long_text.strip() in transcript_prompt([u(long_text)], level=1)


def _conversation(draw: st.DrawFn) -> list[Turn]:
    turns: list[Turn] = []
    kinds = draw(st.lists(st.sampled_from("qtxa"), min_size=1, max_size=14))
    for n, kind in enumerate(kinds, start=1):
        if kind == "q":
            turns += [u(f"q{n}"), a(f"a{n}")]
        elif kind == "t":
            turns += [call(n), result(n)]
        elif kind == "x":
            turns.append(Turn("assistant", [TextBlock("cut")], aborted=True))
        else:
            turns.append(u(f"more {n}"))
    return turns


@settings(max_examples=100, deadline=None)
@given(data=st.data(), keep=st.integers(0, 6), again=st.integers(0, 6))
def test_every_compacted_history_is_a_valid_request(data, keep, again):
    stored = data.draw(st.composite(_conversation)())
    plan = plan_compaction(stored, keep)
    if plan is None:
        return
    if plan.kept:
        first_kept = plan.kept[0]
        assert not (first_kept.role == "user"
                    and any(isinstance(b, ToolResultBlock) for b in first_kept.blocks))
    compacted = summarize(stored, keep)
    compacted += [call(99), result(99), u("after")]
    if plan_compaction(compacted, again) is not None:
        compacted = summarize(compacted, again)
    for caps, convert, check in ((ANTHROPIC, to_anthropic, validate_anthropic),
                                 (OPENAI, to_openai, validate_openai)):
        wire = to_messages(compacted, caps)
        assert wire[0].role == "user"
        assert any(isinstance(b, TextBlock) and "S" in b.text for b in wire[0].blocks)
        body = {"model": "m", "max_tokens": 10, "messages": convert(wire)}
        assert check(body) is None
