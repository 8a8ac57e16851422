"""The wire rules (parley.core.wire), one by one."""

from __future__ import annotations

import copy

from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    block_to_json,
)
from parley.core.convert import to_anthropic, to_openai
from parley.core.providers.capabilities import ANTHROPIC, OPENAI, OPENAI_COMPATIBLE
from parley.core.wire import (
    INTERRUPTED_RESULT,
    LEADING_USER_TEXT,
    STOPPED_NOTE,
    SUMMARY_HEADING,
    USER_TAIL_TEXT,
    to_messages,
)
from tests.fakes.validation import validate_anthropic, validate_openai


def user(*blocks, **kw) -> Turn:
    return Turn("user", [TextBlock(b) if isinstance(b, str) else b for b in blocks], **kw)


def bot(*blocks, **kw) -> Turn:
    return Turn("assistant", [TextBlock(b) if isinstance(b, str) else b for b in blocks], **kw)


def use(tool_id: str, name: str = "search") -> ToolUseBlock:
    return ToolUseBlock(tool_id, name, {"q": tool_id})


def result(tool_id: str, *parts, error: bool = False) -> ToolResultBlock:
    content = tuple(TextBlock(p) if isinstance(p, str) else p for p in parts) or (TextBlock("ok"),)
    return ToolResultBlock(tool_id, content, error)


def shape(turns: list[Turn]) -> list[tuple[str, list[dict]]]:
    return [(t.role, [block_to_json(b) for b in t.blocks]) for t in turns]


def texts(turn: Turn) -> list[str]:
    return [b.text for b in turn.blocks if isinstance(b, TextBlock)]


def assert_valid(turns: list[Turn]) -> None:
    for caps in (ANTHROPIC, OPENAI, OPENAI_COMPATIBLE):
        wire = to_messages(turns, caps)
        if caps is ANTHROPIC:
            assert validate_anthropic({"messages": to_anthropic(wire)}) is None
        else:
            assert validate_openai({"messages": to_openai(wire, system="s")}) is None


# --- rule 1 -----------------------------------------------------------------


def test_a_stopped_reply_the_user_answered_is_sent_as_it_was_with_a_note():
    turns = [user("hi"), bot("half a rep ", aborted=True), user("again?"), bot("full reply")]
    for caps in (ANTHROPIC, OPENAI):
        wire = to_messages(turns, caps)
        assert shape(wire)[:3] == [
            ("user", [{"type": "text", "text": "hi"}]),
            ("assistant", [{"type": "text", "text": "half a rep "}]),
            ("user", [{"type": "text", "text": STOPPED_NOTE}, {"type": "text", "text": "again?"}]),
        ]
        assert not any(t.aborted for t in wire)
    assert len(turns) == 4 and turns[1].aborted  # the stored turn is not changed
    assert_valid(turns)


def test_a_stopped_reply_with_a_tool_call_gets_its_synthetic_result_before_the_note():
    turns = [user("go"), bot("looking", use("t1"), aborted=True), user("never mind")]
    for caps in (ANTHROPIC, OPENAI):
        wire = to_messages(turns, caps)
        assert [t.role for t in wire] == ["user", "assistant", "user"]
        first, *rest = wire[2].blocks
        assert isinstance(first, ToolResultBlock) and first.is_error
        assert [b.text for b in rest if isinstance(b, TextBlock)] == [STOPPED_NOTE, "never mind"]
    assert_valid(turns)


def test_a_stopped_reply_with_nothing_sendable_is_left_out_without_a_note():
    unsigned = ThinkingBlock("hmm", None)
    turns = [user("hi"), bot(unsigned, " ", aborted=True), user("again?")]
    wire = to_messages(turns, ANTHROPIC)
    assert [t.role for t in wire] == ["user"] and texts(wire[0]) == ["hi", "again?"]


def test_an_aborted_reply_followed_by_an_empty_user_turn_is_left_out():
    turns = [user("hi"), bot("half", aborted=True), user(" "), bot("full reply"), user("ok")]
    wire = to_messages(turns, OPENAI)
    assert [texts(t) for t in wire] == [["hi"], ["full reply"], ["ok"]]


def test_an_aborted_reply_at_the_end_leaves_the_user_turn_last():
    turns = [user("question"), bot("cut o", aborted=True)]
    wire = to_messages(turns, OPENAI)
    assert [t.role for t in wire] == ["user"]
    assert texts(wire[0]) == ["question"]


# --- rule 2 -----------------------------------------------------------------


def _compacted() -> tuple[list[Turn], Turn]:
    old = [user("u1"), bot("a1"), user("u2"), bot("a2")]
    kept = [user("u3"), bot("a3")]
    summary = Turn(
        "assistant",
        [CompactSummaryBlock("They talked about u1 and u2.", 4, old[0].id, old[-1].id)],
    )
    return [*old, *kept, summary], summary


