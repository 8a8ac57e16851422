"""The Workspace opens and closes a Parley's parts in order (parley.core.workspace).

Real sessions.db files in the test's folder, the real SDKs over HTTP to the fake provider
server; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from parley.core.chat.events import ReplyUpdated
from parley.core.content import TextBlock
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.retry import RetryPolicy
from parley.core.store.errors import InvalidDatabaseUrl, NotAParleyFile
from parley.core.store.sqlite.backups import automatic_backups, folder_of
from parley.core.store.store import Store
from parley.core.workspace import NotOpen, Options, Stage, Workspace

MODEL = "anthropic:claude-sonnet-4-6"


def open_files(db: Path) -> list[str]:
    """This process's open files that are ``db`` or its -wal / -shm."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(db)):
            found.append(target)
    return found


def workspace(home: Path, **kw: Any) -> Workspace:
    """A workspace on ``home`` with a file key store and no retries (no machine keys)."""
    keys = KeyStore(backend=FileBackend(home / "keys.json"), environ={})
    return Workspace(home, environ={}, keys=keys, retry=RetryPolicy(max_retries=0), **kw)


async def add_fake(ws: Workspace, fake: Any) -> None:
    await ws.hub.add_provider("anthropic", base_url=fake.anthropic_base_url,
                              api_key="sk-test-anthropic", default_model="claude-sonnet-4-6")


async def test_opens_in_two_steps_and_closes_everything(tmp_path, fake_provider):
    home = tmp_path / "home"
    ws = workspace(home)
    assert ws.stage is Stage.NEW and not home.exists()  # making it creates nothing
    with pytest.raises(NotOpen):
        _ = ws.store

    store = await ws.open_store()
    assert ws.stage is Stage.STORE and ws.store is store
    assert await ws.note_run() is None  # a new file: no previous run to tell
    session = await store.create_session(title="Two steps")  # the chats, before providers
    with pytest.raises(NotOpen):
        _ = ws.hub

    runner = await ws.open_providers()
    assert ws.stage is Stage.READY and ws.runner is runner and runner.hub is ws.hub
    assert runner.tools is not None and ws.mcp is not None and ws.cache_timer is not None
    assert ws.backups is not None  # a file: automatic backups
    await add_fake(ws, fake_provider)
    fake_provider.script("Hello from the fake.")
    reply = await runner.send(session.id, [TextBlock("Hi")], model_ref=MODEL)
    assert reply is not None and reply.text() == "Hello from the fake."

    await ws.close()
    assert ws.stage is Stage.CLOSED and store.closed
    assert open_files(home / "sessions.db") == []
    await ws.close()  # a second close does nothing
    with pytest.raises(NotOpen):
        await ws.open_store()  # closed for good: a new Workspace opens again

    with Store.open(home / "sessions.db") as again:  # everything saved
        assert [t.text() for t in again.get_turns(session.id)] == ["Hi", "Hello from the fake."]
    assert automatic_backups(folder_of(home / "sessions.db"))  # the last backup, at close
    again_ws = workspace(home)
    await again_ws.open_store()
    assert await again_ws.note_run() is None  # the clean exit was recorded
    await again_ws.close(final_backup=False)


async def test_close_from_new_creates_nothing(tmp_path):
    ws = Workspace(tmp_path / "nowhere", environ={})
    await ws.close()
    await ws.close()
    assert ws.stage is Stage.CLOSED and not (tmp_path / "nowhere").exists()


