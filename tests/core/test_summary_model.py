"""Which model writes a summary: the ``compaction.model`` setting checked and resolved.

A ``provider:model`` value whose provider is not set up is refused when saved
and raises a typed error when used; it is never sent to the chat's provider
(the trial bug: ``openai:gpt-4o`` went to Anthropic as ``anthropic:openai:gpt-4o``).
Real sessions.db, the real SDKs over HTTP to the fake provider server.
"""

from __future__ import annotations

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.compaction.settings import (
    ModelProviderNotSetUp,
    UnusableModelSetting,
    check_model_setting,
)
from parley.core.content import TextBlock, Turn
from parley.core.providers.cheap_models import summary_model_ref
from parley.core.settings import SettingsError
from parley.core.store.async_store import AsyncStore
from tests.core.hubs import fake_hub, fake_workspace

SONNET = "anthropic:claude-sonnet-4-6"


@pytest.fixture
async def anthropic_only(tmp_path, fake_provider):
    """A store, a hub with only Anthropic set up, a runner, one session of 8 turns."""
    ws = await fake_workspace(tmp_path, fake_provider, openai=False)
    store, hub, runner = ws.store, ws.hub, ws.runner
    sid = (await store.create_session()).id
    for i in range(4):
        await store.append_turn(sid, Turn("user", [TextBlock(f"Question {i} about ZEBRA")]))
        await store.append_turn(sid, Turn("assistant", [TextBlock(f"Answer {i}")]))
    try:
        yield store, hub, runner, sid
    finally:
        await ws.close()


async def test_a_provider_that_is_not_set_up_is_an_error_not_another_provider(anthropic_only):
    _store, hub, _runner, _sid = anthropic_only
    with pytest.raises(UnusableModelSetting) as caught:
        await summary_model_ref(hub, SONNET, "openai:gpt-4o")
    err = caught.value
    assert (err.key, err.ref, err.provider_id) == ("compaction.model", "openai:gpt-4o", "openai")
    assert "summary model openai:gpt-4o" in err.message
    assert "not set up" in err.message and "Settings → Compaction" in err.message
    # An unknown provider part (a bare id with a colon) is refused the same way.
    with pytest.raises(UnusableModelSetting) as caught:
        await summary_model_ref(hub, SONNET, "llama3.2:3b")
    assert caught.value.provider_id == "llama3.2"
    # The title model shares the rule; its error names its own setting and page.
    with pytest.raises(UnusableModelSetting, match="title model .*Settings → Chat"):
        await summary_model_ref(hub, SONNET, "openai:gpt-4o", key="chat.title_model")


async def test_set_up_provider_bare_id_and_automatic_resolve(tmp_path, fake_provider):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    hub = await fake_hub(store, tmp_path, fake_provider, compatible={
        "name": "Ollama", "provider_id": "ollama", "default_model": "llama3.2:3b"})
    try:
        assert await summary_model_ref(hub, SONNET, "openai:gpt-5-mini") == "openai:gpt-5-mini"
        assert await summary_model_ref(hub, SONNET, "ollama:llama3.2:3b") == "ollama:llama3.2:3b"
        # A bare id (no colon) is that model of the chat's own provider.
        assert await summary_model_ref(hub, "openai:gpt-5", " gpt-4.1 ") == "openai:gpt-4.1"
        # Automatic: a cheap sibling of the chat's model that its provider lists.
        assert await summary_model_ref(hub, SONNET, None) == "anthropic:claude-haiku-4-5"
        assert await summary_model_ref(hub, "openai:gpt-5", None) == "openai:gpt-5-mini"
    finally:
        await hub.aclose()
        await store.close()


async def test_compact_now_with_an_unset_provider_fails_and_changes_nothing(
    anthropic_only, fake_provider
):
    store, _hub, runner, sid = anthropic_only
    await store.set_setting("compaction.model", "openai:gpt-4o")
    before = await store.get_turns(sid)
    events = []

    with pytest.raises(UnusableModelSetting, match="openai:gpt-4o"):
        await runner.compact(sid, keep_turns=2, model_ref=SONNET, on_event=events.append)

    assert fake_provider.model_requests == []  # sent to no provider at all
    assert await store.list_compactions(sid) == []
    assert await store.get_turns(sid) == before
    assert events[-1].name == "compact:end" and isinstance(events[-1].error,
                                                           UnusableModelSetting)


async def test_compact_now_sends_a_set_up_providers_model_to_that_provider(
    tmp_path, fake_provider
):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    hub = await fake_hub(store, tmp_path, fake_provider)  # Anthropic and OpenAI
    try:
        runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
        sid = (await store.create_session()).id
        for i in range(4):
            await store.append_turn(sid, Turn("user", [TextBlock(f"Question {i}")]))
            await store.append_turn(sid, Turn("assistant", [TextBlock(
                f"Answer {i}: " + "step " * 10)]))  # longer than the summary
        await store.set_setting("compaction.model", "openai:gpt-5-mini")
        fake_provider.script("<summary>\n## Topic\nFour questions, each answered in turn.\n"
                             "## Key points\nEvery question got an answer.\n</summary>")

        result = await runner.compact(sid, keep_turns=2, model_ref=SONNET)

        assert result.compacted and result.model == "openai:gpt-5-mini"
        (req,) = fake_provider.model_requests
        assert req.api == "openai" and req.body["model"] == "gpt-5-mini"
        (row,) = await store.list_compactions(sid)
        assert row.model == "openai:gpt-5-mini"
    finally:
        await hub.aclose()
        await store.close()


def test_saving_checks_the_provider_part():
    ids = ["anthropic", "ollama"]
    for ok in (None, "claude-haiku-4-5", "anthropic:claude-haiku-4-5", "ollama:llama3.2:3b"):
        check_model_setting("compaction.model", ok, ids)  # accepted: no error
    with pytest.raises(ModelProviderNotSetUp) as caught:
        check_model_setting("compaction.model", "openai:gpt-4o", ids)
    assert isinstance(caught.value, SettingsError)  # the dialog shows it under the field
    assert caught.value.provider_id == "openai"
    assert "“Summary model” names the provider 'openai', which is not set up" in (
        caught.value.message)
    assert "not changed" in caught.value.message
    with pytest.raises(ModelProviderNotSetUp, match="'anthropic:llama3.2:3b'"):
        check_model_setting("compaction.model", "llama3.2:3b", ids)
