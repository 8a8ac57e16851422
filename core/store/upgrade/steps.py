"""The v3 → v4 upgrade as small named steps, run in order in one transaction.

In the style of simonw/llm's migrations: each step is a function
registered with :func:`step` and a name saying what it does. :mod:`parley.core.store.upgrade.v3`
runs :data:`STEPS` inside one ``BEGIN`` … ``COMMIT`` (the first step takes the
write lock), so an interrupted upgrade leaves the v3 file as it was (SQLite
rolls the transaction back on the next open) and a finished one leaves a v4
file — never a mix. "Point N" is a rule of the upgrade as
``parley.core.store.upgrade.v3`` numbers it.

The v3 tables are first renamed aside (``v3_sessions``, ``v3_turns``,
``v3_app_state``) so the v4 schema (``parley.core.store.schema.create_all``) can use
its own names; they are dropped at the end. Turns are converted in Python and
inserted in big ``executemany`` batches, which also pace the progress callback,
while a second thread indexes them (:mod:`parley.core.store.upgrade.turns`); sessions,
spaces and settings are few and converted in Python too, where the rules are
easy to read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Connection

from parley.core.app_state import LAST_SESSION, V3_SETTINGS
from parley.core.content import new_id
from parley.core.store import schema
from parley.core.store.upgrade import tree
from parley.core.store.upgrade.turns import TurnPipeline

V3_TABLES = ("sessions", "turns", "app_state")
LEGACY_PREFIX = "v3_"

#: v3 ``app_state['settings']`` keys -> v4 ``settings`` keys (declared in parley.core.settings).
#: Keys not listed here are kept under their v3 name (point 2: unknown keys must survive).
SETTINGS_KEYS = {
    "defaultModel": "default_model",
    "autoTitle": "chat.auto_title",
    "compactBeforeCacheExpiry": "experimental.compact_before_cache_expiry",
}
#: ``settings.autoCompact`` is flattened: ``autoCompact.keepTurns`` -> ``compaction.keep_turns``;
#: an unknown sub-key keeps its v3 path (``autoCompact.<key>``).
AUTO_COMPACT_KEYS = {
    "threshold": "compaction.threshold",
    "keepTurns": "compaction.keep_turns",
    "model": "compaction.model",
}
#: v3 ``app_state`` keys -> v4 ``app_state`` keys (others keep their name): the session
#: reopened at start.
STATE_KEYS = {"lastSessionId": LAST_SESSION.name}
#: v4 ``sessions.meta`` key holding a v3 ``meta`` that was not a JSON object.
UNREADABLE_META_KEY = "v3_meta"
#: v4 ``sessions.meta`` key keeping ``fork_idx`` when no parent turn has that idx.
FORK_IDX_KEY = "v3_fork_idx"

#: The attachment trigger left out of the bulk load (see "v4 schema created").
ATTACHMENT_LINK_TRIGGER = "turns_attachments_insert"
_ATTACHMENT_LINK_DDL = next(
    ddl for ddl in schema.ATTACHMENT_DDL if ddl.split()[2] == ATTACHMENT_LINK_TRIGGER
)

_USAGE = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadTokens": "cache_read_tokens",
    "cacheWriteTokens": "cache_write_tokens",
}


@dataclass
class Migration:
    """State shared by the steps of one upgrade.

    Attributes:
        con: SQLAlchemy connection inside the upgrade's transaction.
        raw: the ``sqlite3`` connection under it (bulk SQL).
        turns_in: converted turns, from the threads of :mod:`parley.core.store.upgrade.turns`.
        report: called as ``report(done, total)`` in v3 turn rows.
        total_rows: v3 turn rows (the progress total).
        rows_written: v3 turn rows written (or skipped: their session is gone).
        sessions, turns, recovered, spaces: what was migrated (for the report).
    """

    con: Connection
    raw: sqlite3.Connection
    turns_in: TurnPipeline
    report: Callable[[int, int], None] = lambda done, total: None
    total_rows: int = 0
    rows_written: int = 0
    sessions: int = 0
    turns: int = 0
    recovered: int = 0
    spaces: int = 0
    space_ids: dict[str, str] = field(default_factory=dict)

    def tick(self) -> None:
        """Report progress: v3 turn rows both written and indexed."""
        done = min(self.rows_written, self.turns_in.rows_indexed)
        self.report(done, max(done, self.total_rows))


class AlreadyCurrent(Exception):
    """Another process finished the upgrade first (seen once the write lock is held)."""


StepFn = Callable[[Migration], None]


@dataclass(frozen=True)
class Step:
    name: str
    fn: StepFn


STEPS: list[Step] = []


def step(name: str) -> Callable[[StepFn], StepFn]:
    """Register ``fn(migration)`` as the next step of the v3 → v4 upgrade."""

    def register(fn: StepFn) -> StepFn:
        STEPS.append(Step(name, fn))
        return fn

    return register


# --- steps, in order -------------------------------------------------------------


@step("v3 tables set aside")
def set_aside(m: Migration) -> None:
    # The transaction is DEFERRED (see parley.core.store.upgrade.turns): take the write lock on the
    # main file now, before looking, so nothing changes between the check and the work.
    m.raw.execute("UPDATE main.sessions SET id = id WHERE 0")
    version = m.raw.execute("PRAGMA user_version").fetchone()[0]
    tables = {r[0] for r in m.raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if version >= schema.SCHEMA_VERSION or not set(V3_TABLES) <= tables:
        raise AlreadyCurrent()
    # Indexes and triggers go first: their names could clash with v4's.
    for kind, name in m.raw.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('index', 'trigger') "
        "AND sql IS NOT NULL AND tbl_name IN ('sessions', 'turns', 'app_state')"
    ).fetchall():
        m.raw.execute(f'DROP {kind.upper()} "{name}"')
    for table in V3_TABLES:
        m.raw.execute(f"ALTER TABLE {table} RENAME TO {LEGACY_PREFIX}{table}")


@step("v4 schema created")
def create_schema(m: Migration) -> None:
    schema.create_all(m.con)
    # Bulk load without the per-row index triggers; "search index built" re-creates them.
    schema.drop_search_triggers(m.con)
    # Nor the attachment-link trigger: no converted v3 block references a stored
    # attachment (v3 media is inline; parley.core.store.upgrade.convert), yet its WHEN clause
    # scans every turn's JSON (about 7 s per GB). "search index built" re-creates it.
    m.raw.execute(f"DROP TRIGGER {ATTACHMENT_LINK_TRIGGER}")


@step("v3→v4: spaces become rows")
def spaces_from_names(m: Migration) -> None:
    # Exact string match: 'Work' and 'work' stay two spaces (point 3).
    rows = m.raw.execute(
        "SELECT space, min(created_at) FROM v3_sessions WHERE space IS NOT NULL AND space <> '' "
        "GROUP BY space ORDER BY min(created_at), space"
    ).fetchall()
    for position, (name, created_at) in enumerate(rows, start=1):
        space_id = new_id()
        m.space_ids[name] = space_id
        m.raw.execute(
            "INSERT INTO spaces (id, name, position, created_at) VALUES (?, ?, ?, ?)",
            (space_id, str(name), position, created_at),
        )
    m.spaces = len(rows)


@step("v3→v4: sessions, their meta and usage become columns")
def sessions_from_v3(m: Migration) -> None:
    rows = m.raw.execute(
        "SELECT id, title, space, parent_id, fork_idx, model, created_at, updated_at, meta "
        "FROM v3_sessions ORDER BY created_at, id"
    ).fetchall()
    values = [session_row(r, m.space_ids) | {"n": n} for n, r in enumerate(rows, start=1)]
    m.raw.executemany(
        "INSERT INTO sessions (n, id, space_id, title, title_source, parent_session_id, model, "
        "system_prompt, pinned, archived, input_tokens, output_tokens, cache_read_tokens, "
        "cache_write_tokens, cost_usd, created_at, updated_at, meta) VALUES "
        "(:n, :id, :space_id, :title, :title_source, :parent, :model, :system_prompt, :pinned, "
        ":archived, :input_tokens, :output_tokens, :cache_read_tokens, :cache_write_tokens, "
        ":cost_usd, :created_at, :updated_at, :meta)",
        values,
    )
    m.turns_in.set_titles([(v["n"], v["id"], v["title"]) for v in values])
    m.raw.execute("CREATE TEMP TABLE v3_forks (session_id TEXT PRIMARY KEY, parent_id TEXT, "
                  "fork_idx INTEGER)")
    m.raw.executemany(
        "INSERT INTO temp.v3_forks VALUES (?, ?, ?)",
        ((r[0], r[3], r[4]) for r in rows if r[3] is not None or r[4] is not None),
    )
    m.sessions = len(rows)


@step("v3→v4: turns and their blocks")
def turns_from_v3(m: Migration) -> None:
    m.tick()
    for turns, recovered, rows_read in m.turns_in.turns(m.raw, "v3_turns", "v3_sessions"):
        m.turns += turns
        m.recovered += recovered
        m.rows_written += rows_read
        m.tick()


@step("v3→v4: forks point at the parent's turn")
def fork_links(m: Migration) -> None:
    # fork_idx is "the idx of the parent's last turn copied into the fork" (point 4). If
    # that turn was deleted later, the fork point is the parent's last turn before it.
    m.raw.execute(
        "UPDATE sessions SET forked_from_turn_id = (SELECT u.id FROM turns u "
        "WHERE u.session_id = f.parent_id AND u.seq <= f.fork_idx ORDER BY u.seq DESC LIMIT 1) "
        "FROM temp.v3_forks f WHERE f.session_id = sessions.id AND f.fork_idx IS NOT NULL"
    )
    # Nothing is lost: a fork point no turn stands for exactly (parent deleted, or its
    # turn at fork_idx deleted) is kept in meta. parent_session_id keeps a deleted
    # parent's id, so the app can say "fork of a deleted session".
    m.raw.execute(
        f"UPDATE sessions SET meta = json_set(meta, '$.{FORK_IDX_KEY}', f.fork_idx) "
        "FROM temp.v3_forks f WHERE f.session_id = sessions.id AND f.fork_idx IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM turns u WHERE u.session_id = f.parent_id "
        "AND u.seq = f.fork_idx)"
    )


@step("v3→v4: each turn's parent and the path shown")
def tree_rows(m: Migration) -> None:
    # A v3 session is one line of turns: each below the one before it, all on the path
    # (parley.core.store.upgrade.tree). A v3 fork stays a fork: a session of its own.
    tree.fill(m.con)


@step("v3→v4: settings and app state")
def settings_and_state(m: Migration) -> None:
    settings: dict[str, Any] = {}
    state: dict[str, Any] = {}
    for key, raw in m.raw.execute("SELECT key, value FROM v3_app_state ORDER BY key"):
        value = _json_or_text(raw)
        if key == "settings":
            if isinstance(value, dict):
                settings.update(settings_from_v3(value))
            else:
                state[V3_SETTINGS.name] = raw
        else:
            state[STATE_KEYS.get(key, key)] = value
    for table, values in (("settings", settings), ("app_state", state)):
        m.raw.executemany(
            f"INSERT OR REPLACE INTO {table} (key, value) VALUES (?, ?)",
            ((k, _encode(v)) for k, v in values.items()),
        )


@step("search index built")
def search_index(m: Migration) -> None:
    # The indexer thread indexed the rows the triggers of parley.core.store.schema would have
    # written (point 9; same row expressions): copy its index in, then add the triggers.
    m.turns_in.copy_index(m.raw, m.tick)
    for ddl in schema.TRIGGER_DDL:
        m.raw.execute(ddl)
    m.raw.execute(_ATTACHMENT_LINK_DDL)
    m.tick()


@step("v3 tables dropped")
def drop_legacy(m: Migration) -> None:
    # Last: until then every new page is appended to the file. A page the drop frees
    # still holds v3 data in the committed file, so writing over it in this transaction
    # would first copy it to the rollback journal, and the journal would be synced
    # again at each cache spill (measured: the index copy 3-4 s instead of ~1.5 s).
    # The freed pages stay in the file as free space that later writes reuse.
    for table in ("turns", "sessions", "app_state"):
        m.raw.execute(f"DROP TABLE {LEGACY_PREFIX}{table}")
    m.raw.execute("DROP TABLE temp.v3_forks")


@step("user_version = 4")
def stamp(m: Migration) -> None:
    # Last, inside the transaction: the file reads as v4 only once all of it is there.
    m.raw.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")


# --- sessions, settings: pure functions ------------------------------------------------


def _json_or_text(raw: str | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def session_row(row: tuple[Any, ...], space_ids: dict[str, str]) -> dict[str, Any]:
    """Map one v3 ``sessions`` row to the v4 column values (point 2).

    Known ``meta`` keys of the expected JSON type become columns; every other
    key (and a known key of an unexpected type) stays in ``meta``. A ``meta``
    that is not a JSON object is kept as text under :data:`UNREADABLE_META_KEY`.
    A title of '' is "never titled", like NULL.
    """
    sid, title, space, parent, _fork_idx, model, created, updated, meta_raw = row
    meta: dict[str, Any] = {}
    parsed = _json_or_text(meta_raw)
    if isinstance(parsed, dict):
        meta = dict(parsed)
    elif meta_raw is not None:
        meta = {UNREADABLE_META_KEY: meta_raw}
    out: dict[str, Any] = {
        "id": sid,
        "space_id": space_ids.get(space, schema.DEFAULT_SPACE_ID) if space else
        schema.DEFAULT_SPACE_ID,
        "title": title if title else None,
        "title_source": None,
        "parent": parent,
        "model": model,
        "system_prompt": None,
        "pinned": 0,
        "archived": 0,
        "cost_usd": 0.0,
        "created_at": created,
        "updated_at": updated,
        **{column: 0 for column in _USAGE.values()},
    }
    for key, column in (("pinned", "pinned"), ("archived", "archived")):
        if isinstance(meta.get(key), bool):
            out[column] = int(meta.pop(key))
    if out["title"] is not None and meta.get("titleSource") in ("auto", "user"):
        out["title_source"] = meta.pop("titleSource")
    if isinstance(meta.get("systemPrompt"), str):
        out["system_prompt"] = meta.pop("systemPrompt")
    usage = meta.get("usage")
    if isinstance(usage, dict):
        rest = dict(usage)
        for key, column in _USAGE.items():
            if isinstance(rest.get(key), int) and not isinstance(rest[key], bool):
                out[column] = rest.pop(key)
        if _number(rest.get("costUsd")):
            out["cost_usd"] = float(rest.pop("costUsd"))
        if rest:
            meta["usage"] = rest
        else:
            del meta["usage"]
    out["meta"] = _encode(meta)
    return out


def settings_from_v3(v3: dict[str, Any]) -> dict[str, Any]:
    """Map v3 ``app_state['settings']`` to v4 ``settings`` rows ``{key: value}`` (point 2)."""
    out: dict[str, Any] = {}
    for key, value in v3.items():
        if key == "autoCompact" and isinstance(value, dict):
            for sub, sub_value in value.items():
                out[AUTO_COMPACT_KEYS.get(sub, f"autoCompact.{sub}")] = sub_value
        else:
            out[SETTINGS_KEYS.get(key, key)] = value
    return out