def test_a_compacted_range_is_replaced_by_its_summary_as_a_user_turn():
    turns, _ = _compacted()
    wire = to_messages(turns, ANTHROPIC)
    assert wire[0].role == "user"
    first = texts(wire[0])
    assert first[0].startswith(SUMMARY_HEADING) and first[0].endswith("about u1 and u2.")
    assert first[1:] == ["u3"]  # the kept user turn merges after the summary
    assert texts(wire[1]) == ["a3"]
    assert all(not isinstance(b, CompactSummaryBlock) for t in wire for b in t.blocks)
    assert not any(s == "u1" or s == "a2" for t in wire for s in texts(t))


def test_a_range_whose_first_turn_was_aborted_is_still_compacted():
    old = [bot("cut", aborted=True), user("u1"), bot("a1")]
    summary = user(CompactSummaryBlock("sum", 3, old[0].id, old[-1].id))
    wire = to_messages([*old, summary, user("next")], OPENAI)
    flat = [s for t in wire for s in texts(t)]
    assert "a1" not in flat and "u1" not in flat
    assert flat[0].startswith(SUMMARY_HEADING)


def test_an_aborted_summary_turn_is_ignored_and_the_earlier_one_applies():
    old = [user("u1"), bot("a1")]
    first = user(CompactSummaryBlock("first summary", 2, old[0].id, old[-1].id))
    later = [user("u2"), bot("a2")]
    aborted = Turn(
        "user",
        [CompactSummaryBlock("half", 4, old[0].id, later[-1].id)],
        aborted=True,
    )
    wire = to_messages([*old, first, *later, aborted], ANTHROPIC)
    flat = [s for t in wire for s in texts(t)]
    assert flat[0].endswith("first summary") and "u2" in flat and "a2" in flat


def test_a_legacy_summary_is_rendered_where_it_stands():
    turns = [user(CompactSummaryBlock("v3 summary", legacy=True)), bot("ok"), user("more")]
    wire = to_messages(turns, ANTHROPIC)
    assert texts(wire[0]) == [f"{SUMMARY_HEADING}\n\nv3 summary"]


# --- rule 3 -----------------------------------------------------------------


def test_a_tool_use_without_result_gets_a_synthetic_error_result():
    turns = [user("go"), bot(use("t1"), use("t2")), user(result("t1"), "and then?")]
    wire = to_messages(turns, ANTHROPIC)
    blocks = wire[2].blocks
    assert [type(b).__name__ for b in blocks] == ["ToolResultBlock", "ToolResultBlock", "TextBlock"]
    synthetic = blocks[1]
    assert isinstance(synthetic, ToolResultBlock)
    assert synthetic.tool_use_id == "t2" and synthetic.is_error
    assert synthetic.content == (TextBlock(INTERRUPTED_RESULT),)


def test_a_trailing_tool_use_gets_a_user_turn_of_synthetic_results():
    turns = [user("go"), bot("calling", use("t1"))]
    for caps in (ANTHROPIC, OPENAI):
        wire = to_messages(turns, caps)
        assert [t.role for t in wire] == ["user", "assistant", "user"]
        (only,) = wire[2].blocks
        assert isinstance(only, ToolResultBlock) and only.tool_use_id == "t1" and only.is_error


def test_a_tool_use_followed_by_another_assistant_turn_is_answered_in_between():
    # The user turn between the two replies was aborted-and-lost: merge, then answer.
    turns = [user("go"), bot(use("t1")), bot("still here"), user(result("t1"), "ok")]
    wire = to_messages(turns, ANTHROPIC)
    assert [t.role for t in wire] == ["user", "assistant", "user"]
    assert [type(b).__name__ for b in wire[1].blocks] == ["ToolUseBlock", "TextBlock"]
    assert isinstance(wire[2].blocks[0], ToolResultBlock)
    assert not wire[2].blocks[0].is_error  # the real result was kept


def test_an_orphaned_tool_result_is_dropped_and_an_emptied_turn_with_it():
    turns = [user("hi"), bot("hello"), user(result("ghost")), bot("reply"), user("bye")]
    wire = to_messages(turns, OPENAI)
    assert shape(wire) == [
        ("user", [{"type": "text", "text": "hi"}]),
        ("assistant", [{"type": "text", "text": "hello"}, {"type": "text", "text": "reply"}]),
        ("user", [{"type": "text", "text": "bye"}]),
    ]


def test_a_tool_result_in_the_first_user_turn_is_dropped():
    wire = to_messages([user(result("t0"), "start")], ANTHROPIC)
    assert shape(wire) == [("user", [{"type": "text", "text": "start"}])]


