"""Settings and app state: JSON values by key."""

from __future__ import annotations

import math

import pytest

from core.store import Store


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "db" / "sessions.db")
    yield s
    s.close()


@pytest.mark.parametrize(
    "value",
    [
        True,
        0.8,
        42,
        "anthropic:claude",
        [1, "two"],
        {"autoCompact": {"keepTurns": 4}},
        "ünïcødé 東京",
    ],
)
def test_settings_round_trip_any_json_value(store, value):
    store.set_setting("k", value)
    assert store.get_setting("k") == value


def test_settings_defaults_overwrite_remove_and_list(store):
    assert store.get_setting("missing") is None
    assert store.get_setting("missing", "fallback") == "fallback"
    store.set_setting("a", 1)
    store.set_setting("a", 2)
    store.set_setting("b", {"x": [1]})
    assert store.all_settings() == {"a": 2, "b": {"x": [1]}}
    store.set_setting("a", None)
    assert store.get_setting("a", "default again") == "default again"
    assert store.all_settings() == {"b": {"x": [1]}}


def test_settings_and_state_are_separate(store):
    store.set_state("lastSessionId", "s1")
    store.set_state("geometry", [0, 0, 800, 600])
    assert store.get_state("lastSessionId") == "s1"
    assert store.get_setting("lastSessionId") is None
    assert store.all_settings() == {}
    store.set_state("lastSessionId", None)
    assert store.get_state("lastSessionId", "none") == "none"


@pytest.mark.parametrize("bad", [object(), {1, 2}, math.nan, float("inf")])
def test_unserializable_values_are_refused_and_nothing_written(store, bad):
    store.set_setting("k", "before")
    with pytest.raises((TypeError, ValueError)):
        store.set_setting("k", bad)
    with pytest.raises((TypeError, ValueError)):
        store.set_state("k", bad)
    assert store.get_setting("k") == "before"
    assert store.get_state("k") is None
