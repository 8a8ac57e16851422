"""Text longer than any model can read is refused before it is stored.

The limit comes from the catalog's largest context window (``parley.core.context.text_limits``).
A message over it is refused before it is saved or sent, for any model (known
to the catalog or not); an import holding one writes nothing; a draft over it
is never written to sessions.db. Real store, real HTTP to the fake provider.
"""

from __future__ import annotations

import json

import pytest

from parley.core.content import TextBlock
from parley.core.context.text_limits import CHARS_PER_TOKEN, TextTooLong, max_text_chars
from parley.core.importing.conversation import ImportMessageTooLong, import_conversation
from parley.core.providers.catalog import known_models
from parley.core.store import AsyncStore
from parley.gui.composer.drafts import Drafts, draft_key
from tests.core.faults import MODEL

OVER = max_text_chars() + 1


def test_the_limit_is_the_largest_catalog_window_in_characters():
    largest = max(m.context_window for kind in ("anthropic", "openai")
                  for m in known_models(kind))
    assert max_text_chars() == largest * CHARS_PER_TOKEN
    assert max_text_chars() >= 4_000_000  # a 1M-token model's worth of text is taken


@pytest.mark.parametrize("model", [MODEL, "anthropic:a-model-the-catalog-does-not-know"])
async def test_a_message_longer_than_any_model_reads_is_neither_saved_nor_sent(
    tmp_path, chat, fake_provider, model
):
    store, runner = await chat(tmp_path / "sessions.db")
    sid = (await store.create_session(title="t")).id
    with pytest.raises(TextTooLong) as info:
        await runner.send(sid, [TextBlock("x" * OVER)], model_ref=model)
    assert "more than any model can read" in info.value.message
    assert "stays in the box" in info.value.message
    assert await store.get_turns(sid) == []
    assert fake_provider.model_requests == []


async def test_an_import_holding_such_a_message_writes_nothing(tmp_path):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    try:
        data = json.dumps([{"role": "user", "content": "hi"},
                           {"role": "assistant", "content": "y" * OVER}])
        with pytest.raises(ImportMessageTooLong) as info:
            await import_conversation(store, data)
        assert "message 2" in info.value.message and "Nothing was imported" in info.value.message
        assert await store.list_sessions() == []
    finally:
        await store.close()


async def test_a_draft_longer_than_any_model_reads_is_never_written(tmp_path):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    try:
        drafts = Drafts(store)
        drafts.typed(None, "a short draft")
        await drafts.save(None)
        drafts.typed(None, "z" * OVER)
        await drafts.save(None)
        assert await store.get_state(draft_key(None)) == "a short draft"
        # One stored by an older Parley is cut to what could ever be sent.
        await store.set_state(draft_key("old"), "w" * (OVER + 10))
        assert len(await Drafts(store).load("old")) == max_text_chars()
    finally:
        await store.close()


def test_the_advice_for_a_text_too_long_can_be_followed():
    """The trial: a 4.6 M-character paste was told "attach the text as a file instead",
    but text files are read up to 512 KB. The advice names that limit, and it holds:
    a text file of that size is taken, one byte more is refused."""
    from parley.core.attachments.files import AttachmentTooLarge, from_bytes
    from parley.core.context.text_limits import check_blocks, paste_refused

    told = paste_refused(4_600_000).message
    with pytest.raises(TextTooLong) as sent:
        check_blocks([TextBlock("x" * (max_text_chars() + 1))])
    for message in (told, sent.value.message):
        assert "512 KB" in message and "in parts" in message
        assert "as a file instead" not in message and "Attach it as a file" not in message
    assert "The paste was not taken" in told
    part = ("line of text\n" * 60_000).encode()[: 512 * 1024]
    assert from_bytes(part, "part1.txt").kind == "text"
    with pytest.raises(AttachmentTooLarge):
        from_bytes(part + b"x", "part1.txt")
