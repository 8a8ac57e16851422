"""Space documents: stored with their space, given to its chats in the cached prefix,
frozen per chat, and searched by the model when too large (real SDK over HTTP to the
fake provider; sessions.db and PostgreSQL)."""

from __future__ import annotations

import json

import pytest

from parley.core.attachments.document_text import NotADocument, read_document
from parley.core.store.errors import DocumentNotFound
from parley.core.tools.space_documents import SEARCH_TOOL, describe
from tests.core.images import make_pdf
from tests.core.tool_support import Env, system_text, tool_names, tool_results


@pytest.fixture
def env(tools_env: Env) -> Env:
    """The runner with tools (tests/core/conftest.py), once on each backend."""
    return tools_env


REPORT = make_pdf(["Quarterly report: revenue grew.",
                   "The purple elephant project shipped in March.",
                   "Appendix: glossary."])
NOTES = ("House style: write dates as 2026-03-01. " * 200).encode()  # about 2,000 tokens


async def space_with(env, name: str, *files: tuple[str, bytes]) -> str:
    space = await env.store.create_space(name)
    for file_name, data in files:
        await env.store.add_space_document(space.id, file_name, data)
    return space.id


async def chat_in(env, space_id: str) -> str:
    return (await env.store.create_session(space_id=space_id)).id


def test_a_pdf_is_read_page_by_page_and_another_binary_file_is_refused():
    doc = read_document(REPORT, "report.pdf")
    assert doc.media_type == "application/pdf" and len(doc.pages) == 3
    assert "purple elephant" in doc.pages[1] and doc.tokens > 0
    # (Images are documents too: tests/core/test_space_images.py.)
    with pytest.raises(NotADocument, match="can't be a space document: it is "):
        read_document(b"\0\1\2\3" * 64, "data.bin")
    with pytest.raises(NotADocument, match="it is empty"):
        read_document(b" \n", "empty.txt")
    with pytest.raises(NotADocument, match="a PDF without text"):
        read_document(make_pdf(["", ""]), "scan.pdf")


async def test_documents_are_added_replaced_removed_and_searched_by_page(env):
    space = await space_with(env, "Research", ("report.pdf", REPORT), ("notes.txt", NOTES))
    docs = await env.store.space_documents(space)
    assert [(d.name, d.pages, d.media_type) for d in docs] == [
        ("report.pdf", 3, "application/pdf"), ("notes.txt", 1, "text/plain")]
    (hit,) = await env.store.search_space_documents(space, "purple elephant")
    assert (hit.name, hit.page, hit.pages) == ("report.pdf", 2, 3)
    assert "**purple**" in hit.snippet
    assert await env.store.search_space_documents(space, '"elephant purple"') == []

    replaced = await env.store.replace_space_document(
        docs[0].id, "report-v2.pdf", make_pdf(["Nothing about animals.", "Blue whale."]))
    assert (replaced.id, replaced.name, replaced.pages) == (docs[0].id, "report-v2.pdf", 2)
    assert await env.store.search_space_documents(space, "elephant") == []
    assert [h.page for h in await env.store.search_space_documents(space, "whale")] == [2]
    assert [d.name for d in await env.store.space_documents(space)] == [
        "report-v2.pdf", "notes.txt"]  # its place kept

    await env.store.remove_space_document(docs[1].id)
    assert [d.name for d in await env.store.space_documents(space)] == ["report-v2.pdf"]
    with pytest.raises(DocumentNotFound):
        await env.store.remove_space_document(docs[1].id)
    await env.store.delete_space(space)
    other = await space_with(env, "Other")
    assert await env.store.search_space_documents(other, "whale") == []


async def test_sent_in_the_cached_prefix_and_the_cache_holds_for_20_turns(env):
    space = await space_with(env, "Style", ("notes.txt", NOTES))
    sid = await chat_in(env, space)
    for n in range(20):
        env.fake.script(f"Answer {n}.")
        await env.send(sid, f"Question {n}?")
    bodies = env.bodies()
    assert len(bodies) == 20 and len({json.dumps(b["system"]) for b in bodies}) == 1
    system = system_text(bodies[0])
    assert "# Space documents" in system and "House style: write dates" in system
    assert bodies[-1]["system"][-1]["cache_control"]["type"] == "ephemeral"
    assert SEARCH_TOOL not in tool_names(bodies[0])
    usages = [t.usage for t in await env.store.get_turns(sid) if t.usage is not None]
    assert usages[0].cache_write_tokens > 2_000  # the documents were written to the cache
    for before, after in zip(usages, usages[1:], strict=False):
        # The ideal: every request reads all that the one before it read or wrote.
        assert after.cache_read_tokens == before.cache_read_tokens + before.cache_write_tokens
    read = sum(u.cache_read_tokens for u in usages)
    total = read + sum(u.cache_write_tokens + u.input_tokens for u in usages)
    assert read / total > 0.85


