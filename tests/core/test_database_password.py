"""A database address's password is never shown nor written to ``database.txt``: in the
user part or as ``?password=``, masked in every message, kept in the keyring (the key
file here: ``PARLEY_KEYRING=file``) and put back when connecting; an unencoded ``@`` in a
password is read right (the host is after the last one), a ``/`` in one is refused in
words. The connections go to a real PostgreSQL server (tests/fakes/postgres.py; skipped
when none is installed)."""

from __future__ import annotations

import socket
import uuid

import pytest

from parley.core.keys import detect_backend
from parley.core.store.backends import (
    CHOICE_FILE,
    database_url,
    save_database_choice,
    saved_database_url,
)
from parley.core.store.errors import InvalidDatabaseUrl, SecretNotKept, ServerUnreachable
from parley.core.store.postgres.store import PgStore, keyring_user, parse_url, password_for
from parley.core.store.postgres.urls import hide_password

SECRET = "p@ss@w0rd"  # typed as is, not percent-encoded


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://me:p@ss@db.example:5432/chats", "postgresql://me:***@db.example:5432/chats"),
    ("postgresql://me@db.example/chats?password=hunter2&sslmode=require",
     "postgresql://me@db.example/chats?password=***&sslmode=require"),
    ("postgresql://me@db.example/chats?sslmode=require&password=hunter2",
     "postgresql://me@db.example/chats?sslmode=require&password=***"),
    ("postgresql://me:pa/ss@db.example/chats", "postgresql://me:***@db.example/chats"),
    ("postgresql://me@db.example/chats?sslpassword=hunter2",
     "postgresql://me@db.example/chats?sslpassword=***"),
    ("postgresql://me@db.example:5432/chats", "postgresql://me@db.example:5432/chats"),
])
def test_every_password_in_an_address_is_masked(url, shown):
    assert hide_password(url) == shown


def test_an_unencoded_at_sign_belongs_to_the_password_not_the_host():
    url = parse_url(f"postgresql://me:{SECRET}@db.example:6543/chats")
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "me", SECRET, "db.example", 6543, "chats")
    with pytest.raises(InvalidDatabaseUrl) as err:  # a message about it shows no tail of it
        parse_url(f"postgresql://me:{SECRET}@db.example:6543/")
    message = err.value.message
    assert "the database name is missing" in message and "db.example:6543" in message
    assert "w0rd" not in message and "ss@" not in message


def test_a_slash_in_a_password_is_refused_in_words_without_showing_it():
    with pytest.raises(InvalidDatabaseUrl) as err:
        database_url("postgresql://me:se/cret9@db.example/chats")
    message = err.value.message
    assert "the password holds “/”, “?” or “#”" in message and "%2F" in message
    assert "se/cret9" not in message and "cret9" not in message and "'se'" not in message


def test_a_query_password_is_the_password_and_stays_out_of_messages():
    url = password_for(parse_url("postgresql://me@db.example/chats?password=hunter2"))
    assert url.password == "hunter2" and "password" not in url.query
    with pytest.raises(InvalidDatabaseUrl) as err:
        database_url("postgresql://me@db.example:5x/chats?password=hunter2")
    assert "hunter2" not in err.value.message and "password=***" in err.value.message


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_names_no_query_password():
    with pytest.raises(ServerUnreachable) as err:
        PgStore.open_url(f"postgresql://me@127.0.0.1:{_closed_port()}/chats?password=hunter2")
    assert "hunter2" not in str(err.value) and "127.0.0.1" in str(err.value)


def test_another_secret_in_the_query_is_not_saved(tmp_path):
    with pytest.raises(SecretNotKept) as err:
        save_database_choice(tmp_path, "postgresql://me@db.example/chats?sslpassword=hunter2")
    assert "hunter2" not in err.value.message and "sslpassword" in err.value.message
    assert not (tmp_path / CHOICE_FILE).exists()


@pytest.fixture
def own_role(postgres_server):
    """A role whose password has two unencoded "@", owning a schema of its own; its
    address without the password (user part) and the server's port."""
    import psycopg

    postgres_server.new_database()  # makes the database parley_tests on first use
    role, schema = "pw_" + uuid.uuid4().hex[:12], "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server.url("parley_tests"), autocommit=True) as con:
        con.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRET}'")
        con.execute(f'CREATE SCHEMA "{schema}" AUTHORIZATION {role}')
    where = f"127.0.0.1:{postgres_server.port}/parley_tests"
    return role, where, f"options=-csearch_path%3D{schema}"


def test_a_password_with_at_signs_connects_as_typed(own_role):
    role, where, options = own_role
    store = PgStore.open_url(f"postgresql://{role}:{SECRET}@{where}?{options}")
    try:
        assert store.list_spaces()[0].name == "General"
        assert store.where == f"{role}@{where}" and SECRET not in store.where
    finally:
        store.close()


@pytest.mark.parametrize("form", ["query", "user part"])
def test_a_saved_choice_keeps_the_password_in_the_keyring_and_connects(own_role, tmp_path,
                                                                      form):
    role, where, options = own_role
    url = (f"postgresql://{role}@{where}?password=p%40ss%40w0rd&{options}" if form == "query"
           else f"postgresql://{role}:{SECRET}@{where}?{options}")
    save_database_choice(tmp_path, url)
    written = (tmp_path / CHOICE_FILE).read_text()
    assert "w0rd" not in written and "password" not in written
    assert written.startswith(f"postgresql://{role}@127.0.0.1:")
    saved = saved_database_url(tmp_path)
    assert saved is not None and parse_url(saved).password is None
    assert detect_backend().get(keyring_user(parse_url(saved))) == SECRET  # the keyring's
    store = PgStore.open_url(saved)  # the password comes back from the keyring
    try:
        assert store.list_spaces()[0].name == "General"
    finally:
        store.close()
