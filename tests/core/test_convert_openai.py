"""Parley turns to and from OpenAI Chat Completions messages."""

from __future__ import annotations

import json

import pytest

from parley.core.content import (
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)
from parley.core.convert import NotAConversation, from_openai, to_openai
from parley.core.convert.openai import openai_tool_id

PNG = ImageBlock("image/png", "iVBORw0KGgo=")
PDF = DocumentBlock("application/pdf", "JVBERi0=", "report.pdf")


def test_turns_become_chat_messages_with_tool_messages_after_the_call():
    turns = [
        Turn("user", [TextBlock("read /a and look"), PNG, PDF]),
        Turn(
            "assistant",
            [TextBlock("on it"), ToolUseBlock("call_1", "read", {"path": "/a", "n": 2})],
        ),
        Turn(
            "user",
            [
                ToolResultBlock("call_1", (TextBlock("line 1"), TextBlock("line 2"))),
                TextBlock("thanks"),
            ],
        ),
        Turn("assistant", [TextBlock("part 1"), TextBlock("part 2")]),
    ]
    lost: list[str] = []
    out = to_openai(turns, system="You are terse.", lost=lost)
    assert out == [
        {"role": "system", "content": "You are terse."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "read /a and look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {
                    "type": "file",
                    "file": {
                        "filename": "report.pdf",
                        "file_data": "data:application/pdf;base64,JVBERi0=",
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "content": "on it",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "/a", "n": 2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "line 1\nline 2"},
        {"role": "user", "content": "thanks"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "part 1"}, {"type": "text", "text": "part 2"}],
        },
    ]
    assert json.loads(out[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "/a", "n": 2}
    assert lost == []


def test_tool_only_assistant_has_null_content_and_errors_are_prefixed():
    turns = [
        Turn("assistant", [ToolUseBlock("c1", "f", {})]),
        Turn("user", [ToolResultBlock("c1", (TextBlock("boom"),), is_error=True)]),
    ]
    out = to_openai(turns)
    assert out[0]["content"] is None and out[0]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert out[1] == {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"}


def test_what_openai_cannot_hold_is_reported():
    turns = [
        Turn(
            "user",
            [
                ToolResultBlock("c1", (TextBlock("see"), PNG)),
                DocumentBlock("text/markdown", "IyBUaXRsZQ==", "r.md"),
                DocumentBlock("application/zip", "UEs="),
            ],
        ),
        Turn("assistant", [ThinkingBlock("hm", "s"), TextBlock("ok"), PNG]),
        Turn("assistant", [UnknownBlock({"type": "redacted_thinking", "data": "x"})]),
    ]
    lost: list[str] = []
    out = to_openai(turns, lost=lost)
    assert out[0] == {"role": "tool", "tool_call_id": "c1", "content": "see\n[image: image/png]"}
    assert out[1]["content"] == [
        {"type": "text", "text": "[document: r.md]\n# Title"},
        {"type": "text", "text": "[document: document]"},
    ]
    assert out[2]["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "text", "text": "[image: image/png]"},
    ]
    assert out[3] == {"role": "assistant", "content": ""}
    joined = "\n".join(lost)
    assert "thinking" in joined and "tool messages hold only text" in joined
    assert "other than PDF" in joined and "assistant messages hold only text" in joined
    assert "does not know" in joined


def test_long_tool_ids_are_shortened_the_same_way_for_call_and_result():
    long = "toolu_" + "x" * 50
    assert len(openai_tool_id(long)) == 40 and openai_tool_id("call_1") == "call_1"
    assert openai_tool_id(long) != openai_tool_id(long + "y")
    turns = [
        Turn("assistant", [ToolUseBlock(long, "f", {})]),
        Turn("user", [ToolResultBlock(long, (TextBlock("r"),))]),
    ]
    out = to_openai(turns)
    assert out[0]["tool_calls"][0]["id"] == out[1]["tool_call_id"] == openai_tool_id(long)


def test_from_openai_folds_tool_messages_and_the_next_user_message_into_one_turn():
    lost: list[str] = []
    turns, system = from_openai(
        [
            {"role": "system", "content": "Be kind."},
            {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "time", "arguments": "not json"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "rain"},
            {"role": "tool", "tool_call_id": "call_b", "content": "Error: no clock"},
            {"role": "user", "content": "and tomorrow?"},
            {"role": "assistant", "content": "sun", "refusal": None},
            {"role": "system", "content": "Late rule."},
        ],
        lost=lost,
    )
    assert system == "Be kind.\n\nUse tools.\n\nLate rule."
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[1].blocks == [
        ToolUseBlock("call_a", "weather", {"city": "Oslo"}),
        ToolUseBlock("call_b", "time", {"arguments": "not json"}),
    ]
    assert turns[2].blocks == [
        ToolResultBlock("call_a", (TextBlock("rain"),)),
        ToolResultBlock("call_b", (TextBlock("no clock"),), is_error=True),
        TextBlock("and tomorrow?"),
    ]
    assert turns[3].blocks == [TextBlock("sun")]
    joined = "\n".join(lost)
    assert "not a JSON object" in joined and "moved to the system prompt" in joined


def test_from_openai_reads_images_files_audio_and_legacy_functions():
    turns, system = from_openai(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}},
                    {"type": "image_url", "image_url": {"url": "https://x.test/a.webp"}},
                    {
                        "type": "file",
                        "file": {
                            "filename": "a.pdf",
                            "file_data": "data:application/pdf;base64,JVB=",
                        },
                    },
                    {"type": "file", "file": {"file_id": "file-123"}},
                    {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "lookup", "arguments": '{"q": 1}'},
            },
            {"role": "function", "name": "lookup", "content": "found"},
        ]
    )
    assert system is None
    audio = {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}
    assert turns[0].blocks == [
        TextBlock("see"),
        ImageBlock("image/jpeg", "/9j/"),
        ImageBlock("image/webp", url="https://x.test/a.webp"),
        DocumentBlock("application/pdf", "JVB=", "a.pdf"),
        UnknownBlock({"type": "file", "file": {"file_id": "file-123"}}),
        UnknownBlock(audio),
    ]
    (call,) = turns[1].blocks
    assert isinstance(call, ToolUseBlock) and call.name == "lookup" and call.input == {"q": 1}
    assert turns[2].blocks == [ToolResultBlock(call.id, (TextBlock("found"),))]
    # Passthrough parts go back to OpenAI unchanged.
    back = to_openai(turns[:1])
    assert back[0]["content"][-1] == audio
    assert back[0]["content"][-2] == {"type": "file", "file": {"file_id": "file-123"}}


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        ({"role": "user"}, "the messages are not a list"),
        (["hi"], "message 1 is not an object"),
        ([{"role": "robot", "content": "x"}], "message 1 has role 'robot'"),
        ([{"role": "tool", "content": "x"}], "without a tool_call_id"),
        ([{"role": "user", "content": 5}], "neither text nor a list"),
        ([{"role": "user", "content": [{"type": "image"}]}], "not a content part OpenAI knows"),
        (
            [{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}],
            "message 1, tool call 1, has no function name",
        ),
    ],
)
def test_from_openai_rejects_what_is_not_a_conversation(messages, reason):
    with pytest.raises(NotAConversation) as info:
        from_openai(messages)
    assert reason in info.value.reason
