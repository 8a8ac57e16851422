"""Parley's Markdown export imported back (round trip), and single request bodies that keep
their model and say what they left out.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import json

import pytest

from parley.core.content import (
    TextBlock,
    TextOrigin,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.core.convert.markdown import from_markdown, looks_like_markdown
from parley.core.export import export_session
from parley.core.importing.conversation import import_conversation
from parley.core.importing.files import import_data
from parley.core.store.async_store import AsyncStore
from tests.core.export_support import MODEL, make_session, rich_turns


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


async def test_markdown_export_round_trip(store, tmp_path):
    sid = await make_session(store)
    md = (await export_session(store, sid, "markdown")).text
    path = tmp_path / "Bridges.md"
    path.write_text(md, encoding="utf-8")

    summary = await import_data(store, path.read_bytes())

    assert summary.source_format == "markdown" and summary.chats == 1
    session = await store.get_session(summary.session_ids[0])
    assert session.title == "Bridges & plans: a chat?" and session.system_prompt == "Be brief."
    original = rich_turns()
    turns = await store.get_turns(session.id)
    assert [t.role for t in turns] == [t.role for t in original]
    assert [t.aborted for t in turns] == [False] * 5 + [True]
    assert [t.model for t in turns] == [t.model for t in original]
    assert turns[0].text() == "What is in this picture?\n\n[image: image/png]"
    thinking, text, call = turns[1].blocks
    assert thinking == ThinkingBlock("The user wants a description.")  # unsigned now
    assert text == TextBlock("Let me look it up.")
    assert isinstance(call, ToolUseBlock)
    assert (call.name, dict(call.input)) == ("search", {"q": "red bridge", "limit": 3})
    (result,) = turns[2].blocks
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == call.id
    assert result.content == (TextBlock("Golden Gate Bridge"), TextBlock("[image: image/png]"))
    assert turns[3].text() == original[3].text()  # the reply's own code fence is kept
    slack = turns[4].blocks[0]
    assert slack == TextBlock("New message from Slack", origin=TextOrigin("signal", "slack", "Ana"))
    assert turns[4].blocks[1] == TextBlock("[document: plan.pdf]\n\nSummarize the plan.")
    assert turns[5].text() == "The plan says"
    assert any("only named in the Markdown file" in s for s in summary.lost)

    # Exported again, it reads the same (placeholders stay placeholders), but for the
    # tool result: its placeholder is text now, written in the result's fence.
    again = (await export_session(store, session.id, "markdown")).text.split("\n---\n")
    first = md.split("\n---\n")
    assert len(again) == len(first) == 7
    assert [a for i, a in enumerate(again) if i not in (0, 3)] == [
        f for i, f in enumerate(first) if i not in (0, 3)]
    assert "Golden Gate Bridge\n[image: image/png]\n```" in again[3]


async def test_markdown_quoting_an_export_in_a_fence_stays_one_message(store):
    quoted = "Here is one:\n\n````markdown\n```\nx\n```\n\n---\n\n## User\n\nhello\n````"
    turns = [
        Turn("user", [TextBlock(quoted)]),
        Turn("assistant", [TextBlock("A fence, `---` and a\n## User\nline.")], model=MODEL),
        Turn("user", [TextBlock("")]),
        Turn("assistant", [TextBlock("Last.")], model=MODEL),
    ]
    sid = await make_session(store, turns, title="Untitled chat")
    md = (await export_session(store, sid, "markdown")).text
    chat = from_markdown(md)
    assert chat.title is None and chat.system == "Be brief."
    # The empty user turn ("*(empty)*") has nothing to import: the two replies join.
    assert [t.role for t in chat.turns] == ["user", "assistant"]
    assert chat.turns[0].text() == quoted
    assert chat.turns[1].text() == "A fence, `---` and a\n## User\nline.Last."


def test_markdown_is_recognised_by_its_mark_only():
    assert looks_like_markdown("\ufeff# Title\n\n- Date: x\n- Exported from Parley on 2026-01-01")
    assert not looks_like_markdown("# Title\n\nJust notes.")
    assert not looks_like_markdown('{"format": "parley"}')


BODIES = [
    ({"model": "claude-sonnet-4-5", "max_tokens": 1024,
      "messages": [{"role": "user", "content": "Hi"}]},
     "anthropic", "anthropic:claude-sonnet-4-5", ["max_tokens"]),
    ({"model": "claude-3-5-haiku-latest", "max_tokens": 512, "stop_sequences": ["\n\nHuman:"],
      "tools": [{"name": "get_weather", "description": "Weather",
                 "input_schema": {"type": "object"}}],
      "system": "Be short.", "messages": [{"role": "user", "content": "Weather in Oslo?"}]},
     "anthropic", "anthropic:claude-3-5-haiku-latest", ["max_tokens", "stop_sequences",
                                                         "tools (1)"]),
    ({"model": "my-local-model", "top_k": 40, "messages": [{"role": "user", "content": "Hi"}]},
     "anthropic", "anthropic:my-local-model", ["top_k"]),
    ({"model": "gpt-4o", "temperature": 0.2, "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {}}}],
      "messages": [{"role": "user", "content": "Hi"}]},
     "openai", "openai:gpt-4o", ["temperature", "tools (1)"]),
    ({"messages": [{"role": "user", "content": "Hi"}]}, "openai", None, []),
]


@pytest.mark.parametrize(("body", "fmt", "model", "named"), BODIES)
async def test_request_bodies_keep_their_model_and_say_what_they_left_out(store, body, fmt,
                                                                          model, named):
    result = await import_conversation(store, json.dumps(body))
    assert result.source_format == fmt
    assert result.session.model == model
    if named:
        (sentence,) = [s for s in result.lost if s.startswith("The request's")]
        for name in named:
            assert name in sentence
        assert "messages" not in sentence and "model" not in sentence.split(":")[0]
    else:
        assert not any(s.startswith("The request's") for s in result.lost)


async def test_importing_the_same_markdown_export_twice_adds_it_once(store, tmp_path):
    """Re-importing adds only conversations not imported before (README), Parley's own
    Markdown export included; the summary names the format and no zero counts."""
    from parley.core.export import to_markdown
    from parley.core.importing.files import import_path

    s = await store.create_session(title="Bread")
    await store.append_turn(s.id, Turn("user", [TextBlock("How long to proof?")]))
    await store.append_turn(s.id, Turn("assistant", [TextBlock("4 to 6 hours.")]))
    path = tmp_path / "bread.md"
    path.write_text(to_markdown(await store.get_session(s.id), await store.get_turns(s.id)),
                    encoding="utf-8")

    first = await import_path(store, path)
    again = await import_path(store, path)

    assert first.chats == 1 and first.single is not None
    assert first.text() == "1 chat, 2 messages from Parley's Markdown export."
    assert again.chats == 0 and again.skipped == 1 and again.single is None
    assert again.text() == ("Nothing new: the conversation of this Markdown export was "
                            "imported before.")
    titles = [x.title for x in await store.list_sessions()]
    assert titles.count("Bread") == 2  # the original and one import, not two
