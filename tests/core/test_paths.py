"""Where data lives: explicit home, PARLEY_HOME, platform default."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from parley.core import paths


def test_explicit_home_wins_over_env_and_is_created(tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "from-env"))
    home = tmp_path / "explicit" / "nested"
    assert paths.data_dir(home) == home
    assert home.is_dir()
    assert not (tmp_path / "from-env").exists()


def test_env_home_used_when_no_argument(tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "env-home"))
    assert paths.data_dir() == tmp_path / "env-home"
    assert paths.db_path() == tmp_path / "env-home" / "sessions.db"
    assert paths.log_dir() == tmp_path / "env-home" / "logs"
    assert (tmp_path / "env-home" / "logs").is_dir()


def test_platform_default_without_env(tmp_path, monkeypatch):
    monkeypatch.delenv("PARLEY_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected = Path(platformdirs.user_data_dir("Parley", appauthor=False))
    assert paths.data_dir() == expected
    assert expected.is_dir()
    assert str(expected).startswith(str(tmp_path))  # never the real home in tests


def test_relative_and_tilde_homes_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert paths.db_path("rel") == tmp_path / "rel" / "sessions.db"
    monkeypatch.setenv("HOME", str(tmp_path / "fakehome"))
    assert paths.data_dir("~/p") == tmp_path / "fakehome" / "p"


def test_a_file_as_home_is_refused_in_words(tmp_path):
    import pytest

    from parley.core.paths import DataDirError, data_dir

    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.raises(DataDirError, match="is a file, not a folder"):
        data_dir(afile)
    with pytest.raises(DataDirError, match="afile"):
        data_dir(afile / "sub")
    assert afile.read_text() == "not a folder"


def test_a_file_in_the_way_is_refused_in_words_and_nothing_is_created(tmp_path):
    import pytest

    from parley.core.paths import DataDirError, data_dir

    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    with pytest.raises(DataDirError) as info:
        data_dir(afile / "sub" / "deeper")
    message = info.value.message
    assert str(afile / "sub" / "deeper") in message
    assert "a file is in the way" in message
    assert "Nothing was changed" in message and "--home" in message
    assert info.value.path == afile / "sub" / "deeper"
    assert afile.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "parley-home"]


def test_find_data_dir_resolves_without_creating(tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "not-yet"))
    assert paths.find_data_dir() == tmp_path / "not-yet"
    assert paths.find_data_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "not-yet").exists() and not (tmp_path / "a").exists()


def test_is_writable_tells_a_usable_folder_from_an_unusable_path(tmp_path):
    (tmp_path / "afile").write_text("x")
    assert paths.is_writable(tmp_path)
    assert not paths.is_writable(tmp_path / "afile")
    assert not paths.is_writable(tmp_path / "missing")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "parley-home"]  # no probe left


def test_log_dir_raises_when_a_file_is_named_logs(tmp_path):
    import pytest

    (tmp_path / "logs").write_text("in the way")
    with pytest.raises(OSError):
        paths.log_dir(tmp_path)
    assert (tmp_path / "logs").read_text() == "in the way"
