"""The PostgreSQL store's own behaviour, on a real server (``postgres_server`` fixture).

What both backends share runs in the store suite, parametrized (tests/core/conftest.py);
here: choosing the backend by URL, the server's errors in words a person understands,
concurrent writers, a restarted server, passwords kept beside the API keys.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store.backends import (
    CHOICE_FILE,
    DATABASE_URL_ENV,
    database_url,
    open_store,
    save_database_choice,
)
from parley.core.store.errors import (
    AuthenticationFailed,
    DatabaseNotFound,
    InvalidDatabaseUrl,
    NewerFormat,
    NotAParleyDatabase,
    ServerDiskFull,
    ServerUnreachable,
)
from parley.core.store.postgres.store import PgStore, parse_url, save_password
from parley.core.store.store import Store
from tests.core.rawdb import raw_rows
from tests.fakes.postgres import PASSWORD


def user(text: str) -> Turn:
    return Turn("user", [TextBlock(text)])


def test_a_url_opens_postgresql_and_a_path_opens_the_file(postgres_url, tmp_path):
    pg = open_store(postgres_url)
    file = open_store(tmp_path / "sessions.db")
    try:
        assert isinstance(pg, PgStore)
        assert type(file) is Store
        assert "parley-test-password" not in pg.where
        assert pg.where.startswith("parley@127.0.0.1:")
    finally:
        pg.close()
        file.close()


def test_the_url_comes_from_the_option_then_the_environment(monkeypatch):
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert database_url(None) is None
    monkeypatch.setenv(DATABASE_URL_ENV, " postgresql://a@h/db ")
    assert database_url(None) == "postgresql://a@h/db"
    assert database_url("postgresql://b@h/other") == "postgresql://b@h/other"


def test_a_choice_saved_in_the_data_folder_comes_after_option_and_environment(
        tmp_path, monkeypatch):
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    save_database_choice(tmp_path, "postgresql://me:secret@db.example/chats")
    saved = (tmp_path / CHOICE_FILE).read_text()
    assert "secret" not in saved
    assert database_url(None, tmp_path) == "postgresql://me@db.example/chats"
    monkeypatch.setenv(DATABASE_URL_ENV, "postgresql://env@h/db")
    assert database_url(None, tmp_path) == "postgresql://env@h/db"
    assert database_url("postgresql://cli@h/db", tmp_path) == "postgresql://cli@h/db"
    save_database_choice(tmp_path, None)
    monkeypatch.delenv(DATABASE_URL_ENV)
    assert database_url(None, tmp_path) is None


def test_sqlite_users_never_load_the_postgresql_driver(tmp_path):
    code = (
        "import sys; from parley.core.store.backends import open_store; "
        f"s = open_store({str(tmp_path / 'sessions.db')!r}); s.create_session(); s.close(); "
        "print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).parents[2], timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("url", ["mysql://a@h/db", "postgresql://a@h", "postgresql://a@h/"])
def test_a_bad_url_says_so(url):
    with pytest.raises(InvalidDatabaseUrl, match="not a PostgreSQL database address"):
        PgStore.open_url(url)


def test_an_unreachable_server_says_so_at_once(closed_port_url):
    port = closed_port_url.rsplit(":", 1)[1]
    with pytest.raises(ServerUnreachable) as err:
        PgStore.open_url(f"postgresql://parley:secret@127.0.0.1:{port}/parley")
    assert f"127.0.0.1:{port}/parley" in str(err.value)
    assert "secret" not in str(err.value)
    assert "what you typed is kept" in str(err.value)


def test_a_wrong_password_is_an_authentication_error(postgres_server):
    with pytest.raises(AuthenticationFailed, match="wrong user name or password") as err:
        PgStore.open_url(postgres_server.url("postgres", password="wrong"))
    assert "wrong@" not in str(err.value)


def test_a_missing_database_is_named(postgres_server):
    with pytest.raises(DatabaseNotFound, match="no_such_db"):
        PgStore.open_url(postgres_server.url("no_such_db"))


def test_the_password_can_come_from_where_api_keys_are_saved(postgres_server, postgres_url):
    bare = postgres_url.replace(f":{PASSWORD}@", "@")
    with pytest.raises(AuthenticationFailed):
        PgStore.open_url(bare)
    save_password(bare, PASSWORD)
    store = PgStore.open_url(bare)
    try:
        assert store.list_spaces()[0].name == "General"
    finally:
        store.close()


def test_a_database_of_another_program_is_left_alone(postgres_url):
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute("CREATE TABLE sessions (x int)")
    with pytest.raises(NotAParleyDatabase, match="Parley did not change it"):
        PgStore.open_url(postgres_url)
    with psycopg.connect(postgres_url) as con:
        tables = {r[0] for r in con.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert tables == {"sessions"}


def test_a_newer_schema_is_refused(postgres_url):
    PgStore.open_url(postgres_url).close()
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute("UPDATE parley_schema SET version = 99")
    with pytest.raises(NewerFormat, match="v99"):
        PgStore.open_url(postgres_url)


def test_reopening_keeps_everything_and_creates_nothing_twice(postgres_url):
    store = PgStore.open_url(postgres_url)
    s = store.create_session(title="Kept")
    store.append_turn(s.id, user("hello there"))
    store.close()
    again = PgStore.open_url(postgres_url)
    try:
        assert [x.title for x in again.list_sessions()] == ["Kept"]
        assert again.get_turns(s.id)[0].text() == "hello there"
        assert [sp.name for sp in again.list_spaces()] == ["General"]
    finally:
        again.close()


def test_disk_full_on_the_server_is_said_and_nothing_is_half_saved(postgres_url):
    store = PgStore.open_url(postgres_url)
    try:
        s = store.create_session(title="x")
        store.append_turn(s.id, user("first"))
        # The server itself raises SQLSTATE 53100 (disk_full) on the next turn's insert.
        raw_rows(store, "CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$ "
                        "BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = "
                        "'disk_full'; END $$")
        raw_rows(store, "CREATE TRIGGER disk_is_full BEFORE INSERT ON turns FOR EACH ROW "
                        "EXECUTE FUNCTION full_disk()")
        before = store.get_session(s.id).updated_at
        with pytest.raises(ServerDiskFull, match="disk of the PostgreSQL server"):
            store.append_turn(s.id, user("second"))
        assert [t.text() for t in store.get_turns(s.id)] == ["first"]
        assert store.get_session(s.id).updated_at == before
    finally:
        store.close()


def test_two_writers_on_one_chat_never_lose_a_turn(postgres_url):
    a, b = PgStore.open_url(postgres_url), PgStore.open_url(postgres_url)
    try:
        s = a.create_session(title="shared")
        errors: list[BaseException] = []

        def write(store: PgStore, who: str) -> None:
            try:
                for i in range(25):
                    store.append_turn(s.id, user(f"{who} {i}"))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(st, who)) for st, who in
                   ((a, "a"), (b, "b"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        texts = [t.text() for t in b.get_turns(s.id)]
        assert sorted(texts) == sorted([f"a {i}" for i in range(25)] +
                                       [f"b {i}" for i in range(25)])
        # each writer's turns stay in its own order
        assert [x for x in texts if x.startswith("a")] == [f"a {i}" for i in range(25)]
        assert a.count_turns(s.id) == 50
    finally:
        a.close()
        b.close()


def test_two_parleys_set_up_an_empty_database_once(postgres_url):
    opened: list[PgStore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(PgStore.open_url(postgres_url))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert [sp.name for sp in opened[0].list_spaces()] == ["General"]
    finally:
        for s in opened:
            s.close()


def test_a_server_away_then_back_needs_no_restart_of_parley(postgres_own_server):
    own_server = postgres_own_server
    store = PgStore.open_url(own_server.new_database())
    try:
        s = store.create_session(title="before")
        own_server.pause()
        with pytest.raises(ServerUnreachable):
            store.append_turn(s.id, user("while away"))
        own_server.resume()
        store.append_turn(s.id, user("after"))
        assert [t.text() for t in store.get_turns(s.id)] == ["after"]
    finally:
        store.close()


def test_a_parse_keeps_the_password_out_of_messages():
    url = parse_url("postgresql://me:hunter2@db.example:6543/chats")
    assert url.drivername == "postgresql+psycopg"
    assert url.password == "hunter2"
    with pytest.raises(InvalidDatabaseUrl) as err:
        parse_url("postgresql://me:hunter2@db.example:6543/")
    assert "hunter2" not in str(err.value)


def test_a_database_address_without_the_driver_says_how_to_install_it(monkeypatch):
    """The bundle leaves psycopg out (the optional 'postgresql' extra): an address then
    gives DriverMissing in words, and nothing is opened."""
    from parley.core.store.backends import open_store
    from parley.core.store.errors import DriverMissing

    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(DriverMissing, match=r"pip install 'parley\[postgresql\]'"):
        open_store("postgresql://parley@127.0.0.1:1/parley")
