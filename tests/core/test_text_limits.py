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
from tests.core.test_unsaved_replies import MODEL, chat  # noqa: F401 - the fixture

OVER = max_text_chars() + 1


def test_the_limit_is_the_largest_catalog_window_in_characters():
    largest = max(m.context_window for kind in ("anthropic", "openai")
                  for m in known_models(kind))
    assert max_text_chars() == largest * CHARS_PER_TOKEN
    assert max_text_chars() >= 4_000_000  # a 1M-token model's worth of text is taken


@pytest.mark.parametrize("model", [MODEL, "anthropic:a-model-the-catalog-does-not-know"])
async def test_a_message_longer_than_any_model_reads_is_neither_saved_nor_sent(
    tmp_path, chat, fake_provider, model  # noqa: F811
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
