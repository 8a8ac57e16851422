"""Exporting sessions: Markdown, Parley JSON, Anthropic and OpenAI messages.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import json
import re

import pytest

from parley.core.content import (
    CompactSummaryBlock,
    TextBlock,
    Turn,
)
from parley.core.convert import auto_detect_and_convert, import_parley
from parley.core.export import OTHER_BRANCHES, export_session, fence, suggested_filename
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import SessionNotFound
from tests.core.export_support import MODEL, PDF, PNG, make_session, rich_turns
from tests.fakes.validation import validate_anthropic, validate_openai


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


async def test_markdown_shows_every_turn_for_people(store):
    sid = await make_session(store)
    result = await export_session(store, sid, "markdown")
    md = result.text

    assert md.startswith("# Bridges & plans: a chat?\n")
    assert re.search(r"^- Date: \d{4}-\d\d-\d\d \d\d:\d\d$", md, re.M)
    assert "- Model: `anthropic:claude-sonnet-4-6`" in md
    assert "<summary>System prompt</summary>" in md and "Be brief." in md
    headers = re.findall(r"^## .*$", md, re.M)
    assert headers == [
        "## User",
        "## Assistant · claude-sonnet-4-6",
        "## Tool result",
        "## Assistant · claude-sonnet-4-6",
        "## User",
        "## Assistant · claude-sonnet-4-6",
    ]
    assert "[image: image/png]" in md and "[document: plan.pdf]" in md
    assert "<details>\n<summary>Thinking</summary>\n\nThe user wants a description." in md
    call = '**Tool call:** `search`\n\n```json\n{\n  "q": "red bridge",\n  "limit": 3\n}\n```'
    assert call in md
    assert "**Tool result:** `search`\n\n```\nGolden Gate Bridge\n```\n\n[image: image/png]" in md
    assert "```python\nprint('hi')\n```" in md  # the reply's own markdown is kept
    assert "*(signal from slack, sent by Ana)*" in md
    assert "*(stopped before it finished)*\n\nThe plan says" in md
    assert PNG not in md and PDF not in md  # no base64 in a file meant for reading
    assert result.lost == []
    assert result.suggested_filename == "Bridges & plans a chat.md"


async def test_markdown_shows_compaction_summary_and_keeps_replaced_turns(store):
    sid = await make_session(store, rich_turns()[:4])
    turns = await store.get_turns(sid)
    await store.record_compaction(
        sid, Turn("user", [CompactSummaryBlock("They talked about a bridge.")]),
        first_turn_id=turns[0].id, last_turn_id=turns[1].id, replaced_count=2,
    )
    md = (await export_session(store, sid, "markdown")).text
    assert "## Summary\n\n**Summary of 2 earlier messages** (compaction)" in md
    assert "They talked about a bridge." in md and "What is in this picture?" in md


def test_fence_is_longer_than_any_backtick_run_inside():
    text = "before\n````\ninner\n````\nafter"
    fenced = fence(text, "json")
    assert fenced.startswith("`````json\n") and fenced.endswith("\n`````")
    assert fence("plain") == "```\nplain\n```"


async def test_parley_export_is_lossless(store):
    sid = await make_session(store)
    result = await export_session(store, sid, "parley")
    data = json.loads(result.text)

    assert result.suggested_filename.endswith(".parley.json") and result.lost == []
    assert data["format"] == "parley" and data["session"]["title"] == "Bridges & plans: a chat?"
    assert data["session"]["system"] == "Be brief." and data["session"]["model"] == MODEL
    assert PNG in result.text and PDF in result.text  # files travel inside the export
    back = auto_detect_and_convert(result.text)
    stored = await store.hydrate(await store.get_turns(sid))
    assert [t.to_json() for t in back.turns] == [t.to_json() for t in stored]


async def test_anthropic_export_is_a_valid_request_and_reports_losses(store):
    sid = await make_session(store)
    result = await export_session(store, sid, "anthropic")
    body = json.loads(result.text)

    assert body["system"] == "Be brief."
    request = {"model": "claude-sonnet-4-6", "max_tokens": 1024, **body}
    assert validate_anthropic(request) is None
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant",
                                                       "user"]
    assert "The plan says" not in result.text  # the aborted reply is left out
    assert body["messages"][0]["content"][1]["source"]["data"] == PNG
    assert body["messages"][1]["content"][0] == {
        "type": "thinking", "thinking": "The user wants a description.", "signature": "sig-1",
    }
    assert any("cut off" in s for s in result.lost)
    assert result.suggested_filename.endswith(".anthropic.json")
    back = auto_detect_and_convert(result.text)
    assert back.source_format == "anthropic" and back.system == "Be brief."


async def test_openai_export_is_a_valid_request_and_reports_losses(store):
    sid = await make_session(store)
    result = await export_session(store, sid, "openai")
    body = json.loads(result.text)

    assert validate_openai({"model": "gpt-5", **body}) is None
    messages = body["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert [m["role"] for m in messages[1:4]] == ["user", "assistant", "tool"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "search"
    assert messages[-1]["role"] == "user"
    assert "The plan says" not in result.text
    assert any("thinking" in s for s in result.lost)  # OpenAI takes no thinking
    assert any("cut off" in s for s in result.lost)
    back = auto_detect_and_convert(result.text)
    assert back.source_format == "openai" and back.system == "Be brief."


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_provider_exports_send_the_summary_not_the_compacted_turns(store, fmt):
    sid = await make_session(store, rich_turns()[:4])
    await store.append_turn(sid, Turn("user", [TextBlock("And the colour?")]))
    turns = await store.get_turns(sid)
    await store.record_compaction(
        sid, Turn("user", [CompactSummaryBlock("They identified the Golden Gate Bridge.")]),
        first_turn_id=turns[0].id, last_turn_id=turns[3].id, replaced_count=4,
    )
    result = await export_session(store, sid, fmt)
    assert "Golden Gate Bridge." in result.text  # the summary
    assert "What is in this picture?" not in result.text  # the replaced turns
    assert any("4 turn(s) replaced by a compaction summary" in s for s in result.lost)
    body = json.loads(result.text)
    check = validate_anthropic if fmt == "anthropic" else validate_openai
    assert check({"model": "m", "max_tokens": 10, **body}) is None


async def test_export_of_missing_session_or_format(store):
    with pytest.raises(SessionNotFound):
        await export_session(store, "nope", "markdown")
    sid = await make_session(store, [])
    with pytest.raises(ValueError):
        await export_session(store, sid, "pdf")  # type: ignore[arg-type]
    empty = await export_session(store, sid, "markdown")
    assert empty.text.startswith("# Bridges")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Trip to Lisbon", "Trip to Lisbon.md"),
        ('a/b\\c:d*e?f"g<h>i|j', "a b c d e f g h i j.md"),
        (None, "Parley chat.md"),
        ("   ...  ", "Parley chat.md"),
        ("CON", "Parley chat CON.md"),
        ("x" * 200, "x" * 80 + ".md"),
        ("東京の旅", "東京の旅.md"),
    ],
)
def test_suggested_filename(title, expected):
    assert suggested_filename(title, "markdown") == expected


async def branched_chat(store) -> tuple[str, dict[str, str]]:
    """Lisbon: the first question edited once, the edited one's answer regenerated once;
    the chat shows the newest of each. Returns the session id and the turn ids by name."""
    s = await store.create_session(title="Lisbon", model=MODEL)
    ids: dict[str, str] = {}

    async def add(name: str, role: str, text: str) -> None:
        ids[name] = (await store.append_turn(s.id, Turn(role, [TextBlock(text)]))).id

    await add("q1", "user", "Three days in Lisbon?")
    await add("a1", "assistant", "Alfama, Belém, Sintra.")
    await store.branch_before(s.id, ids["q1"])  # Edit
    await add("q2", "user", "Two days in Lisbon?")
    await add("a2", "assistant", "Alfama and Belém.")
    await store.branch_before(s.id, ids["a2"])  # Regenerate
    await add("a3", "assistant", "Belém, then the Alfama at dusk.")
    return s.id, ids


async def test_markdown_of_a_chat_with_branches_is_the_path_shown_and_says_so(store):
    sid, _ids = await branched_chat(store)
    md = (await export_session(store, sid, "markdown")).text
    assert md.startswith("# Lisbon\n")
    assert f"- {OTHER_BRANCHES}" in md
    assert "Two days in Lisbon?" in md and "Belém, then the Alfama at dusk." in md
    for other in ("Three days", "Alfama, Belém, Sintra.", "Alfama and Belém."):
        assert other not in md
    assert md.count("## User") == 1 and md.count("## Assistant") == 1
    plain = await make_session(store, rich_turns()[:2])
    assert OTHER_BRANCHES not in (await export_session(store, plain, "markdown")).text


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_provider_exports_of_a_chat_with_branches_send_the_path_shown(store, fmt):
    sid, _ids = await branched_chat(store)
    body = json.loads((await export_session(store, sid, fmt)).text)
    text = json.dumps(body)
    assert "Two days in Lisbon?" in text and "Alfama at dusk" in text
    assert "Three days" not in text and "Alfama and Belém." not in text


async def test_parley_json_of_a_chat_with_branches_holds_the_whole_tree(store):
    sid, ids = await branched_chat(store)
    result = await export_session(store, sid, "parley")
    data = json.loads(result.text)
    assert data["version"] == 2
    by_id = {t["id"]: t for t in data["turns"]}
    assert list(by_id) == [ids[k] for k in ("q1", "a1", "q2", "a2", "a3")]  # parents first
    assert {k: by_id[ids[k]]["parent_id"] for k in ids} == {
        "q1": None, "a1": ids["q1"], "q2": None, "a2": ids["q2"], "a3": ids["q2"]}
    assert data["path"] == [ids["q2"], ids["a3"]]
    assert by_id[ids["a1"]]["blocks"][0]["text"] == "Alfama, Belém, Sintra."
    doc = import_parley(data)  # read back: the same tree and path
    assert doc.parents == {t["id"]: t["parent_id"] for t in data["turns"]}
    assert doc.path == [ids["q2"], ids["a3"]]
    assert [t.text() for t in doc.turns] == [t["blocks"][0]["text"] for t in data["turns"]]


@pytest.mark.parametrize("fmt", ["markdown", "parley", "anthropic", "openai"])
async def test_the_text_is_made_off_the_event_loops_thread(store, fmt, monkeypatch):
    """A 100,000-turn chat's export text takes seconds to make (Markdown 1.5-4.7 s,
    measured): made on the event loop, that froze the window. The functions that make
    it are watched (they still run) for the thread they run on."""
    import threading

    import parley.core.export as export

    threads: list[int] = []

    def watched(fn):
        def call(*args, **kwargs):
            threads.append(threading.get_ident())
            return fn(*args, **kwargs)
        return call

    monkeypatch.setattr(export, "to_markdown", watched(export.to_markdown))
    monkeypatch.setattr(export, "_dump", watched(export._dump))
    sid = await make_session(store)
    result = await export_session(store, sid, fmt)
    assert "bridge" in result.text.lower()
    assert threads and threading.get_ident() not in threads
