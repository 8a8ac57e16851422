"""Importing chat history exports (ChatGPT, Claude.ai, Open WebUI) into a real store:
every conversation a chat, its other branches inside its tree (each message once, below
its parent), one transaction, no duplicates.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import base64
import json

import pytest

from parley.core.content import (
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from parley.core.convert import NotAConversation
from parley.core.importing.files import ImportSummary, import_data, import_path
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import DiskFull
from parley.core.store.imports import IMPORT_KEY, ImportCancelled
from tests.histories import (
    PNG_BYTES,
    T0,
    ChatGPTConversation,
    chatgpt_export,
    claude_export,
    image_part,
    lisbon_trip,
    webui_export,
    webui_message,
    write_chatgpt_folder,
)


async def all_sessions(store) -> list:
    return await store.list_sessions(include_archived=True, limit=10_000)


async def chats_of(store, summary: ImportSummary):
    """The imported chats; none of them has a fork (their branches are inside them)."""
    chats = [await store.get_session(sid) for sid in summary.session_ids]
    assert [await store.list_forks(c.id) for c in chats] == [[] for _ in chats]
    return chats


async def shown(store, session_id: str):
    """The turns of the path the chat shows, first message first."""
    return [t.turn for t in await store.get_tree(session_id) if t.on_path]


async def tree_of(store, session_id: str):
    """``{turn text: parent's text}`` of every turn of the session that has text (each
    text once: no turn is copied; tool calls and results have none)."""
    tree = await store.get_tree(session_id)
    text = {t.turn.id: t.turn.text() for t in tree}
    said = [t for t in text.values() if t]
    assert len(set(said)) == len(said)  # each message once: no copied turn
    return {t.turn.text(): text[t.parent_id] if t.parent_id else None for t in tree
            if t.turn.text()}


def blocks_of(turns, kind):
    return [b for t in turns for b in t.blocks if isinstance(b, kind)]


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


@pytest.fixture
def chatgpt_file(tmp_path):
    lisbon, ids = lisbon_trip()
    linear = ChatGPTConversation("Sourdough", "conv-bread", T0 + 86_400)
    linear.text("system", "You are a baker.")  # a visible system message: the system prompt
    linear.text("user", "How long do I proof sourdough?")
    linear.text("assistant", "4 to 6 hours at room temperature.", model="gpt-4o-mini")
    empty = ChatGPTConversation("New chat", "conv-empty")  # only the root: left out
    path = write_chatgpt_folder(
        tmp_path / "export", [lisbon.to_json(), linear.to_json(), empty.to_json()],
        {"file-TramPhoto1-tram.png": "file-TramPhoto1", "user-x/file-Unrelated-a.txt": ""})
    return path, ids


async def test_a_chatgpt_export_becomes_chats_with_their_branches_inside(store, chatgpt_file):
    path, _ids = chatgpt_file
    summary = await import_path(store, path)

    assert summary.source_format == "chatgpt"
    assert (summary.chats, summary.branches, summary.empty, summary.skipped) == (2, 2, 1, 0)
    lisbon, bread = await chats_of(store, summary)
    assert lisbon.title == "Trip to Lisbon" and bread.title == "Sourdough"
    imported = dict(lisbon.meta[IMPORT_KEY])
    assert imported.pop("at") >= lisbon.updated_at  # when it was imported: after its turns
    assert imported == {"source": "chatgpt", "id": "conv-lisbon"}
    assert bread.system_prompt == "You are a baker."
    assert bread.created_at < bread.updated_at < 2_000_000_000_000  # the export's own times
    assert lisbon.created_at == pytest.approx(T0 * 1000, abs=60_000)

    turns = await shown(store, lisbon.id)
    assert [t.role for t in turns] == ["user", "assistant"] * 8
    texts = [t.text() for t in turns]
    assert texts[0] == "Plan three days in Lisbon."  # hidden system root + custom instructions out
    assert texts[1].startswith("Day 1: Baixa")  # the answer on current_node's branch
    assert "Be brief" not in " ".join(texts)
    assert turns[1].model == "openai:gpt-4o" and turns[15].model == "openai:o1"

    # The photo is in the export's folder: kept (in the attachments table); the other is named.
    (photo,) = blocks_of(await store.hydrate(turns[2:3]), ImageBlock)
    assert photo.media_type == "image/png" and photo.data is not None
    assert "[image not included: file-NotInExport9]" in texts[2]
    assert "Which tram is this" in texts[2]

    # Code interpreter, DALL·E and browsing: calls paired with their results.
    calls = blocks_of(turns, ToolUseBlock)
    results = blocks_of(turns, ToolResultBlock)
    assert [c.name for c in calls] == ["python", "dalle_text2im", "browser"]
    assert [r.tool_use_id for r in results] == [c.id for c in calls]
    assert "date(2024,6,1)" in calls[0].input["code"]
    assert calls[1].input == {"prompt": "a yellow Lisbon tram", "size": "1024x1024"}
    assert results[0].content == (TextBlock("12"),)
    assert "Open daily 7:30-23:00." in results[2].content[0].text  # type: ignore[union-attr]
    assert "https://example.org/santa-justa" in results[2].content[0].text  # type: ignore[union-attr]
    (think,) = blocks_of(turns, ThinkingBlock)
    assert "The page says daily." in think.thinking and think.signature is None
    assert turns[15].text() == "Yes, it opens every day at 7:30."  # the recap is left out

    # The other answer and the edited question are branches of the chat's own tree.
    tree = await tree_of(store, lisbon.id)
    assert len(await store.get_tree(lisbon.id)) == 16 + 3
    assert tree["Day 1: Alfama. Day 2: Belém. Day 3: Sintra."] == texts[0]  # as Regenerate
    assert tree["What about Porto?"] == texts[1]  # the edited question's sibling
    assert tree["Porto is 3 hours north by train."] == "What about Porto?"
    regen = next(t.turn for t in await store.get_tree(lisbon.id)
                 if t.turn.text().startswith("Day 1: Alfama"))
    assert regen.model == "openai:gpt-4"
    points = (await store.branches(lisbon.id)).points
    assert {k: (p.index, p.total) for k, p in points.items()} == {turns[1].id: (2, 2),
                                                                  turns[2].id: (2, 2)}

    # Messages as the export holds them: Lisbon's 16 turns are 10 messages (a reply's tool
    # calls and results are part of it), Sourdough's 2, the other answer 1, the edit's 2.
    assert summary.messages == 10 + 2 + 1 + 2
    text = summary.text()
    assert text.startswith("2 chats, 15 messages, 2 other branches from a ChatGPT export; "
                           "2 files left out (2 not in the export).")
    assert summary.details() == [("Not in the export", ["image: file-NotInExport9",
                                                        "image: file-DalleTram77"])]
    assert "1 empty conversation was left out." in text
    assert await store.search("Santa Justa")  # imported text is indexed for search


async def test_importing_the_same_export_twice_adds_nothing(store, chatgpt_file):
    path, _ = chatgpt_file
    first = await import_path(store, path)
    before = len(await all_sessions(store))
    # A fork the person makes of an imported chat copies its meta: still one chat recognised.
    turns = await shown(store, first.session_ids[0])
    await store.fork(first.session_ids[0], turns[3].id)

    again = await import_path(store, path)

    assert again.chats == 0 and again.skipped == 2 and again.messages == 0
    assert len(await all_sessions(store)) == before + 1
    # Nothing came in: no counts of nothing, no files "not included" (named the first time).
    assert again.text() == ("Nothing new: the 2 conversations of this ChatGPT export were "
                            "imported before. 1 empty conversation was left out.")
    # A longer export (the person chatted more since) adds only the new conversation.
    data = json.loads(path.read_text("utf-8"))
    data.append(chatgpt_export(1)[0])
    third = await import_data(store, json.dumps(data))
    assert (third.chats, third.skipped) == (1, 2)


async def test_cancelling_imports_nothing_and_progress_is_reported(store):
    data = json.dumps(chatgpt_export(30))
    seen: list[tuple[int, int]] = []

    def cancelled() -> bool:
        return len(seen) >= 20

    with pytest.raises(ImportCancelled, match="Nothing was imported"):
        await import_data(store, data, progress=lambda d, t: seen.append((d, t)),
                          cancelled=cancelled)
    assert seen[:2] == [(1, 30), (2, 30)] and len(seen) == 20
    assert await all_sessions(store) == []  # 20 chats were written, then rolled back
    assert await store.search("eggs") == []

    done = await import_data(store, data, progress=lambda d, t: seen.append((d, t)))
    assert done.chats == 30 and done.branches == 3 and seen[-1] == (30, 30)


async def test_a_write_failure_midway_leaves_nothing(store):
    data = json.dumps(chatgpt_export(10))

    def fail(done: int, _total: int) -> None:
        if done == 5:
            raise DiskFull(store.path)

    with pytest.raises(DiskFull):
        await import_data(store, data, progress=fail)
    assert await all_sessions(store) == []


async def test_a_claude_ai_export(store, tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(claude_export()), encoding="utf-8")
    summary = await import_path(store, path)

    assert summary.source_format == "claude.ai"
    assert (summary.chats, summary.branches, summary.empty) == (2, 1, 1)
    # The export's messages (4 + 4, the other answer's 1), not the 6 turns the tool call made.
    assert summary.messages == 4 + 4 + 1
    tools, haiku = await chats_of(store, summary)
    assert tools.title == "CSV totals" and tools.meta[IMPORT_KEY]["id"] == "claude-conv-tools"
    turns = await store.hydrate(await shown(store, tools.id))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user",
                                       "assistant"]
    (doc,) = blocks_of(turns, DocumentBlock)
    assert doc.name == "sales.csv" and doc.media_type == "text/plain"
    assert "[image not included: receipt.png]" in turns[0].text()
    assert turns[0].text().startswith("Total of the amounts?")
    assert isinstance(turns[1].blocks[0], ThinkingBlock)
    (call,) = blocks_of(turns, ToolUseBlock)
    (result,) = blocks_of(turns, ToolResultBlock)
    assert call.name == "repl" and call.input == {"code": "3+4"}
    assert result.tool_use_id == call.id and result.content == (TextBlock("7"),)
    assert turns[2].blocks == [result]  # the result between the call and the answer
    assert turns[3].text() == "The total is 7."
    assert turns[1].created_at == summary_time("2024-05-01T10:02:00Z")

    haiku_turns = await shown(store, haiku.id)  # the newest message's branch
    assert [t.text() for t in haiku_turns] == ["A haiku on rain.", "Soft grey rain falls.",
                                               "Shorter.", "Rain."]
    assert (await tree_of(store, haiku.id))["Rain on the roof."] == "A haiku on rain."
    text = summary.text()
    assert "1 file left out (1 not in the export)" in text
    assert summary.details() == [("Not in the export", ["image: receipt.png"])]
    assert "1 content block(s) of a kind Parley does not know were left out." in text


def summary_time(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


async def test_an_open_webui_export(store, tmp_path):
    path = tmp_path / "chat-export-1714550000.json"
    path.write_text(json.dumps(webui_export()), encoding="utf-8")
    summary = await import_path(store, path)

    assert summary.source_format == "open-webui"
    assert (summary.chats, summary.branches) == (2, 2)
    pixel, pirate = await chats_of(store, summary)
    turns = await store.hydrate(await shown(store, pixel.id))
    assert [t.text() for t in turns] == ["What is in this picture?", "One white pixel.",
                                         "What colour exactly?", "White-ish."]
    (image,) = blocks_of(turns, ImageBlock)
    assert image.data is not None and image.media_type == "image/png"
    assert turns[1].model == "open-webui:qwen2.5:7b"
    tree = await tree_of(store, pixel.id)
    assert tree == {"What is in this picture?": None, "A single pixel.": "What is in this picture?",
                    "One white pixel.": "What is in this picture?",
                    "What colour exactly?": "One white pixel.",
                    "White-ish.": "What colour exactly?",
                    "Is it transparent?": "One white pixel.", "No.": "Is it transparent?"}
    assert pirate.system_prompt == "You are a pirate."
    assert [t.text() for t in await shown(store, pirate.id)] == ["Hello", "Arr!"]


async def test_one_open_webui_chat_object_is_accepted(store):
    (first, _) = webui_export()
    summary = await import_data(store, json.dumps(first))
    assert summary.chats == 1 and summary.source_format == "open-webui"


REFUSED = [
    ({"theme": "dark", "fontSize": 12},
     "it is a JSON object with the keys 'theme', 'fontSize', without a list of 'messages'"),
    ([{"name": "a", "size": 3}, {"name": "b"}],
     "it is a JSON list of 2 item(s), the first being a JSON object with the keys 'name', "
     "'size'; its items have no 'role'"),
    ([ChatGPTConversation("x").to_json(), {"uuid": "u", "chat_messages": []}],
     "it looks like a ChatGPT export, but item 2 of its list is a Claude.ai conversation"),
    ([ChatGPTConversation("x").to_json(), {"title": "y"}],
     "item 2 of its list is a JSON object with the keys 'title', not a ChatGPT conversation"),
    ([ChatGPTConversation("x").to_json()], "it is a ChatGPT export whose 1 conversation hold no "
                                           "messages"),
]


@pytest.mark.parametrize(("data", "why"), REFUSED)
async def test_unknown_files_are_refused_naming_what_was_found_and_what_is_read(store, data,
                                                                                why):
    with pytest.raises(NotAConversation) as info:
        await import_data(store, json.dumps(data))
    assert why in info.value.reason
    message = str(info.value)
    assert "Nothing was imported" in message
    for name in ("ChatGPT", "Claude.ai", "Open WebUI", "Markdown", "Anthropic", "OpenAI"):
        assert name in message
    assert "message 1 has no 'role'" not in message
    assert await all_sessions(store) == []


async def test_markdown_that_parley_did_not_write_is_named_as_such(store):
    with pytest.raises(NotAConversation, match="not a Markdown file exported by Parley"):
        await import_data(store, "# My notes\n\nSome text.\n")


async def test_a_single_conversation_goes_through_the_single_import(store):
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}
    summary = await import_data(store, json.dumps(body))
    assert summary.single is not None and summary.chats == 1 and summary.messages == 1
    assert summary.text().startswith("1 chat, 1 message from an OpenAI message list")


async def test_a_branch_of_a_branch_imports_each_message_once_and_opens_where_chatgpt_was(
        store):
    c = ChatGPTConversation("Soup", "conv-soup")
    q1 = c.text("user", "A soup for tonight?")
    c.text("assistant", "Minestrone.", model="gpt-4o")
    c.text("user", "Vegan?")
    c.text("assistant", "Yes, without parmesan.", model="gpt-4o")
    a1b = c.text("assistant", "Caldo verde.", parent=q1, model="gpt-4o")  # regenerated
    q2b = c.text("user", "How long does it take?")
    c.text("assistant", "40 minutes.", model="gpt-4o")
    shown_leaf = c.text("assistant", "About half an hour.", parent=q2b, model="gpt-4o")
    c.text("user", "And for ten people?", parent=a1b)  # a branch of the regenerated answer

    summary = await import_data(store, json.dumps([c.to_json(current=shown_leaf)]))

    (soup,) = await chats_of(store, summary)
    assert [t.text() for t in await shown(store, soup.id)] == [
        "A soup for tonight?", "Caldo verde.", "How long does it take?", "About half an hour."]
    assert await tree_of(store, soup.id) == {
        "A soup for tonight?": None, "Minestrone.": "A soup for tonight?",
        "Vegan?": "Minestrone.", "Yes, without parmesan.": "Vegan?",
        "Caldo verde.": "A soup for tonight?", "How long does it take?": "Caldo verde.",
        "40 minutes.": "How long does it take?", "About half an hour.": "How long does it take?",
        "And for ten people?": "Caldo verde."}
    assert (summary.branches, summary.messages) == (3, 9)
    assert summary.text().startswith("1 chat, 9 messages, 3 other branches from a ChatGPT")
    path = await shown(store, soup.id)
    points = (await store.branches(soup.id)).points
    # ‹ n/m ›: siblings in the export's order (the regenerated answer is the second).
    assert {k: (p.index, p.total) for k, p in points.items()} == {
        path[1].id: (2, 2), path[2].id: (1, 2), path[3].id: (2, 2)}
    # The other answer of the branch point opens with what follows it.
    first = next(t.turn for t in await store.get_tree(soup.id) if t.turn.text() == "Minestrone.")
    await store.show_branch(soup.id, first.id)
    assert [t.text() for t in await shown(store, soup.id)] == [
        "A soup for tonight?", "Minestrone.", "Vegan?", "Yes, without parmesan."]


async def test_an_open_webui_branch_of_a_branch_opens_on_current_id(store):
    ts = 1_714_550_000
    msgs = [webui_message("u1", None, "user", "Name a colour.", ts),
            webui_message("a1", "u1", "assistant", "Red.", ts + 1, model="m"),
            webui_message("a1b", "u1", "assistant", "Blue.", ts + 2, model="m"),
            webui_message("u2", "a1b", "user", "Another?", ts + 3),
            webui_message("a2", "u2", "assistant", "Green.", ts + 4, model="m"),
            webui_message("u2b", "a1b", "user", "Darker?", ts + 5),
            webui_message("a2b", "u2b", "assistant", "Navy.", ts + 6, model="m"),
            webui_message("a2c", "u2b", "assistant", "Indigo.", ts + 7, model="m"),
            webui_message("u0", None, "user", "Name a shape.", ts + 8)]  # the first one edited
    chat = {"id": "webui-colours", "title": "Colours",
            "chat": {"history": {"messages": {m["id"]: m for m in msgs}, "currentId": "a2b"}},
            "created_at": ts, "updated_at": ts + 8}

    summary = await import_data(store, json.dumps([chat]))

    (colours,) = await chats_of(store, summary)
    assert [t.text() for t in await shown(store, colours.id)] == [
        "Name a colour.", "Blue.", "Darker?", "Navy."]
    assert await tree_of(store, colours.id) == {
        "Name a colour.": None, "Red.": "Name a colour.", "Blue.": "Name a colour.",
        "Another?": "Blue.", "Green.": "Another?", "Darker?": "Blue.", "Navy.": "Darker?",
        "Indigo.": "Darker?", "Name a shape.": None}
    assert (summary.branches, summary.messages) == (4, 9)
    path = await shown(store, colours.id)
    points = (await store.branches(colours.id)).points
    assert {k: (p.index, p.total) for k, p in points.items()} == {
        path[0].id: (1, 2), path[1].id: (2, 2), path[2].id: (2, 2), path[3].id: (1, 2)}


@pytest.mark.parametrize("text", ["[]", " \n[ ]\t", "[1, 2]", '[{"a": [1, {"b": "]"}]}, "x"]\n',
                                  '{"a": 1}', '"s"', "[[], [[]]]"])
def test_the_item_by_item_parse_reads_what_json_reads(text):
    from parley.core.importing.files import _parse_gently

    assert _parse_gently(text) == json.loads(text)


@pytest.mark.parametrize(("text", "reason"), [
    ("[1,]", "not valid JSON"), ("[1 2]", "not valid JSON"), ("[1] x", "not valid JSON"),
    ('[{"a": }]', "not valid JSON"),
    ("[", r"looks cut off: its JSON stops in the middle \(line 1, column 2\)"),
    ("[1,\n2,", r"looks cut off: its JSON stops in the middle \(line 2, column 3\)"),
])
def test_the_item_by_item_parse_refuses_what_json_refuses(text, reason):
    from parley.core.importing.files import _parse_gently

    with pytest.raises(NotAConversation, match=reason):
        _parse_gently(text)


async def test_a_zipped_export_is_read_as_it_is_with_its_images(store, tmp_path):
    import zipfile

    lisbon, _ids = lisbon_trip()
    path = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        # Zipped again by a person: the export's files one folder down.
        z.writestr("export/conversations.json", json.dumps([lisbon.to_json(),
                                                             *chatgpt_export(2)]))
        z.writestr("export/dalle-generations/file-TramPhoto1-tram.png", PNG_BYTES)
        z.writestr("elsewhere/file-DalleTram77-x.png", PNG_BYTES)  # not beside the export

    summary = await import_path(store, path)

    assert (summary.source_format, summary.chats) == ("chatgpt", 3)
    turns = await store.hydrate(await store.get_turns(summary.session_ids[0]))
    (photo,) = blocks_of(turns, ImageBlock)
    assert base64.b64decode(photo.data) == PNG_BYTES
    assert ("image", "file-DalleTram77") in summary.missing_files
    assert (await import_path(store, path)).skipped == 3  # the same zip again: nothing new


async def test_a_zip_that_is_no_data_export_is_named_as_such(store, tmp_path):
    import zipfile

    path = tmp_path / "photos.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("holiday/cat.png", PNG_BYTES)
    with pytest.raises(NotAConversation, match="ZIP archive holding no conversations.json"):
        await import_path(store, path)
    assert await all_sessions(store) == []


async def test_odd_but_plausible_exports_import_without_losing_what_can_be_read(store):
    odd = ChatGPTConversation(None, "conv-odd")  # type: ignore[arg-type]
    odd.text("user", "First question")
    odd.add(None, "assistant", {"content_type": "text", "parts": [None, 3, "Answer one"]},
            model="gpt-4o")
    odd.add(None, "user", None)  # type: ignore[arg-type]  # no content at all
    odd.text("user", "Second question")
    odd.text("assistant", "Answer two", model="gpt-4o")
    conv = odd.to_json(current="no-such-node")  # unknown: the newest leaf is shown
    conv["create_time"] = None
    conv["mapping"]["orphan"] = {"id": "orphan", "parent": "gone", "children": [],
                                 "message": {"id": "orphan", "author": {"role": "user"},
                                             "content": {"content_type": "text",
                                                         "parts": ["An orphan"]},
                                             "create_time": T0 - 50}}
    conv["mapping"]["loop-a"] = {"id": "loop-a", "parent": "loop-b", "children": ["loop-b"],
                                 "message": None}
    conv["mapping"]["loop-b"] = {"id": "loop-b", "parent": "loop-a", "children": ["loop-a"],
                                 "message": None}
    audio = ChatGPTConversation("Voice", "conv-voice")
    audio.add(audio.root, "user", {"content_type": "multimodal_text", "parts": [
        {"content_type": "audio_transcription", "text": "what time is it", "direction": "in"},
        {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1"}]})
    audio.add(None, "assistant", {"content_type": "multimodal_text", "parts": [
        {"content_type": "audio_transcription", "text": "It is noon.", "direction": "out"}]},
        model="gpt-4o")
    summary = await import_data(store, json.dumps([conv, audio.to_json()]))

    first, voice = await chats_of(store, summary)
    turns = await shown(store, first.id)
    assert [t.text() for t in turns] == ["First question", "Answer one", "Second question",
                                         "Answer two"]
    assert first.title == "First question"  # no title: from the first message, as new chats
    assert [t.text() for t in await shown(store, voice.id)] == ["what time is it",
                                                                 "It is noon."]
    assert "1 voice recording(s) were left out (their transcripts were kept)." in summary.text()
    # The orphan is a branch of its own (no shared start): another first message.
    assert (await tree_of(store, first.id))["An orphan"] is None


async def test_uploaded_files_come_from_the_export_folder_or_are_named(store, tmp_path):
    c = ChatGPTConversation("Files", "conv-files")
    c.add(c.root, "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-Chart1"), "Compare the report, the notes and the sheet."]},
        metadata={"attachments": [
            {"id": "file-Chart1", "name": "chart.png", "mimeType": "image/png"},
            {"id": "file-Report2", "name": "report.pdf", "mimeType": "application/pdf"},
            {"id": "file-Notes3", "name": "notes.md", "mimeType": "text/markdown"},
            {"id": "file-Sheet4", "name": "sheet.xlsx", "mimeType":
             "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}]})
    c.text("assistant", "The report and the notes agree.", model="gpt-4o")
    path = write_chatgpt_folder(tmp_path / "export", [c.to_json()], {
        "file-Chart1-chart.png": "", "file-Report2-report.pdf": "", "file-Notes3-notes.md": ""})
    (tmp_path / "export" / "file-Report2-report.pdf").write_bytes(b"%PDF-1.4 report")
    (tmp_path / "export" / "file-Notes3-notes.md").write_text("# Notes\n", encoding="utf-8")

    summary = await import_path(store, path)

    (turn, _) = await store.hydrate(await store.get_turns(summary.session_ids[0]))
    (image,) = blocks_of([turn], ImageBlock)
    assert image.data is not None
    docs = blocks_of([turn], DocumentBlock)
    assert [(d.name, d.media_type) for d in docs] == [("report.pdf", "application/pdf"),
                                                      ("notes.md", "text/plain")]
    assert base64.b64decode(docs[0].data) == b"%PDF-1.4 report"
    assert base64.b64decode(docs[1].data) == b"# Notes\n"
    assert "[file not included: sheet.xlsx]" in turn.text()
    assert summary.text().endswith("; 1 file left out (1 not in the export).")
    assert summary.details_text() == "Not in the export:\n  file: sheet.xlsx"


async def test_a_conversation_with_a_message_no_model_can_read_is_left_out(store, monkeypatch):
    from parley.core.importing import files as import_history

    monkeypatch.setattr(import_history, "max_text_chars", lambda: 1000)
    data = chatgpt_export(3, turns=4)
    huge = ChatGPTConversation("Huge paste", "conv-huge")
    huge.text("user", "x" * 1001)
    huge.text("assistant", "Too long to read.", model="gpt-4o")
    data.insert(1, huge.to_json())

    summary = await import_data(store, json.dumps(data))

    assert summary.chats == 3 and summary.too_long == ["Huge paste"]
    assert ("1 conversation holding a message longer than any model can read was left "
            "out.") in summary.text()
    assert summary.details() == [("Left out: a message longer than any model can read",
                                  ["Huge paste"])]
    assert not any(s.title == "Huge paste" for s in await all_sessions(store))