def test_a_result_for_an_older_assistant_turn_is_dropped():
    turns = [user("go"), bot(use("t1")), user(result("t1")), bot("next"), user(result("t1"))]
    wire = to_messages(turns, ANTHROPIC)
    assert [t.role for t in wire] == ["user", "assistant", "user", "assistant"]
    assert_valid(turns)


def test_same_role_turns_merge_with_tool_results_first():
    turns = [
        user("go"),
        bot(use("t1")),
        user("a comment first"),
        user(result("t1", "found")),
    ]
    wire = to_messages(turns, ANTHROPIC)
    assert [type(b).__name__ for b in wire[2].blocks] == ["ToolResultBlock", "TextBlock"]
    assert_valid(turns)


def test_a_reused_tool_use_id_is_dropped_with_its_result():
    turns = [
        user("go"),
        bot(use("t1")),
        user(result("t1", "first")),
        bot("again", use("t1")),
        user(result("t1", "second"), "done?"),
    ]
    wire = to_messages(turns, ANTHROPIC)
    uses = [b for t in wire for b in t.blocks if isinstance(b, ToolUseBlock)]
    results = [b for t in wire for b in t.blocks if isinstance(b, ToolResultBlock)]
    assert len(uses) == 1 and len(results) == 1
    assert results[0].content == (TextBlock("first"),)
    assert_valid(turns)


def test_empty_and_whitespace_text_is_removed_and_empty_turns_dropped():
    turns = [user("", "  \n"), user("real"), bot(" "), bot("answer", "")]
    wire = to_messages(turns, ANTHROPIC)
    assert shape(wire) == [
        ("user", [{"type": "text", "text": "real"}]),
        ("assistant", [{"type": "text", "text": "answer"}]),
    ]


def test_empty_text_parts_inside_tool_results_are_removed():
    turns = [user("go"), bot(use("t1")), user(result("t1", "", "data"))]
    wire = to_messages(turns, ANTHROPIC)
    (res,) = wire[2].blocks
    assert res.content == (TextBlock("data"),)


def test_nothing_to_send_gives_an_empty_list():
    assert to_messages([], ANTHROPIC) == []
    assert to_messages([bot("x", aborted=True), user(" ")], OPENAI) == []


# --- rule 4 -----------------------------------------------------------------


def test_a_leading_assistant_turn_is_kept_behind_a_minimal_user_turn():
    turns = [bot("Hello! I am your tutor."), user("teach me")]
    for caps in (ANTHROPIC, OPENAI):
        wire = to_messages(turns, caps)
        assert [t.role for t in wire] == ["user", "assistant", "user"]
        assert texts(wire[0]) == [LEADING_USER_TEXT]
        assert texts(wire[1]) == ["Hello! I am your tutor."]


def test_the_leading_turn_comes_before_a_leading_tool_use():
    turns = [bot(use("t1")), user(result("t1"))]
    wire = to_messages(turns, ANTHROPIC)
    assert [t.role for t in wire] == ["user", "assistant", "user"]
    assert_valid(turns)


# --- rule 5 -----------------------------------------------------------------


def test_user_tail_for_providers_without_prefill():
    turns = [user("hi"), bot("hello")]
    for caps in (OPENAI, OPENAI_COMPATIBLE):
        wire = to_messages(turns, caps)
        assert [t.role for t in wire] == ["user", "assistant", "user"]
        assert texts(wire[-1]) == [USER_TAIL_TEXT]


def test_anthropic_keeps_a_trailing_assistant_turn_as_prefill_without_trailing_space():
    turns = [user("hi"), bot("Sure, here is the list:\n  ")]
    wire = to_messages(turns, ANTHROPIC)
    assert [t.role for t in wire] == ["user", "assistant"]
    assert texts(wire[-1]) == ["Sure, here is the list:"]
    assert texts(turns[-1]) == ["Sure, here is the list:\n  "]  # stored turn unchanged


# --- rule 6 -----------------------------------------------------------------

PNG = ImageBlock("image/png", "iVBORw0KGgo=")
PDF = DocumentBlock("application/pdf", "JVBERi0=", "report.pdf")


def test_images_stay_inside_tool_results_for_anthropic():
    turns = [user("shoot"), bot(use("t1", "screenshot")), user(result("t1", "done", PNG))]
    wire = to_messages(turns, ANTHROPIC)
    (res,) = wire[2].blocks
    assert res.content == (TextBlock("done"), PNG)


