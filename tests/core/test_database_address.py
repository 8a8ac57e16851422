"""A mistyped database address is refused in words, never taken as a file to create.

``--database`` / ``PARLEY_DATABASE_URL`` / Settings → Storage take a PostgreSQL address
only; ``--copy-to`` takes one or a new file path, and refuses what looks like an address
of another kind. The password never shows in the message.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from parley.core.cli.copy_to import copy_only
from parley.core.store.backends import database_url, open_store, save_database_choice
from parley.core.store.errors import InvalidDatabaseUrl

MISTYPED = [
    "postgressql://u:secretpw@127.0.0.1:55432/parley",  # an extra s
    "postgresql//u:secretpw@127.0.0.1:55432/parley",  # no colon
    "postgresql:/u:secretpw@127.0.0.1:55432/parley",  # one slash
    "mysql://u:secretpw@127.0.0.1:3306/parley",  # another kind of database
    "u:secretpw@127.0.0.1:55432/parley",  # no scheme at all
]


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    """An empty current folder: where a mistyped address used to become a file."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("url", MISTYPED)
def test_a_mistyped_address_is_refused_and_creates_nothing(url, cwd):
    for attempt in (lambda: database_url(url), lambda: open_store(url)):
        with pytest.raises(InvalidDatabaseUrl) as err:
            attempt()
        message = err.value.message
        assert "secretpw" not in message
        assert "127.0.0.1" in message  # names what was given
        assert "postgresql://user@host:5432/parley" in message  # and what is accepted
    assert list(cwd.iterdir()) == []


def test_the_message_names_the_mistyped_scheme():
    with pytest.raises(InvalidDatabaseUrl, match=r"it starts with 'postgressql:'"):
        database_url(MISTYPED[0])


@pytest.mark.parametrize("path", ["chats.db", "./sessions.db", "/tmp/elsewhere"])
def test_database_takes_no_file_path(path, cwd):
    """The file store is the data folder's sessions.db (--home): --database is an
    address only, so a slip cannot make a file."""
    with pytest.raises(InvalidDatabaseUrl, match="give no database address"):
        database_url(path)
    assert list(cwd.iterdir()) == []


def test_a_port_that_is_not_a_number_is_said_so():
    with pytest.raises(InvalidDatabaseUrl,
                       match=r"not a PostgreSQL database address: the port '5543x' is not a "
                             r"number"):
        database_url("postgresql://u@127.0.0.1:5543x/parley")


@pytest.mark.parametrize("url", ["postgresql://u:secretpw@127.0.0.1:55432",
                                 "postgresql://u:secretpw@127.0.0.1:55432/"])
def test_a_missing_database_name_is_said_so(url):
    with pytest.raises(InvalidDatabaseUrl, match="the database name is missing") as err:
        database_url(url)
    assert "None" not in err.value.message
    assert "secretpw" not in err.value.message


def test_the_environment_variable_is_checked_too(monkeypatch):
    monkeypatch.setenv("PARLEY_DATABASE_URL", "postgresql://u@127.0.0.1:5543x/parley")
    with pytest.raises(InvalidDatabaseUrl, match="'5543x' is not a number"):
        database_url(None)


def test_settings_storage_refuses_a_mistyped_address(tmp_path):
    folder = tmp_path / "data"
    with pytest.raises(InvalidDatabaseUrl, match="postgressql"):
        save_database_choice(folder, MISTYPED[0])
    assert not folder.exists()


def test_good_addresses_pass():
    assert database_url(" postgresql://u@127.0.0.1:55432/parley ") == (
        "postgresql://u@127.0.0.1:55432/parley")
    assert database_url("postgres://u:pw@[::1]:5432/parley") == "postgres://u:pw@[::1]:5432/parley"
    assert database_url("postgresql://db.example/parley") == "postgresql://db.example/parley"


@pytest.mark.parametrize("url", MISTYPED)
def test_copy_to_a_mistyped_address_exits_2_and_creates_nothing(url, tmp_path, cwd):
    from parley.core.store.store import Store

    home = tmp_path / "home"
    home.mkdir()
    Store.open(home / "sessions.db").close()
    out, err = io.StringIO(), io.StringIO()
    assert copy_only(url, home, out=out, err=err) == 2
    assert "not a PostgreSQL database address" in err.getvalue()
    assert "secretpw" not in err.getvalue() + out.getvalue()
    assert out.getvalue() == ""
    assert list(cwd.iterdir()) == []


def test_copy_from_a_port_that_is_not_a_number_exits_2(tmp_path, cwd):
    out, err = io.StringIO(), io.StringIO()
    code = copy_only(str(tmp_path / "copy.db"), tmp_path / "home",
                     database="postgresql://u@127.0.0.1:5543x/parley", out=out, err=err)
    assert code == 2
    assert "the port '5543x' is not a number" in err.getvalue()
    assert "Traceback" not in err.getvalue()
    assert not (tmp_path / "copy.db").exists()


def test_the_command_line_refuses_a_mistyped_database_with_exit_2(tmp_path, cwd, capsys,
                                                                  monkeypatch):
    from parley.gui.app import main

    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PARLEY_DATABASE_URL", raising=False)
    assert main(["--home", str(tmp_path / "home"), "--database", MISTYPED[0]]) == 2
    said = capsys.readouterr().err
    assert "postgressql" in said and "secretpw" not in said
    assert list(cwd.iterdir()) == []


def test_copy_to_a_folder_says_what_copy_to_needs(tmp_path):
    from parley.core.store.store import Store

    home = tmp_path / "home"
    home.mkdir()
    Store.open(home / "sessions.db").close()
    folder = tmp_path / "backups"
    folder.mkdir()
    out, err = io.StringIO(), io.StringIO()
    assert copy_only(str(folder), home, out=out, err=err) == 2
    said = err.getvalue()
    assert "is a folder" in said and "new file" in said and "empty PostgreSQL database" in said
    assert "--home" not in said and "Move it away" not in said  # not advice for opening
    assert list(folder.iterdir()) == []


def test_an_address_without_a_password_is_shown_as_written():
    """The trial: ``mysql://x@127.0.0.1/db`` was named 'mysql:***@127.0.0.1/db' (the
    scheme's colon taken for a password's)."""
    with pytest.raises(InvalidDatabaseUrl) as err:
        database_url("mysql://x@127.0.0.1/db")
    assert "mysql://x@127.0.0.1/db" in err.value.message
    with pytest.raises(InvalidDatabaseUrl) as err:
        database_url("mysql://x:secretpw@127.0.0.1/db")
    assert "mysql://x:***@127.0.0.1/db" in err.value.message
