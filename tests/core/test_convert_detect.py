"""Parley's own export format and importing whatever format is given."""

from __future__ import annotations

import json

import pytest

from parley.core.content import (
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
    Usage,
)
from parley.core.convert import (
    NotAConversation,
    auto_detect_and_convert,
    export_parley,
    import_parley,
    to_anthropic,
    to_openai,
)


def every_kind_of_turn() -> list[Turn]:
    return [
        Turn("user", [TextBlock("hi", TextOrigin("signal", "slack", "ana", "m1"), recovered=True)]),
        Turn(
            "assistant",
            [ThinkingBlock("t", "s"), ToolUseBlock("toolu_1", "f", {"a": {"b": [1, None]}})],
            model="anthropic:claude-x",
            usage=Usage(10, 5, 3, 2, 0.01),
        ),
        Turn(
            "user",
            [
                ToolResultBlock(
                    "toolu_1",
                    (
                        TextBlock("x"),
                        ImageBlock("image/png", "AA=="),
                        DocumentBlock("application/pdf", "JV==", "a.pdf"),
                        MediaPart("video", "video/mp4", "AAAA"),
                    ),
                    is_error=True,
                ),
                ImageBlock("image/gif", url="https://x.test/a.gif"),
            ],
        ),
        Turn("assistant", [TextBlock("cut")], aborted=True),
        Turn(
            "user",
            [CompactSummaryBlock("sum", 2, "a", "b", "c1"), UnknownBlock({"type": "z", "v": 1})],
        ),
    ]


def test_parley_export_round_trips_everything():
    turns = every_kind_of_turn()
    data = export_parley(turns, session={"title": "Trip", "system": "Be brief."})
    assert data["format"] == "parley" and data["version"] == 1
    text = json.dumps(data)  # JSON-ready
    doc = import_parley(json.loads(text))
    assert [t.to_json() for t in doc.turns] == [t.to_json() for t in turns]
    assert doc.session == {"title": "Trip", "system": "Be brief."}
    imported = auto_detect_and_convert(text)
    assert imported.source_format == "parley"
    assert (imported.title, imported.system, imported.lost) == ("Trip", "Be brief.", [])
    assert [t.to_json() for t in imported.turns] == [t.to_json() for t in turns]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"format": "parley", "version": 3, "turns": []}, "newer Parley (format version 3"),
        ({"format": "parley", "turns": []}, "no format version"),
        ({"format": "parley", "version": 1, "turns": {}}, '"turns" are not a list'),
        ({"format": "parley", "version": 1, "turns": [{"role": "x", "blocks": []}]}, "turn 1"),
        ({"format": "other"}, "not a Parley export"),
    ],
)
def test_bad_parley_exports_are_refused(data, reason):
    with pytest.raises(NotAConversation) as info:
        import_parley(data)
    assert reason in info.value.reason


def test_a_bare_list_of_parley_turns_is_recognised():
    turns = every_kind_of_turn()
    got = auto_detect_and_convert([t.to_json() for t in turns])
    assert got.source_format == "parley"
    assert [t.to_json() for t in got.turns] == [t.to_json() for t in turns]


def test_anthropic_messages_are_recognised_as_a_list_or_with_a_system():
    turns = [
        Turn("user", [TextBlock("q")]),
        Turn("assistant", [ToolUseBlock("toolu_1", "f", {})]),
        Turn("user", [ToolResultBlock("toolu_1", (TextBlock("r"),))]),
    ]
    messages = to_anthropic(turns)
    got = auto_detect_and_convert(messages)
    assert got.source_format == "anthropic" and got.system is None
    assert [t.blocks for t in got.turns] == [t.blocks for t in turns]
    wrapped = {
        "messages": messages,
        "system": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2"}],
    }
    got = auto_detect_and_convert(json.dumps(wrapped).encode())
    assert got.source_format == "anthropic" and got.system == "S1\n\nS2"
    plain = {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}
    got = auto_detect_and_convert(plain)
    assert got.source_format == "anthropic" and got.system == "Be brief."


def test_openai_messages_are_recognised():
    turns = [
        Turn("user", [TextBlock("q")]),
        Turn("assistant", [ToolUseBlock("call_1", "f", {"x": 1})]),
        Turn("user", [ToolResultBlock("call_1", (TextBlock("r"),))]),
    ]
    got = auto_detect_and_convert(to_openai(turns, system="Sys"))
    assert got.source_format == "openai" and got.system == "Sys"
    assert [t.blocks for t in got.turns] == [t.blocks for t in turns]
    got = auto_detect_and_convert(
        {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    )
    assert got.source_format == "openai" and [t.text() for t in got.turns] == ["hi", "yo"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "the list of messages is empty"),
        (["hello", "there"], "item 1 of the list is not a message object"),
        ([{"content": "x"}], "the first being a JSON object with the keys 'content'; its items "
                             "have no 'role'"),
        ([{"role": "user"}], "message 1 has no 'content'"),
        ({"title": "x"}, "without a list of 'messages'"),
        (42, "it is a JSON int"),
        ("{not json", "it is not valid JSON (expecting property name enclosed in double "
                      "quotes at line 1, column 2)"),
        # A file cut short (a download stopped): said so, with where it stops.
        ('{"messages": [\n {"role": "user", "content": "Hel', "it looks cut off: its JSON stops "
                                                           "in the middle (line 2, column 30)"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (
            [
                {"role": "tool", "tool_call_id": "c", "content": "x"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c"}]},
            ],
            "mix the OpenAI and Anthropic formats",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "system": 5}, "'system' is neither"),
    ],
)
def test_anything_else_is_not_a_conversation(data, reason):
    with pytest.raises(NotAConversation) as info:
        auto_detect_and_convert(data)
    assert reason in info.value.reason
    assert str(info.value).startswith("This is not a conversation Parley can import")
