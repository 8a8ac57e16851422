"""Importing conversation files as new sessions.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import json

import pytest

import parley.core.importing.conversation as importing
from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.convert import NotAConversation
from parley.core.export import export_session
from parley.core.importing.conversation import ImportTooLarge, import_conversation, import_file
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import DiskFull, SpaceNotFound
from tests.core.export_support import make_session, rich_turns


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


async def session_count(store) -> int:
    return len(await store.list_sessions(include_archived=True, limit=10_000))


def content(turns: list[Turn]) -> list[dict]:
    """The turns without their ids (an import gives new ones)."""
    out = []
    for t in turns:
        data = t.to_json()
        data.pop("id")
        for b in data["blocks"]:
            for key in ("first_turn_id", "last_turn_id", "compaction_id"):
                b.pop(key, None)
        out.append(data)
    return out


async def test_parley_export_imports_as_an_equal_new_session_twice(store):
    sid = await make_session(store)
    exported = (await export_session(store, sid, "parley")).text
    space = await store.create_space("Imports")

    first = await import_conversation(store, exported.encode("utf-8"), space_id=space.id)
    second = await import_conversation(store, exported)  # same file again: new ids, no clash

    original = await store.get_turns(sid)
    for result in (first, second):
        assert result.source_format == "parley" and result.lost == []
        assert result.turns_imported == len(original) == result.session.turn_count
        assert result.session.title == "Bridges & plans: a chat?"
        assert result.session.system_prompt == "Be brief."
        imported = await store.get_turns(result.session.id)
        assert content(imported) == content(original)
        assert not {t.id for t in imported} & {t.id for t in original}
        assert result.session.usage.output_tokens == 0  # no request was made by this session
    assert first.session.space_id == space.id
    assert second.session.space_id == (await store.default_space()).id
    assert first.session.parent_session_id is None


async def test_compaction_of_a_parley_export_is_relinked(store):
    sid = await make_session(store, rich_turns()[:4])
    turns = await store.get_turns(sid)
    await store.record_compaction(
        sid, Turn("user", [CompactSummaryBlock("About a bridge.")]),
        first_turn_id=turns[0].id, last_turn_id=turns[1].id, replaced_count=2,
    )
    exported = (await export_session(store, sid, "parley")).text

    result = await import_conversation(store, exported)
    new_id = result.session.id
    new_turns = await store.get_turns(new_id)
    (compaction,) = await store.list_compactions(new_id)
    assert (compaction.first_turn_id, compaction.last_turn_id) == (new_turns[0].id, new_turns[1].id)
    summary = new_turns[-1].blocks[0]
    assert isinstance(summary, CompactSummaryBlock)
    assert summary.first_turn_id == new_turns[0].id and summary.compaction_id == compaction.id
    history = await store.history(new_id)
    assert [t.id for t in history] == [new_turns[4].id, new_turns[2].id, new_turns[3].id]


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_provider_exports_import_back(store, fmt):
    sid = await make_session(store)
    exported = (await export_session(store, sid, fmt)).text
    result = await import_conversation(store, exported)
    assert result.source_format == fmt
    assert result.session.title == "What is in this picture?"  # no title in the file
    assert result.session.system_prompt == "Be brief."
    turns = await store.get_turns(result.session.id)
    assert turns[0].text() == "What is in this picture?"
    assert "Golden Gate Bridge" in turns[3].text()


async def test_openai_messages_with_title_and_losses(store):
    data = [
        {"role": "user", "content": "Hello"},
        {"role": "system", "content": "Answer in French."},
        {"role": "assistant", "content": "Bonjour"},
    ]
    result = await import_conversation(store, json.dumps(data), title="  Greetings ")
    assert result.source_format == "openai" and result.turns_imported == 2
    assert result.session.title == "Greetings" and result.session.title_source == "user"
    assert result.session.system_prompt == "Answer in French."
    assert any("system message" in s for s in result.lost)
    assert [t.text() for t in await store.get_turns(result.session.id)] == ["Hello", "Bonjour"]
    assert (await store.search("Bonjour"))[0].session_id == result.session.id


async def test_imports_without_a_title_are_titled_from_their_first_user_message(store):
    first = [{"role": "user", "content": "\n# Plan a week in Lisbon\nin May, by train"},
             {"role": "assistant", "content": "Sure."}]
    second = [{"role": "system", "content": "Be brief."},
              {"role": "user", "content": [{"type": "text", "text": "x" * 200}]},
              {"role": "assistant", "content": "Done."}]
    titles = [(await import_conversation(store, json.dumps(d))).session.title
              for d in (first, second)]
    assert titles[0] == "Plan a week in Lisbon"
    assert titles[1].startswith("xxx") and titles[1].endswith("…") and len(titles[1]) < 200
    # a file's own title is kept; a conversation with no user text gets the default
    titled = {"format": "parley", "version": 1, "session": {"title": "From the file"},
              "turns": [{"role": "user", "blocks": [{"type": "text", "text": "Hi"}]}]}
    assert (await import_conversation(store, json.dumps(titled))).session.title == (
        "From the file")
    assert importing.imported_title([Turn("assistant", [TextBlock("only a reply")])]) == (
        importing.DEFAULT_TITLE)


BAD = [
    (b"", "empty"),
    (b"  \n\t ", "empty"),
    (b"hello, this is a note", "not valid JSON"),
    (b'{"messages": [{"role": "user"', "looks cut off: its JSON stops in the middle"),
    (b'{"foo": 1}', "without a list of 'messages'"),
    (b"[1, 2, 3]", "not a message object"),
    (b"[]", "empty"),
    (b'"just a string"', "JSON str"),
    (b'[{"content": "no role"}]', "no 'role'"),
    (b'{"format": "parley", "version": 99, "turns": []}', "newer Parley"),
    (b'{"format": "parley", "version": 1, "turns": []}', "no messages"),
    (b'[{"role": "system", "content": "only a system prompt"}]', "no messages"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"\xff\xfe\x80\x81 not utf-8", "UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested"),
]


@pytest.mark.parametrize(("data", "why"), BAD)
async def test_files_that_are_not_conversations_are_refused_and_nothing_written(store, data, why):
    with pytest.raises(NotAConversation) as info:
        await import_conversation(store, data)
    assert why in info.value.reason
    assert "Nothing was imported" in str(info.value)
    assert await session_count(store) == 0


def _msgs(*items: object) -> bytes:
    return json.dumps(list(items)).encode()


_HI = {"role": "user", "content": "hi"}
_YO = {"role": "assistant", "content": "yo"}

# Where a file goes wrong is named for people: the first message is message 1.
NUMBERED = [
    (_msgs(_HI, _YO, {"role": "banana", "content": "x"}), "message 3 has role 'banana'"),
    (_msgs(_HI, _YO, 7), "item 3 of the list is not a message object"),
    (_msgs(_HI, {"content": "x"}), "message 2 has no 'role'"),
    (_msgs(_HI, {"role": "user"}), "message 2 has no 'content'"),
    (_msgs(_HI, _YO, {"role": "user", "content": [{"type": "text", "text": "a"}, 5]}),
     "message 3, part 2, is not an object"),
    (_msgs(_HI, {"role": "assistant", "content": [
        {"type": "text", "text": "a"}, {"type": "tool_use"}]}),
     "message 2, block 2, is a tool_use without an id or a name"),
    (_msgs(_HI, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                              "content": [{"type": "text"}]}]}),
     "message 2, block 1, part 1, is a text block without text"),
    (_msgs(_HI, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                              "content": [{"type": "text", "text": "a"}, 3]}]}),
     "message 2, block 1, part 2, is not an object"),
    (_msgs(_HI, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "type": "function"}]}),
     "message 2, tool call 2, has no function name"),
    (_msgs(_HI, {"role": "assistant", "content": [{"type": "text", "text": "a"}, 5]}),
     "message 2, part 2, is not an object"),
    (json.dumps({"format": "parley", "version": 1, "turns": [
        Turn("user", [TextBlock("hi")]).to_json(), 7]}).encode(), "turn 2 is not an object"),
    (json.dumps({"format": "parley", "version": 1, "turns": [
        Turn("user", [TextBlock("hi")]).to_json(), {"role": "x", "blocks": []}]}).encode(),
     "turn 2 cannot be read"),
    (json.dumps([Turn("user", [TextBlock("hi")]).to_json(),
                 {"role": "x", "blocks": []}]).encode(), "turn 2 cannot be read"),
]


@pytest.mark.parametrize(("data", "why"), NUMBERED)
async def test_the_bad_message_is_numbered_from_one(store, data, why):
    with pytest.raises(NotAConversation) as info:
        await import_conversation(store, data)
    assert why in info.value.reason, info.value.reason
    assert why in str(info.value)
    assert await session_count(store) == 0


async def test_a_50_mb_binary_is_refused_quickly(store):
    blob = (b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 4096) * 50  # ~50 MB
    assert len(blob) > 50_000_000
    with pytest.raises(NotAConversation, match="binary"):
        await import_conversation(store, blob)
    assert await session_count(store) == 0


async def test_size_cap_has_a_clear_message(store, tmp_path, monkeypatch):
    monkeypatch.setattr(importing, "MAX_IMPORT_BYTES", 1024 * 1024)
    data = json.dumps([{"role": "user", "content": "x" * (2 * 1024 * 1024)}])
    with pytest.raises(ImportTooLarge) as info:
        await import_conversation(store, data)
    message = str(info.value)
    assert "too large" in message and "2.0 MB" in message and "1.0 MB" in message
    assert "Nothing was imported" in message

    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:  # sparse: refused by its size before any read
        f.truncate(300 * 1024 * 1024)
    with pytest.raises(ImportTooLarge):
        await import_file(store, huge)
    assert await session_count(store) == 0


async def test_import_file_reads_a_file(store, tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "From a file"}]}))
    result = await import_file(store, path)
    assert [t.text() for t in await store.get_turns(result.session.id)] == ["From a file"]
    with pytest.raises(FileNotFoundError):
        await import_file(store, tmp_path / "missing.json")


async def test_missing_space_writes_nothing(store):
    with pytest.raises(SpaceNotFound):
        await import_conversation(store, '[{"role": "user", "content": "hi"}]', space_id="nope")
    assert await session_count(store) == 0


class FailingStore:
    """The real store, with a disk that fills up after a few turns (fault injection)."""

    def __init__(self, store, fail_after: int) -> None:
        self._store = store
        self._left = fail_after

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def append_turn(self, session_id, turn):
        if self._left == 0:
            raise DiskFull(self._store.path)
        self._left -= 1
        return await self._store.append_turn(session_id, turn)


async def test_a_failed_write_removes_the_half_imported_session(store):
    data = json.dumps([{"role": r, "content": f"m{i}"} for i, r in enumerate(["user", "assistant"]
                                                                            * 3)])
    with pytest.raises(DiskFull):
        await import_conversation(FailingStore(store, fail_after=3), data)
    assert await session_count(store) == 0


async def test_bare_parley_turn_list_is_accepted(store):
    turns = [
        Turn("user", [TextBlock("q")]).to_json(),
        Turn("assistant", [TextBlock("a")]).to_json(),
    ]
    result = await import_conversation(store, json.dumps(turns))
    assert result.source_format == "parley" and result.turns_imported == 2


async def test_attached_files_referenced_damaged_or_known(store):
    from parley.core.convert import export_parley
    from tests.core.export_support import PNG

    sid = await make_session(store)  # stores PNG in this store's attachments
    by_reference = export_parley(await store.get_turns(sid))  # refs only, no data
    known = await import_conversation(store, json.dumps(by_reference))
    assert known.lost == []
    (first,) = await store.hydrate((await store.get_turns(known.session.id))[:1])
    assert first.blocks[1].data == PNG  # the reference resolved to the same stored file

    foreign = {"type": "image", "media_type": "image/png", "attachment": "ab" * 32}
    damaged = {"type": "document", "media_type": "application/pdf", "data": "@@not base64@@",
               "name": "plan.pdf"}
    doc = {"format": "parley", "version": 1, "turns": [
        {"role": "user", "blocks": [{"type": "text", "text": "see"}, foreign, damaged]},
    ]}
    result = await import_conversation(store, json.dumps(doc))
    (turn,) = await store.get_turns(result.session.id)
    assert [b.type for b in turn.blocks] == ["text", "text", "text"]
    assert "not included" in turn.blocks[1].text and "plan.pdf" in turn.blocks[2].text
    assert len(result.lost) == 2 and any("damaged" in s for s in result.lost)