async def test_failed_store_open_leaves_the_file_as_it_was(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db = home / "sessions.db"
    db.write_bytes(b"not a database, but somebody's notes " * 200)
    before = db.read_bytes()
    ws = workspace(home)
    with pytest.raises(NotAParleyFile):
        await ws.open_store()
    assert ws.stage is Stage.NEW  # nothing half-open
    await ws.close()
    assert db.read_bytes() == before and open_files(db) == []


async def test_close_after_a_failed_open_loses_nothing_and_releases_the_file(tmp_path):
    home = tmp_path / "home"
    ws = workspace(home)
    store = await ws.open_store()
    await ws.note_run()
    session = await store.create_session(title="Kept")
    await store.append_turn(session.id, _user("written before the providers failed"))
    # A provider entry this version cannot read: loading the hub fails (a bug, raised).
    await store.set_setting("providers", [{"no such field": 1}])
    with pytest.raises(TypeError):
        await ws.open_providers()
    assert ws.stage is Stage.STORE and ws.store is store  # the store is still usable
    with pytest.raises(NotOpen):
        _ = ws.runner

    await ws.close()
    db = home / "sessions.db"
    assert store.closed and open_files(db) == []
    with Store.open(db) as again:
        assert [t.text() for t in again.get_turns(session.id)] == [
            "written before the providers failed"]
    later = workspace(home)
    await later.open_store()
    assert await later.note_run() is None  # closed cleanly, though the open failed
    await later.close(final_backup=False)


async def test_close_stops_a_streaming_reply_and_keeps_what_arrived(tmp_path, fake_provider):
    ws = workspace(tmp_path / "home", options=Options(backups=False))
    store = await ws.open_store()
    runner = await ws.open_providers()
    await add_fake(ws, fake_provider)
    session = await store.create_session()
    fake_provider.script("word " * 400, token_delay_ms=5, chunk_size=5)
    events: list[Any] = []
    send = asyncio.ensure_future(runner.send(session.id, [TextBlock("A long story")],
                                             model_ref=MODEL, on_event=events.append))
    for _ in range(400):
        await asyncio.sleep(0.01)
        if any(isinstance(e, ReplyUpdated) and "word word" in e.turn.text() for e in events):
            break
    await ws.close()
    assert await send is None  # stopped
    with Store.open(tmp_path / "home" / "sessions.db") as again:
        last = again.get_turns(session.id)[-1]
    assert last.aborted and last.text().startswith("word word")
    assert len(last.text()) < len("word " * 400)


async def test_close_while_the_store_opens_waits_then_closes(tmp_path):
    home = tmp_path / "home"
    ws = workspace(home)
    opening = asyncio.ensure_future(ws.open_store())
    await asyncio.sleep(0)
    await ws.close()
    store = await opening
    assert store.closed and ws.stage is Stage.CLOSED
    assert open_files(home / "sessions.db") == []


async def test_options_leave_parts_out(tmp_path):
    ws = workspace(tmp_path / "home", options=Options(
        tools=False, backups=False, cache_timer=False, prepare=False))
    await ws.open_store()
    runner = await ws.open_providers()
    assert runner.tools is None and ws.mcp is None
    assert ws.cache_timer is None and ws.backups is None
    await ws.close()
    assert not folder_of(tmp_path / "home" / "sessions.db").exists()


def test_target_follows_the_database_url(tmp_path):
    home = tmp_path / "home"
    url = "postgresql://parley@127.0.0.1:5999/chats"
    ws = Workspace(home, environ={"PARLEY_DATABASE_URL": url})
    assert ws.target() == url and ws.database_url() == url
    assert Workspace(home, environ={}).target() == home / "sessions.db"
    assert Workspace(home, target=tmp_path / "other.db").database_url() is None
    given = "postgresql://parley@127.0.0.1:5999/given"  # --database wins
    assert Workspace(home, database=given, environ={"PARLEY_DATABASE_URL": url}).target() == given
    with pytest.raises(InvalidDatabaseUrl):  # a mistyped address: refused, never a file
        Workspace(home, environ={"PARLEY_DATABASE_URL": "postgressql://x/y"}).target()
    assert not home.exists()  # finding the store creates nothing


async def test_on_a_server_there_are_no_file_backups(postgres_url):
    ws = Workspace(target=postgres_url, environ={},
                   keys=KeyStore(backend=FileBackend(Path(os.environ["PARLEY_HOME"]) / "k.json"),
                                 environ={}))
    store = await ws.open_store()
    assert store.on_server
    await ws.open_providers()
    assert ws.backups is None and ws.stage is Stage.READY
    await ws.close()
    assert store.closed


def _user(text: str) -> Any:
    from parley.core.content import Turn

    return Turn("user", [TextBlock(text)])
