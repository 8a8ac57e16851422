"""Old sessions.db files and stand-in upgraders, for the store-opening tests."""

from __future__ import annotations

import sqlite3
import types
from pathlib import Path
from typing import Any

from parley.core.store import schema
from parley.core.store.sqlite.engine import make_engine, write
from parley.core.store.upgrade.convert import convert_turn_indexed


def make_v3(path: Path, user_version: int = 3) -> None:
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, space TEXT, parent_id TEXT,
            fork_idx INTEGER, model TEXT, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, meta TEXT);
        CREATE TABLE turns (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
            created_at INTEGER NOT NULL, PRIMARY KEY (session_id, idx));
        CREATE TABLE app_state (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO sessions VALUES ('s_1', 'Old', 'Work', NULL, NULL, NULL, 1, 2, NULL);
        INSERT INTO turns VALUES ('s_1', 0, 'user', '[{"type":"text","text":"hi"}]', 1);
        """
    )
    con.execute(f"PRAGMA user_version = {user_version}")
    con.commit()
    con.close()


def fake_upgrader(calls: list) -> types.ModuleType:
    """A stand-in parley.core.store.upgrade.v3: rename the v3 tables away and create v4."""

    def upgrade_file(path: Path, progress=None):
        calls.append(path)
        if progress:
            progress(1, 1)
        engine = make_engine(path)
        con = engine.connect()

        def run(c):
            for t in ("sessions", "turns", "app_state"):
                c.exec_driver_sql(f"ALTER TABLE {t} RENAME TO v3_{t}")
            schema.create_all(c)

        write(con, run, path)
        con.close()
        engine.dispose()
        return {"sessions": 1}

    module = types.ModuleType("parley.core.store.upgrade.v3")
    module.upgrade_file = upgrade_file  # type: ignore[attr-defined]
    return module


def convert_turn(role: Any, content: Any) -> tuple[str, str, bool]:
    """Convert one v3 turn as the upgrade does: ``(role, blocks, recovered)`` of
    :func:`parley.core.store.upgrade.convert.convert_turn_indexed`, its search text left
    out."""
    role4, blocks, recovered, _search_text = convert_turn_indexed(role, content)
    return role4, blocks, recovered
