"""Space documents that are images: accepted like a message's attached images, given to
every chat of the space at the start of its first message (real SDK over HTTP to the fake
Anthropic and OpenAI servers; sessions.db and PostgreSQL), kept per chat as given."""

from __future__ import annotations

import base64
import json

import pytest

from parley.core.attachments.document_text import NotADocument, read_document
from parley.core.attachments.files import from_bytes
from parley.core.content import TextBlock
from parley.core.context.tokens import image_data_tokens
from parley.core.tools.space_documents import describe
from tests.core.images import png
from tests.core.tool_support import GPT, SONNET, Env, system_text

NOTES = ("House style: write dates as 2026-03-01. " * 200).encode()  # about 2,000 tokens
CHART = png((200, 30, 30), (64, 48))


@pytest.fixture
def env(tools_env: Env) -> Env:
    """The runner with tools (tests/core/conftest.py), once on each backend."""
    return tools_env


async def space_with(env, name: str, *files: tuple[str, bytes]) -> str:
    space = await env.store.create_space(name)
    for file_name, data in files:
        await env.store.add_space_document(space.id, file_name, data)
    return space.id


async def chat_in(env, space_id: str) -> str:
    return (await env.store.create_session(space_id=space_id)).id


def first_user_content(body: dict) -> list:
    first = next(m for m in body["messages"] if m["role"] == "user")
    content = first["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def anthropic_images(body: dict) -> list[bytes]:
    return [base64.b64decode(b["source"]["data"]) for b in first_user_content(body)
            if b["type"] == "image"]


def test_an_image_is_one_page_counted_like_an_attached_image():
    doc = read_document(CHART, "chart.png")
    assert (doc.media_type, doc.pages) == ("image/png", [""])
    assert doc.tokens == image_data_tokens(base64.b64encode(CHART).decode()) > 0
    with pytest.raises(NotADocument, match="it is a damaged or incomplete image"):
        read_document(CHART[: len(CHART) // 2], "cut.png")
    with pytest.raises(NotADocument, match=r"9000×10 px: larger than every provider takes"):
        read_document(png(size=(9000, 10)), "wide.png")


async def test_an_image_is_sent_first_on_anthropic_and_the_cache_holds_for_20_turns(env):
    space = await space_with(env, "Charts", ("notes.txt", NOTES), ("chart.png", CHART))
    docs = await env.store.space_documents(space)
    assert [(d.name, d.media_type, d.pages) for d in docs][1] == ("chart.png", "image/png", 1)
    assert docs[1].tokens == read_document(CHART, "chart.png").tokens
    assert describe(docs[1:], 200_000, 0.25, "m").startswith(
        f"1 document, {docs[1].tokens:,} tokens: sent with every message")
    sid = await chat_in(env, space)
    for n in range(20):
        env.fake.script(f"Answer {n}.")
        await env.send(sid, f"Question {n}?")
    bodies = env.bodies()
    assert len(bodies) == 20
    for body in bodies:
        content = first_user_content(body)
        assert content[0]["type"] == "image" and anthropic_images(body) == [CHART]
        assert content[1]["type"] == "text" and content[1]["text"] == "Question 0?"
    system = system_text(bodies[0])
    assert 'name="chart.png" kind="image"' in system and "House style" in system
    # The image is not saved in the person's message.
    turns = await env.store.get_turns(sid)
    assert [type(b).__name__ for b in turns[0].blocks] == ["TextBlock"]
    usages = [t.usage for t in turns if t.usage is not None]
    for before, after in zip(usages, usages[1:], strict=False):
        # The ideal: every request reads all that the one before it read or wrote.
        assert after.cache_read_tokens == before.cache_read_tokens + before.cache_write_tokens
    read = sum(u.cache_read_tokens for u in usages)
    total = read + sum(u.cache_write_tokens + u.input_tokens for u in usages)
    assert read / total > 0.85


async def test_an_image_is_sent_first_on_openai(env):
    space = await space_with(env, "Charts", ("chart.png", CHART))
    sid = await chat_in(env, space)
    env.fake.script("It is red.")
    await env.send(sid, "What colour is the chart?", model=GPT)
    env.fake.script("Still red.")
    await env.send(sid, "Sure?", model=GPT)
    url = "data:image/png;base64," + base64.b64encode(CHART).decode()
    for body in env.bodies():
        text = json.dumps(first_user_content(body))
        assert url in text
        assert text.index(url) < text.index("What colour is the chart?")
        assert json.dumps(body).count(url) == 1


async def test_a_replaced_image_does_not_change_what_an_older_chat_sends(env):
    blue = png((10, 20, 220), (40, 40))
    space = await space_with(env, "Charts", ("chart.png", CHART))
    older = await chat_in(env, space)
    env.fake.script("Red.")
    await env.send(older, "Colour?")
    (doc,) = await env.store.space_documents(space)
    await env.store.replace_space_document(doc.id, "chart.png", blue)
    env.fake.script("Still red.")
    await env.send(older, "And now?")
    newer = await chat_in(env, space)
    env.fake.script("Blue.")
    await env.send(newer, "Colour?")
    first, again, new = env.bodies()
    assert anthropic_images(first) == anthropic_images(again) == [CHART]
    assert anthropic_images(new) == [blue]
    # The older chat keeps it even once the space no longer has those bytes at all.
    await env.store.remove_space_document(doc.id)
    env.fake.script("Red still.")
    await env.send(older, "Once more?")
    assert anthropic_images(env.bodies()[-1]) == [CHART]


async def test_a_model_without_vision_gets_the_images_named_in_words(env):
    space = await space_with(env, "Charts", ("chart.png", CHART))
    sid = await chat_in(env, space)
    env.fake.fail("bad_request", message="image input is not supported - hint: mmproj")
    env.fake.script("I cannot see images.")
    await env.send(sid, "What colour?", model="local:llama3.2")
    refused, again = env.bodies()
    assert "data:image/png;base64," in json.dumps(refused)
    text = json.dumps(again)
    assert "data:image/png" not in text
    assert "The space's images (chart.png) are not shown" in text
    turns = await env.store.get_turns(sid)
    assert turns[-1].role == "assistant" and "cannot see" in turns[-1].blocks[0].text


async def test_an_image_stored_nowhere_any_more_is_named_in_words(env):
    # The known gap: a kept copy is released like any attachment when the last message
    # holding the same bytes goes; with its document removed too, the bytes are gone.
    space = await space_with(env, "Charts", ("chart.png", CHART))
    older = await chat_in(env, space)
    env.fake.script("Red.")
    await env.send(older, "Colour?")
    (doc,) = await env.store.space_documents(space)
    await env.store.remove_space_document(doc.id)
    other = await env.session()
    env.fake.script("A chart.")
    await env.runner.send(other, [TextBlock("This?"), from_bytes(CHART, "c.png").to_block()],
                          model_ref=SONNET)
    await env.store.delete_session(other)
    env.fake.script("Gone.")
    await env.send(older, "And now?")
    content = first_user_content(env.bodies()[-1])
    assert [b["type"] for b in content] == ["text", "text"]
    assert "images chart.png given to this conversation are no longer stored" in \
        content[0]["text"]
