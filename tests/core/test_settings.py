"""Settings declared once: rules, typed values, persistence in a real store.

The tests of stored settings run on a sessions.db file and on PostgreSQL (``store`` below).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.core import settings as S
from parley.core.settings import InvalidSetting, Settings, UnknownSetting, spec, validate
from parley.core.store.async_store import AsyncStore

# The keys other modules read (parley.core.compaction.compact, parley.core.compaction.cache_timer,
# titles, chat), with
# the defaults the issue fixes.
EXPECTED_DEFAULTS = {
    "compaction.auto": True,
    "compaction.threshold": 0.8,
    "compaction.keep_turns": 4,
    "compaction.model": None,
    "compaction.strategy": "summary",
    "chat.auto_title": True,
    "chat.system_prompt": "",
    "experimental.compact_before_cache_expiry": False,
    "cache.openai_ttl_estimate_s": 300,
    "cache.anthropic_ttl": "5m",
}


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


def test_declared_keys_and_defaults():
    for key, default in EXPECTED_DEFAULTS.items():
        assert spec(key).default == default, key
    assert [v for v, _ in spec("compaction.strategy").choices] == ["summary", "tail"]
    assert [v for v, _ in spec("cache.anthropic_ttl").choices] == ["5m", "1h"]
    # The hub's own keys are declared too, but edited by the Providers page.
    assert not spec("providers").in_dialog and not spec("default_model").in_dialog


def test_every_declaration_is_consistent():
    keys = [s.key for s in S.SETTINGS]
    assert len(keys) == len(set(keys))
    for s in S.SETTINGS:
        assert s.section in S.SECTIONS
        assert s.label and s.description and "\n" not in s.description
        if s.default is not None or not s.optional:
            assert validate(s.key, s.default) == s.default, s.key
        if s.kind == "choice":
            assert s.default in [v for v, _ in s.choices]
    experimental = [s.key for s in S.SETTINGS if s.experimental]
    assert experimental == ["experimental.compact_before_cache_expiry"]
    assert [s.key for s in S.in_section("Experimental")] == experimental
    assert {s.key for s in S.in_section("Compaction")} == {
        "compaction.auto", "compaction.threshold", "compaction.keep_turns",
        "compaction.model", "compaction.strategy",
    }


@pytest.mark.parametrize(
    ("key", "given_value", "stored"),
    [
        ("compaction.auto", "off", False),
        ("compaction.auto", " Yes ", True),
        ("compaction.threshold", "0.75", 0.75),
        ("compaction.threshold", "80%", 0.8),
        ("compaction.threshold", "0,9", 0.9),
        ("compaction.threshold", 1 - 0.5, 0.5),
        ("compaction.keep_turns", " 6 ", 6),
        ("compaction.keep_turns", 0, 0),
        ("compaction.keep_turns", 8.0, 8),
        ("compaction.strategy", "tail", "tail"),
        ("compaction.strategy", "Summary", "summary"),  # a label
        ("compaction.model", "", None),
        ("compaction.model", " claude-haiku-4-5 ", "claude-haiku-4-5"),  # the chat's provider
        ("compaction.model", "ollama:llama3.2:3b", "ollama:llama3.2:3b"),
        ("default_model", "claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
        ("default_model", "", None),
        ("cache.anthropic_ttl", "1 hour", "1h"),
        ("cache.openai_ttl_estimate_s", "600", 600),
        ("chat.system_prompt", "Be brief.", "Be brief."),
    ],
)
def test_validate_accepts_and_normalizes(key, given_value, stored):
    assert validate(key, given_value) == stored


@pytest.mark.parametrize(
    ("key", "bad", "words"),
    [
        ("compaction.auto", "maybe", "on or off"),
        ("compaction.auto", 2, "on or off"),
        ("compaction.threshold", "abc", "from 0.2 to 0.95"),
        ("compaction.threshold", 1.5, "from 0.2 to 0.95"),
        ("compaction.threshold", "95.5%", "from 0.2 to 0.95"),
        ("compaction.threshold", float("nan"), "a number"),
        ("compaction.threshold", True, "a number"),
        ("compaction.keep_turns", "four", "whole number from 0 to 100 turns"),
        ("compaction.keep_turns", -1, "from 0 to 100"),
        ("compaction.keep_turns", 2.5, "whole number"),
        ("compaction.strategy", "fold", "'summary', 'tail'"),
        ("compaction.model", "gpt 5", "a model id, or 'provider:model'"),
        ("compaction.model", ":gpt-5", "a model id, or 'provider:model'"),
        ("compaction.model", 3, "a model id, or 'provider:model'"),
        ("default_model", "llama3", "as 'provider:model'"),
        ("cache.openai_ttl_estimate_s", 10, "from 60 to 86400 seconds"),
        ("chat.system_prompt", "x" * 100_001, "at most 100,000 characters"),
        ("chat.system_prompt", 5, "must be text"),
        ("providers", {"not": "a list"}, "must be a list"),
    ],
)
def test_validate_refuses_with_a_message_naming_the_rule(key, bad, words):
    with pytest.raises(InvalidSetting) as info:
        validate(key, bad)
    message = info.value.message
    assert words in message
    assert spec(key).label in message and "not changed" in message


def test_unknown_key_is_refused():
    with pytest.raises(UnknownSetting, match="no setting called 'compaction.nope'"):
        validate("compaction.nope", 1)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=10))
def test_threshold_accepted_exactly_in_its_range(x):
    s = spec("compaction.threshold")
    if s.minimum <= x <= s.maximum:
        assert validate(s.key, x) == x
        assert validate(s.key, repr(x)) == x
    else:
        with pytest.raises(InvalidSetting):
            validate(s.key, x)


async def test_get_returns_defaults_until_set_and_set_persists(any_target, store):
    settings = Settings(store)
    assert await settings.get("compaction.threshold") == 0.8
    assert await settings.set("compaction.threshold", "70%") == 0.7
    assert await settings.get("compaction.threshold") == 0.7
    await store.close()

    reopened = await AsyncStore.open(any_target)
    try:
        assert await Settings(reopened).get("compaction.threshold") == 0.7
        assert await reopened.get_setting("compaction.threshold") == 0.7  # plain JSON
    finally:
        await reopened.close()


async def test_invalid_set_writes_nothing_and_tells_no_listener(store):
    settings = Settings(store)
    await settings.set("compaction.keep_turns", 6)
    heard = []
    settings.on_change(lambda k, v: heard.append((k, v)))
    with pytest.raises(InvalidSetting):
        await settings.set("compaction.keep_turns", "lots")
    assert await store.get_setting("compaction.keep_turns") == 6
    assert heard == []


async def test_listeners_hear_changes_and_resets(store):
    settings = Settings(store)
    heard = []
    unsubscribe = settings.on_change(lambda k, v: heard.append((k, v)))
    await settings.set("experimental.compact_before_cache_expiry", True)
    assert await settings.reset("experimental.compact_before_cache_expiry") is False
    assert await store.all_settings() == {}
    unsubscribe()
    await settings.set("chat.auto_title", False)
    assert heard == [
        ("experimental.compact_before_cache_expiry", True),
        ("experimental.compact_before_cache_expiry", False),
    ]


async def test_a_broken_stored_value_reads_as_the_default(store):
    await store.set_setting("compaction.threshold", "very full")
    await store.set_setting("compaction.keep_turns", 12)
    values = await Settings(store).values()
    assert values["compaction.threshold"] == 0.8
    assert values["compaction.keep_turns"] == 12
    assert set(values) == {s.key for s in S.SETTINGS}
    assert json.dumps(values)  # every value is plain JSON


async def test_one_shared_instance_per_store(store, tmp_path):
    assert Settings.of(store) is Settings.of(store)
    other = await AsyncStore.open(tmp_path / "other.db")
    try:
        assert Settings.of(other) is not Settings.of(store)
    finally:
        await other.close()


# -- readers go through the declaration --------------------------------------------
# Stored values the readers once accepted under bounds of their own (threshold
# 0.05–1.0, keep_turns up to 10,000) but the declaration refuses: read as the default.


@pytest.mark.parametrize(
    ("key", "stored"),
    [
        ("compaction.threshold", 0.1),
        ("compaction.threshold", 1.0),
        ("compaction.threshold", 0.05),
        ("compaction.keep_turns", 101),
        ("compaction.keep_turns", 10_000),
        ("compaction.keep_turns", 2.5),
        ("compaction.auto", "maybe"),
        ("compaction.strategy", "fold"),
        ("tools.max_rounds", 101),
        ("tools.max_rounds", 0),
        ("tools.max_rounds", True),
    ],
)
async def test_readers_take_an_out_of_range_stored_value_as_the_default(store, key, stored):
    from parley.core.compaction.settings import load_settings
    from parley.core.tools.loop import max_rounds

    await store.set_setting(key, stored)
    read = {
        "compaction.threshold": lambda c: c.threshold,
        "compaction.keep_turns": lambda c: c.keep_turns,
        "compaction.auto": lambda c: c.auto,
        "compaction.strategy": lambda c: c.strategy,
    }
    if key == "tools.max_rounds":
        assert await max_rounds(store) == spec(key).default == 8
    else:
        assert read[key](await load_settings(store)) == spec(key).default
    assert S.read(key, stored) == spec(key).default
    assert await store.get_setting(key) == stored  # the stored value is left as it is


@pytest.mark.parametrize(
    ("key", "stored", "expected"),
    [
        ("compaction.threshold", 0.2, 0.2),
        ("compaction.threshold", 0.95, 0.95),
        ("compaction.threshold", "70%", 0.7),
        ("compaction.keep_turns", 0, 0),
        ("compaction.keep_turns", 100, 100),
        ("tools.max_rounds", 1, 1),
        ("tools.max_rounds", 100, 100),
        ("tools.max_rounds", "5", 5),
    ],
)
async def test_readers_keep_a_value_at_the_declared_bounds(store, key, stored, expected):
    from parley.core.compaction.settings import load_settings
    from parley.core.tools.loop import max_rounds

    await store.set_setting(key, stored)
    if key == "tools.max_rounds":
        assert await max_rounds(store) == expected
    else:
        got = await load_settings(store)
        assert {"compaction.threshold": got.threshold,
                "compaction.keep_turns": got.keep_turns}[key] == expected


async def test_compaction_settings_read_the_summary_model_as_declared(store):
    from parley.core.compaction.settings import load_settings

    assert (await load_settings(store)).model is None
    await store.set_setting("compaction.model", "  haiku-mini  ")
    assert (await load_settings(store)).model == "haiku-mini"  # a bare id: the chat's provider
    await store.set_setting("compaction.model", "   ")
    assert (await load_settings(store)).model is None
    await store.set_setting("compaction.model", 42)
    assert (await load_settings(store)).model is None


async def test_values_of_some_keys_is_one_snapshot(store):
    await store.set_setting("compaction.keep_turns", 7)
    got = await Settings(store).values(["compaction.keep_turns", "tools.max_rounds"])
    assert got == {"compaction.keep_turns": 7, "tools.max_rounds": 8}
    with pytest.raises(UnknownSetting):
        await Settings(store).values(["no.such"])


def test_read_without_a_stored_value_is_the_default():
    assert S.read("compaction.threshold") == 0.8
    assert S.read("compaction.threshold", None) == 0.8
    with pytest.raises(UnknownSetting):
        S.read("no.such", 1)
