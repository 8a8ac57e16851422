"""A start is certainly the first only when nothing could make chats or a provider appear."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.first_start import surely_first_start


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty data folder (tmp_path holds the test's own Parley home)."""
    made = tmp_path / "data"
    made.mkdir()
    return made


def test_an_empty_or_missing_folder_is_a_first_start(folder: Path) -> None:
    assert surely_first_start(folder / "not yet", {})
    assert surely_first_start(folder, {})


def test_what_a_start_makes_before_its_store_still_counts_as_a_first_start(
        folder: Path) -> None:
    (folder / "logs").mkdir()
    for name in ("parley.lock", "window.ini", "window.ini.lock"):
        (folder / name).write_text("")
    assert surely_first_start(folder, {})


@pytest.mark.parametrize("name", ["sessions.db", "sessions.db.closed", "database.txt",
                                  "backups", "keys.json", "typed-at-start.txt"])
def test_anything_else_in_the_folder_is_not_certain(folder: Path, name: str) -> None:
    (folder / name).write_text("")
    assert not surely_first_start(folder, {})


@pytest.mark.parametrize("var", ["PARLEY_DATABASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                 "OPENAI_BASE_URL"])
def test_a_database_or_a_provider_in_the_environment_is_not_certain(folder: Path,
                                                                     var: str) -> None:
    assert not surely_first_start(folder, {var: "x"})


def test_the_process_database_url_counts(folder: Path, monkeypatch) -> None:
    monkeypatch.setenv("PARLEY_DATABASE_URL", "postgresql://h/db")
    assert not surely_first_start(folder, {})


def test_a_folder_that_cannot_be_listed_is_not_certain(folder: Path) -> None:
    (folder / "file").write_text("")
    assert not surely_first_start(folder / "file", {})
