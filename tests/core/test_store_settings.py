"""Settings and app state: JSON values by key."""

from __future__ import annotations

import math

import pytest

from parley.core.store.store import Store


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


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
def test_settings_round_trip_any_json_value(db, value):
    db.set_setting("k", value)
    assert db.get_setting("k") == value


def test_settings_defaults_overwrite_remove_and_list(db):
    assert db.get_setting("missing") is None
    assert db.get_setting("missing", "fallback") == "fallback"
    db.set_setting("a", 1)
    db.set_setting("a", 2)
    db.set_setting("b", {"x": [1]})
    assert db.all_settings() == {"a": 2, "b": {"x": [1]}}
    db.set_setting("a", None)
    assert db.get_setting("a", "default again") == "default again"
    assert db.all_settings() == {"b": {"x": [1]}}


def test_settings_and_state_are_separate(db):
    db.set_state("lastSessionId", "s1")
    db.set_state("geometry", [0, 0, 800, 600])
    assert db.get_state("lastSessionId") == "s1"
    assert db.get_setting("lastSessionId") is None
    assert db.all_settings() == {}
    db.set_state("lastSessionId", None)
    assert db.get_state("lastSessionId", "none") == "none"


@pytest.mark.parametrize("bad", [object(), {1, 2}, math.nan, float("inf")])
def test_unserializable_values_are_refused_and_nothing_written(db, bad):
    db.set_setting("k", "before")
    with pytest.raises((TypeError, ValueError)):
        db.set_setting("k", bad)
    with pytest.raises((TypeError, ValueError)):
        db.set_state("k", bad)
    assert db.get_setting("k") == "before"
    assert db.get_state("k") is None
