"""v3 block -> v4 block conversion, one rule at a time (points 2, 5, 6 of
parley.core.store.upgrade.v3).

SQLite only: the v3 upgrade works on files only.
"""

from __future__ import annotations

import json

import pytest

from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    TextOrigin,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    blocks_from_json_text,
)
from tests.core.upgrades import convert_turn


def convert(*blocks: object, role: str = "user") -> list[object]:
    role4, text, recovered = convert_turn(role, json.dumps(list(blocks)))
    assert (role4, recovered) == (role, False)
    return blocks_from_json_text(text)


def test_text_origin_message_id_and_default_kind() -> None:
    out = convert(
        {"type": "text", "text": "hi", "origin": {"kind": "signal", "source": "slack",
                                                   "sender": "Dana", "messageId": "M1"}},
        {"type": "text", "text": "x", "origin": {"source": "timer"}},
        {"type": "text", "text": "plain", "origin": None},
    )
    assert out == [
        TextBlock("hi", TextOrigin("signal", "slack", "Dana", "M1")),
        TextBlock("x", TextOrigin("user", "timer")),
        TextBlock("plain"),
    ]


def test_images_by_data_url_or_both() -> None:
    out = convert(
        {"type": "image", "mediaType": "image/png", "data": "AAAA"},
        {"type": "image", "mediaType": "image/jpeg", "url": "https://x/y.jpg"},
        {"type": "image", "mediaType": "image/gif", "data": "BB", "url": "https://x/z.gif"},
    )
    assert out == [
        ImageBlock("image/png", data="AAAA"),
        ImageBlock("image/jpeg", url="https://x/y.jpg"),
        ImageBlock("image/gif", "BB", "https://x/z.gif"),
    ]


def test_tool_call_and_results_string_parts_and_missing() -> None:
    out = convert(
        {"type": "tool-call", "id": "c1", "name": "ls", "args": {"a": [1, None], "b": {}}},
        {"type": "tool-call", "id": "c2", "name": "now"},
        role="assistant",
    )
    assert out == [ToolUseBlock("c1", "ls", {"a": [1, None], "b": {}}),
                   ToolUseBlock("c2", "now", {})]
    out = convert(
        {"type": "tool-result", "callId": "c1", "output": "ok"},
        {"type": "tool-result", "callId": "c2", "isError": True, "output": [
            {"type": "text", "text": "t"}, {"type": "image", "mediaType": "image/png",
                                            "data": "QQ"}]},
        {"type": "tool-result", "callId": "c3"},
    )
    assert out == [
        ToolResultBlock("c1", (TextBlock("ok"),)),
        ToolResultBlock("c2", (TextBlock("t"), ImageBlock("image/png", "QQ")), is_error=True),
        ToolResultBlock("c3", ()),
    ]


def test_compact_summary_is_legacy_without_range() -> None:
    (block,) = convert({"type": "compact-summary", "text": "before", "replacedTurns": 7})
    assert block == CompactSummaryBlock("before", 7, legacy=True)
    assert block.first_turn_id is None and block.last_turn_id is None


def test_unknown_blocks_kept_with_every_field() -> None:
    raw = {"type": "x-poll", "q": "?", "n": 1.5, "deep": {"k": [None, True]}}
    assert convert(raw, {"no_type": 1}) == [UnknownBlock(raw), UnknownBlock({"no_type": 1})]


@pytest.mark.parametrize(
    "content",
    [
        '[{"type":"text","text":"cut',  # invalid JSON
        "",
        "just words",
        '{"type":"text","text":"object, not list"}',
        '["bare string"]',
        '[{"type":"text"}]',  # missing field
        '[{"type":"text","text":5}]',  # wrong type
        '[{"type":"image","mediaType":"image/png"}]',  # neither data nor url
        '[{"type":"tool-call","id":"c","name":"n","args":"{\\"partial"}]',  # args not object
        '[{"type":"tool-result","callId":"c","output":[{"type":"audio"}]}]',
        '[{"type":"tool_use","id":"c"}]',  # a v4 name v4 would misread
        "[NaN]",
    ],
)
def test_damaged_turn_kept_verbatim_as_recovered_text(content: str) -> None:
    role, text, recovered = convert_turn("assistant", content)
    assert (role, recovered) == ("assistant", True)
    assert blocks_from_json_text(text) == [TextBlock(content, recovered=True)]


def test_unknown_role_becomes_recovered_user_turn() -> None:
    content = '[{"type":"text","text":"sys"}]'
    role, text, recovered = convert_turn("system", content)
    assert (role, recovered) == ("user", True)
    assert blocks_from_json_text(text) == [TextBlock(content, recovered=True)]


def test_lone_surrogate_escape_replaced_not_dropped() -> None:
    role, text, recovered = convert_turn("user", '[{"type":"text","text":"a\\ud83db"}]')
    assert not recovered
    assert blocks_from_json_text(text) == [TextBlock("a\ufffdb")]
    text.encode("utf-8")  # storable


def test_search_text_is_what_the_v4_triggers_index(tmp_path) -> None:
    """The fast path for plain-text turns must index exactly what parley_turn_text does."""
    from parley.core.store.textindex import index_turn_text
    from parley.core.store.upgrade.convert import convert_turn_indexed
    from tests.v3gen import generate

    gen = generate(tmp_path / "s.db", seed=4, sessions=20, turns_per_session=20)
    contents = [(t.role, t.content) for ts in gen.expected.turns.values() for t in ts]
    contents += [("user", '[{"type":"text","text":"ünïcödé 東京 café"},{"type":"text","text":""}]'),
                 ("user", '[{"type":"text","text":"esc\\u00e9"}]')]
    fast = 0
    for role, content in contents:
        role4, blocks, recovered, text = convert_turn_indexed(role, content)
        assert (role4, blocks, recovered) == convert_turn(role, content) or (
            blocks_from_json_text(blocks) == blocks_from_json_text(convert_turn(role, content)[1])
        )
        assert text == index_turn_text(blocks)
        fast += blocks == content
    assert fast > len(contents) // 2  # most turns take the fast path