async def test_a_chat_keeps_the_documents_it_was_given(env):
    space = await space_with(env, "Frozen", ("notes.txt", b"Version one of the notes."))
    first = await chat_in(env, space)
    env.fake.script("Ok.")
    await env.send(first, "Hello")
    (doc,) = await env.store.space_documents(space)
    await env.store.replace_space_document(doc.id, "notes.txt", b"Version two of the notes.")
    env.fake.script("Ok again.")
    await env.send(first, "Hello again")
    second = await chat_in(env, space)
    env.fake.script("New chat.")
    await env.send(second, "Hi")
    one, again, new = (system_text(b) for b in env.bodies())
    assert one == again and "Version one" in again
    assert "Version two" in new and "Version one" not in new
    given = await env.tools.prompts.given(first)
    assert given is not None and (given.way, given.names) == ("sent", ["notes.txt"])


async def test_too_large_for_the_share_the_model_searches_them_and_cites_the_page(env):
    await env.store.set_setting("spaces.documents_max_share", 0.01)  # 1%: 2k-10k tokens
    space = await space_with(env, "Big", ("report.pdf", REPORT), ("notes.txt", NOTES * 8))
    sid = await chat_in(env, space)
    env.fake.script("", tool_calls=[{"name": SEARCH_TOOL, "input": {"query": "purple elephant"}}])
    env.fake.script("It shipped in March (report.pdf, page 2).")
    await env.send(sid, "When did the purple elephant project ship?")
    first, second = env.bodies()
    assert SEARCH_TOOL in tool_names(first)
    system = system_text(first)
    assert "too large to include" in system and "- report.pdf (3 pages)" in system
    assert "House style" not in system  # not sent whole
    (found,) = tool_results(second)
    assert not found["error"]
    assert "report.pdf, page 2 of 3" in found["text"] and "**purple**" in found["text"]
    docs = await env.store.space_documents(space)
    assert describe(docs, 200_000, 0.01, "claude-x").endswith(
        "too large for claude-x's window (1% of 200,000 tokens): the model searches them.")
    assert describe(docs[:1], 200_000, 0.25, "claude-x").endswith(
        "sent with every message (kept in the prompt cache).")


async def test_a_searching_chat_searches_the_documents_it_was_given_not_later_ones(env):
    await env.store.set_setting("spaces.documents_max_share", 0.01)
    space = await space_with(env, "Big", ("report.pdf", REPORT), ("huge.txt", NOTES * 8))
    sid = await chat_in(env, space)
    env.fake.script("Noted.")
    await env.send(sid, "Hello")  # its prompt is frozen: it searches report.pdf and huge.txt
    report, huge = await env.store.space_documents(space)
    await env.store.remove_space_document(huge.id)
    await env.store.add_space_document(space, "later.txt", b"The purple giraffe arrived.")
    for query in ("House style", "purple"):
        env.fake.script("", tool_calls=[{"name": SEARCH_TOOL, "input": {"query": query}}])
        env.fake.script("Done.")
        await env.send(sid, f"Look for {query}")
    style, purple = (tool_results(b)[-1]["text"] for b in env.bodies()[2::2])
    assert style.startswith("No page") and "Not searchable any more: huge.txt (removed" in style
    assert "report.pdf, page 2 of 3" in purple and "later.txt" not in purple  # never given
    new = await chat_in(env, space)
    env.fake.script("", tool_calls=[{"name": SEARCH_TOOL, "input": {"query": "giraffe"}}])
    env.fake.script("Found.")
    await env.send(new, "Giraffe?")
    found = tool_results(env.bodies()[-1])[0]["text"]
    assert "later.txt, page 1 of 1" in found and "Not searchable" not in found


def test_the_search_index_stays_whole_when_documents_go_with_their_space(sqlite_db):
    space = sqlite_db.create_space("Gone soon")
    doc = sqlite_db.add_space_document(space.id, "report.pdf", REPORT)
    sqlite_db.replace_space_document(doc.id, "report.pdf", make_pdf(["One.", "Two elephants."]))
    sqlite_db.delete_space(space.id)  # the documents and their pages go by cascade
    check = "INSERT INTO space_document_fts(space_document_fts) VALUES ('integrity-check')"
    sqlite_db._w(lambda c: c.exec_driver_sql(check))  # raises when the index is stale
    assert sqlite_db._r(lambda c: c.exec_driver_sql(
        "SELECT count(*) FROM space_document_fts WHERE space_document_fts MATCH 'elephants'"
    ).scalar()) == 0
