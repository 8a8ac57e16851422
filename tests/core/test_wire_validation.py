"""The fake server's request validators give the real APIs' 400 messages."""

from __future__ import annotations

import pytest

from tests.fakes.validation import validate_anthropic, validate_openai


def a_user(content="hi"):
    return {"role": "user", "content": content}


def a_bot(content="hello"):
    return {"role": "assistant", "content": content}


def a_use(tid="toolu_1"):
    return {"type": "tool_use", "id": tid, "name": "f", "input": {}}


def a_result(tid="toolu_1", content="ok"):
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def anth(*messages, **extra):
    return validate_anthropic({"messages": list(messages), **extra})


def test_anthropic_valid_conversation_passes():
    assert (
        anth(
            a_user(),
            a_bot([{"type": "thinking", "thinking": "t", "signature": "s"}, a_use()]),
            a_user([a_result(), {"type": "text", "text": "more"}]),
            a_bot("prefill"),
            system=[{"type": "text", "text": "be brief"}],
        )
        is None
    )


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], "messages: at least one message is required"),
        ([a_bot(), a_user()], 'messages: first message must use the "user" role'),
        (
            [a_user(), a_user()],
            'messages: roles must alternate between "user" and "assistant", '
            'but found multiple "user" roles in a row',
        ),
        (
            [a_user(""), a_bot()],
            "messages.0: all messages must have non-empty content except for the optional "
            "final assistant message",
        ),
        (
            [a_user([{"type": "text", "text": ""}])],
            "messages: text content blocks must be non-empty",
        ),
        (
            [a_user([{"type": "text", "text": " \n"}])],
            "messages: text content blocks must contain non-whitespace text",
        ),
        ([a_user(), a_bot("done ")], "final assistant content cannot end with trailing whitespace"),
        (
            [a_user(), a_bot([a_use()]), a_user("no result")],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        ),
        (
            [a_user(), a_bot([a_use()]), a_user([{"type": "text", "text": "x"}, a_result()])],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        ),
        (
            [a_user([a_result("toolu_9")])],
            "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message.",
        ),
        (
            [a_user(), a_bot([a_use()]), a_user([a_result()]), a_bot([a_use()])],
            "messages.3.content.0: `tool_use` ids must be unique",
        ),
        (
            [a_user(), a_bot([a_use("call:1")])],
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        ),
        (
            [
                a_user(),
                a_bot([{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"}]),
            ],
            "messages.1.content.0.thinking.signature: Field required",
        ),
        (
            [
                a_user(),
                a_bot(
                    [
                        {"type": "text", "text": "a"},
                        {"type": "thinking", "thinking": "t", "signature": "s"},
                    ]
                ),
            ],
            "messages.1.content.1: The final block in an assistant message cannot be `thinking`.",
        ),
        (
            [
                a_user(
                    [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/bmp", "data": "x"},
                        }
                    ]
                )
            ],
            "messages.0.content.0.source.base64.media_type: Input should be 'image/jpeg', "
            "'image/png', 'image/gif' or 'image/webp'",
        ),
    ],
)
def test_anthropic_rejections(messages, expected):
    assert anth(*messages) == expected


def test_anthropic_rejects_unknown_block_types_like_pydantic():
    err = anth(a_user([{"type": "compact_summary", "summary": "s"}]))
    assert err is not None
    assert err.startswith("messages.0.content.0: Input tag 'compact_summary' found using 'type'")


def test_anthropic_rejects_a_tool_use_in_a_user_message():
    assert anth(a_user([a_use()])) == (
        "messages.0.content.0: `tool_use` blocks can only be in `assistant` messages"
    )


def o_user(content="hi"):
    return {"role": "user", "content": content}


def o_bot(content=None, calls=()):
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [
            {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for c in calls
        ]
    return msg


def o_tool(cid="call_1", content="ok"):
    return {"role": "tool", "tool_call_id": cid, "content": content}


def oai(*messages):
    return validate_openai({"messages": list(messages)})


def test_openai_valid_conversation_passes():
    assert (
        oai(
            {"role": "system", "content": "sys"},
            o_bot("Hi, I start."),
            o_user(
                [
                    {"type": "text", "text": "x"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                ]
            ),
            o_bot(None, ["call_1", "call_2"]),
            o_tool("call_2"),
            o_tool("call_1"),
            o_user("thanks"),
            o_bot("prefill is fine"),
        )
        is None
    )


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], "[] is too short - 'messages'"),
        (
            [o_user(), o_bot(None, ["call_1", "call_2"]), o_tool("call_1"), o_user()],
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            "response messages: call_2",
        ),
        (
            [o_user(), o_tool("call_1")],
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
        ),
        (
            [o_user(), o_bot(None, ["call_1"]), o_tool("call_1"), o_user(), o_tool("call_1")],
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
        ),
        (
            [o_user(), o_bot(None, ["call_1"]), o_tool("call_7")],
            "Invalid parameter: 'tool_call_id' of 'call_7' not found in 'tool_calls' of "
            "previous message.",
        ),
        ([o_user(None)], "Invalid value for 'content': expected a string, got null."),
        ([o_user(), o_bot(None)], "Invalid value for 'content': expected a string, got null."),
        (
            [o_user(), o_bot(None, ["c" * 41]), o_tool("c" * 41)],
            "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with "
            "maximum length 40, but got a string with length 41 instead.",
        ),
        (
            [
                o_user(),
                o_bot(None, ["call_1"]),
                {
                    "role": "tool",
                    "tool_call_id": "call_1",
                    "content": [{"type": "image_url", "image_url": {"url": "u"}}],
                },
            ],
            "Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', "
            "but this message with role 'tool' contains an image URL.",
        ),
        (
            [o_user([])],
            "Invalid 'messages[0].content': empty array. Expected an array with minimum length "
            "1, but got an empty array instead.",
        ),
    ],
)
def test_openai_rejections(messages, expected):
    assert oai(*messages) == expected


def test_openai_rejects_object_arguments():
    msg = o_bot(None, ["call_1"])
    msg["tool_calls"][0]["function"]["arguments"] = {"a": 1}
    err = oai(o_user(), msg, o_tool())
    assert err == (
        "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, "
        "but got an object instead."
    )


def test_missing_messages():
    assert validate_anthropic({}) == "messages: Field required"
    assert validate_openai({}) == "Missing required parameter: 'messages'."
