"""Parley turns to and from the Anthropic Messages format."""

from __future__ import annotations

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
)
from parley.core.convert import NotAConversation, from_anthropic, to_anthropic
from parley.core.convert.anthropic import anthropic_tool_id
from parley.core.convert.errors import NotAConversation as NotAConversationDirect
from parley.core.errors import ParleyError

PNG = ImageBlock("image/png", "iVBORw0KGgo=")
PDF = DocumentBlock("application/pdf", "JVBERi0=", "report.pdf")


def test_blocks_become_messages_api_blocks():
    turns = [
        Turn(
            "user",
            [
                TextBlock("look"),
                PNG,
                ImageBlock("image/jpeg", url="https://x.test/a.jpg"),
                PDF,
                DocumentBlock("text/plain", "aGVsbG8gd29ybGQ=", "notes.txt"),
            ],
        ),
        Turn(
            "assistant",
            [
                ThinkingBlock("let me see", "sig=="),
                TextBlock("calling"),
                ToolUseBlock("toolu_1", "read", {"path": "/a"}),
            ],
        ),
        Turn(
            "user",
            [ToolResultBlock("toolu_1", (TextBlock("contents"), PNG), is_error=True)],
        ),
    ]
    lost: list[str] = []
    assert to_anthropic(turns, lost=lost) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.jpg"}},
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": "JVBERi0=",
                    },
                    "title": "report.pdf",
                },
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "hello world"},
                    "title": "notes.txt",
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "let me see", "signature": "sig=="},
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "/a"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {"type": "text", "text": "contents"},
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": "iVBORw0KGgo=",
                            },
                        },
                    ],
                    "is_error": True,
                }
            ],
        },
    ]
    assert lost == []


def test_what_anthropic_cannot_hold_is_reported_once_per_kind():
    turns = [
        Turn(
            "user",
            [
                TextBlock("from slack", TextOrigin("signal", "slack", "ana")),
                ImageBlock("image/bmp", "Qk0="),
                DocumentBlock("application/msword", "AAAA", "a.doc"),
                ToolResultBlock("t1", (MediaPart("audio", "audio/wav", "UklG"),)),
                UnknownBlock({"type": "hologram"}),
            ],
        ),
        Turn("assistant", [ThinkingBlock("a"), ThinkingBlock("b"), TextBlock("hi")], model="m"),
        Turn("assistant", [ThinkingBlock("only")], aborted=True),
        Turn("user", [CompactSummaryBlock("sum", 3, "a", "b")]),
    ]
    lost: list[str] = []
    out = to_anthropic(turns, lost=lost)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]  # empty turn left out
    user = out[0]["content"]
    assert user[0] == {"type": "text", "text": "from slack"}
    assert user[1] == {"type": "text", "text": "[image: image/bmp]"}
    assert user[2] == {"type": "text", "text": "[document: a.doc]"}
    assert user[3]["content"] == [{"type": "text", "text": "[audio: audio/wav]"}]
    assert len(user) == 4
    assert out[1]["content"] == [{"type": "text", "text": "hi"}]
    assert out[2]["content"][0]["text"].endswith("sum")
    joined = "\n".join(lost)
    assert "3 thinking block(s) had no signature" in joined
    assert "1 text block(s) lost where they came from" in joined
    assert "audio or video" in joined and "image(s) in a format" in joined
    assert "document(s) of a type" in joined and "kind Anthropic does not know" in joined
    assert "cut off" in joined and "Which model wrote 1" in joined
    assert "compaction summary" in joined and "left with no content" in joined
    assert len(lost) == len(set(lost))


def test_tool_ids_are_made_acceptable_consistently_and_without_collisions():
    assert anthropic_tool_id("toolu_01AbC-d_") == "toolu_01AbC-d_"
    a, b = anthropic_tool_id("fn:get.0"), anthropic_tool_id("fn.get:0")
    assert a != b and a.startswith("fn_get_0_")
    turns = [
        Turn("assistant", [ToolUseBlock("fn:get.0", "get", {})]),
        Turn("user", [ToolResultBlock("fn:get.0", (TextBlock("x"),))]),
    ]
    out = to_anthropic(turns)
    assert out[0]["content"][0]["id"] == out[1]["content"][0]["tool_use_id"] == a


def test_from_anthropic_reads_strings_blocks_and_tool_results():
    lost: list[str] = []
    turns = from_anthropic(
        [
            {"role": "user", "content": "hello"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "redacted_thinking", "data": "enc"},
                    {"type": "text", "text": "x", "citations": [{"type": "char_location"}]},
                    {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {"a": [1]}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_9", "content": "done"},
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "hi"},
                        "title": "t.txt",
                        "cache_control": {"type": "ephemeral"},
                    },
                    {
                        "type": "document",
                        "source": {"type": "url", "url": "https://x.test/a.pdf"},
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://x.test/p.png"}},
                ],
            },
            {"role": "assistant", "content": ""},
        ],
        lost=lost,
    )
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[0].blocks == [TextBlock("hello")]
    assert turns[1].blocks == [
        ThinkingBlock("hm", "s"),
        UnknownBlock({"type": "redacted_thinking", "data": "enc"}),
        TextBlock("x"),
        ToolUseBlock("toolu_9", "f", {"a": [1]}),
    ]
    assert turns[2].blocks == [
        ToolResultBlock("toolu_9", (TextBlock("done"),)),
        DocumentBlock("text/plain", "aGk=", "t.txt"),
        TextBlock("[document: https://x.test/a.pdf]"),
        ImageBlock("image/png", url="https://x.test/p.png"),
    ]
    assert turns[3].blocks == []
    assert len({t.id for t in turns}) == 4
    assert [t.created_at for t in turns] == sorted({t.created_at for t in turns})
    assert any("citations" in s for s in lost) and any("file id or a link" in s for s in lost)


@pytest.mark.parametrize(
    ("messages", "reason"),
    [
        ("not a list", "the messages are not a list"),
        ([{"role": "system", "content": "x"}], "message 1 has role 'system'"),
        ([{"role": "user", "content": 3}], "message 1 has content that is neither"),
        ([{"role": "user", "content": ["x"]}], "message 1, block 1, is not an object"),
        ([{"role": "user", "content": [{"type": "text"}]}], "is a text block without text"),
        ([{"role": "assistant", "content": [{"type": "tool_use"}]}], "without an id or a name"),
        ([7], "message 1 is not an object"),
    ],
)
def test_from_anthropic_rejects_what_is_not_a_conversation(messages, reason):
    with pytest.raises(NotAConversation) as info:
        from_anthropic(messages)
    assert reason in info.value.reason
    assert isinstance(info.value, ParleyError) and info.value is not None
    assert "Nothing was imported" in str(info.value)
    assert NotAConversation is NotAConversationDirect