def test_images_move_after_the_tool_results_for_openai():
    turns = [
        user("shoot"),
        bot(use("t1", "screenshot"), use("t2", "fetch")),
        user(result("t1", "done", PNG), result("t2", PDF), "what do you see?"),
    ]
    wire = to_messages(turns, OPENAI)
    blocks = wire[2].blocks
    kinds = [type(b).__name__ for b in blocks]
    assert kinds == [
        "ToolResultBlock",
        "ToolResultBlock",
        "TextBlock",
        "ImageBlock",
        "TextBlock",
        "DocumentBlock",
        "TextBlock",
    ]
    assert "`screenshot` (call t1)" in blocks[2].text and blocks[3] == PNG
    assert "`fetch` (call t2)" in blocks[4].text and blocks[5] == PDF
    assert blocks[6].text == "what do you see?"
    first = blocks[0]
    assert first.content[0] == TextBlock("done")
    assert "sent after the tool results" in first.content[1].text
    assert all(isinstance(p, TextBlock) for b in blocks[:2] for p in b.content)
    messages = to_openai(wire)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert validate_openai({"messages": messages}) is None


# --- thinking, unknown blocks, roles ------------------------------------------


def test_thinking_is_kept_for_anthropic_only_and_only_with_a_signature():
    turns = [
        user("think"),
        bot(ThinkingBlock("deep", "sig1"), ThinkingBlock("no sig"), "answer"),
        user("thanks"),
    ]
    anth = to_messages(turns, ANTHROPIC)
    assert [type(b).__name__ for b in anth[1].blocks] == ["ThinkingBlock", "TextBlock"]
    oai = to_messages(turns, OPENAI)
    assert [type(b).__name__ for b in oai[1].blocks] == ["TextBlock"]


def test_an_assistant_turn_never_ends_with_thinking():
    turns = [
        user("q"),
        bot(ThinkingBlock("only thoughts", "s")),
        user("hello?"),
        bot("a", ThinkingBlock("t", "s")),
    ]
    wire = to_messages(turns, ANTHROPIC)
    assert shape(wire) == [
        ("user", [{"type": "text", "text": "q"}, {"type": "text", "text": "hello?"}]),
        ("assistant", [{"type": "text", "text": "a"}]),
    ]


def test_redacted_thinking_goes_back_to_anthropic_only_and_other_unknown_blocks_nowhere():
    redacted = UnknownBlock({"type": "redacted_thinking", "data": "xyz"})
    odd = UnknownBlock({"type": "hologram", "x": 1})
    turns = [user("q", odd), bot(redacted, "answer", odd), user("ok")]
    anth = to_messages(turns, ANTHROPIC)
    assert anth[0].blocks == [TextBlock("q")]
    assert anth[1].blocks == [redacted, TextBlock("answer")]
    assert to_anthropic(anth)[1]["content"][0] == {"type": "redacted_thinking", "data": "xyz"}
    assert to_messages(turns, OPENAI)[1].blocks == [TextBlock("answer")]


def test_a_prefill_loses_its_thinking_for_anthropic():
    redacted = UnknownBlock({"type": "redacted_thinking", "data": "xyz"})
    turns = [user("q"), bot(ThinkingBlock("t", "s"), redacted, "Answer: ")]
    wire = to_messages(turns, ANTHROPIC)
    assert wire[-1].blocks == [TextBlock("Answer:")]
    assert validate_anthropic({"messages": to_anthropic(wire)}) is None
    raw = to_anthropic(turns)  # without the wire rules, the API would refuse it
    assert validate_anthropic({"messages": raw}).startswith("When thinking is disabled")


def test_blocks_a_role_cannot_hold_are_fitted():
    turns = [user("q", use("stray")), bot("look", PNG, result("nope"))]
    wire = to_messages(turns, ANTHROPIC)
    assert shape(wire) == [
        ("user", [{"type": "text", "text": "q"}]),
        (
            "assistant",
            [{"type": "text", "text": "look"}, {"type": "text", "text": "[image: image/png]"}],
        ),
    ]


# --- purity -------------------------------------------------------------------


def test_to_messages_never_changes_its_input_and_shares_no_turn_or_list():
    turns, _ = _compacted()
    turns += [bot(use("t9"), "  "), user(result("t9", PNG)), bot("end  ")]
    before = [t.to_json() for t in turns]
    lists = [t.blocks for t in turns]
    snapshot = copy.deepcopy(turns)
    for caps in (ANTHROPIC, OPENAI):
        wire = to_messages(turns, caps)
        for t in wire:
            t.blocks.append(TextBlock("tampered"))
            t.role = "user"
    assert [t.to_json() for t in turns] == before
    assert [t.blocks for t in turns] == [t.blocks for t in snapshot]
    assert all(a is b for a, b in zip((t.blocks for t in turns), lists, strict=True))
    wire = to_messages(turns, ANTHROPIC)
    assert not {id(t) for t in wire} & {id(t) for t in turns}
    assert not {id(t.blocks) for t in wire} & {id(t.blocks) for t in turns}


def test_to_messages_is_deterministic():
    turns = [bot("hi"), user("go"), bot(use("t1"))]
    a = [t.to_json() for t in to_messages(turns, OPENAI)]
    b = [t.to_json() for t in to_messages(turns, OPENAI)]
    assert a == b
