"""The v4 schema of sessions.db: SQLAlchemy Core tables, the search index and its triggers.

Conventions: ids are opaque TEXT (32 hex chars from ``parley.core.content.new_id``);
times are INTEGER Unix epoch milliseconds, UTC; JSON columns hold compact JSON
text; booleans are INTEGER 0/1. ``sessions`` and ``turns`` also carry an
``INTEGER PRIMARY KEY`` (``n``): a stable rowid the contentless full-text index
maps to (a plain rowid could change on VACUUM).

Search rows (``search_fts``, columns ``title``, ``body``, ``scope``): a turn's
rowid is ``turns.n`` (title ''); a session title's is
:data:`TITLE_ROWID_BASE` + ``sessions.n`` (body ''), so titles sort after every
turn and a "newest turns" rowid range still includes them. ``scope`` holds one
token, :data:`SCOPE_MARK` + ``hex(session id)``, so a search can be limited to
one session inside FTS5. The mark is a private-use character no query can
contain (queries keep only letters, digits and marks), so user words never
match it and need no column filter (which would make FTS5 read position
lists: 60× slower on common words). The token is computed from the row
itself, so a turn deleted by the cascade of its session's deletion is removed
with the same values it was indexed with.

The full-text index is kept in step by triggers on ``turns`` and ``sessions``
that call the SQL functions of :mod:`parley.core.store.textindex` — so any writer
(the store, the v3 migration, the benchmark generator) keeps it right as long
as its connection has them registered (:func:`create_all` does that for its
connection; the store's engine does it for every connection).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Connection

from parley.core.content import now_ms
from parley.core.store import fork_index, path_count, textindex

SCHEMA_VERSION = 4
DEFAULT_SPACE_ID = "default"
DEFAULT_SPACE_NAME = "General"

metadata = MetaData()

#: INTEGER on SQLite (64-bit there; ``n`` stays the rowid), BIGINT on PostgreSQL
#: (times are epoch milliseconds, past 32 bits).
Int = Integer().with_variant(BigInteger(), "postgresql")

spaces = Table(
    "spaces",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("position", Int, nullable=False, server_default="0"),
    Column("system_prompt", Text),
    Column("default_model", Text),
    Column("created_at", Int, nullable=False),
    Column("meta", Text, nullable=False, server_default="{}"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("n", Int, primary_key=True),
    Column("id", Text, nullable=False, unique=True),
    Column("space_id", Text, ForeignKey("spaces.id"), nullable=False),
    Column("title", Text),
    Column("title_source", Text),
    # No foreign key: deleting a parent keeps its forks (they show "parent deleted").
    Column("parent_session_id", Text),
    Column("forked_from_turn_id", Text),
    Column("model", Text),
    Column("system_prompt", Text),
    Column("pinned", Int, nullable=False, server_default="0"),
    Column("archived", Int, nullable=False, server_default="0"),
    Column("input_tokens", Int, nullable=False, server_default="0"),
    Column("output_tokens", Int, nullable=False, server_default="0"),
    Column("cache_read_tokens", Int, nullable=False, server_default="0"),
    Column("cache_write_tokens", Int, nullable=False, server_default="0"),
    Column("cost_usd", Float, nullable=False, server_default="0"),
    Column("created_at", Int, nullable=False),
    Column("updated_at", Int, nullable=False),
    Column("end_reason", Text),
    Column("meta", Text, nullable=False, server_default="{}"),
    CheckConstraint("title_source IN ('auto', 'user')", name="title_source_kind"),
)
# The session list: WHERE [space_id = ?] AND archived = 0 ORDER BY pinned DESC,
# updated_at DESC, n DESC — served in index order (n is the rowid, in every index).
Index("sessions_by_updated", sessions.c.updated_at)
Index("sessions_list", sessions.c.archived, sessions.c.pinned, sessions.c.updated_at)
Index(
    "sessions_by_space",
    sessions.c.space_id,
    sessions.c.archived,
    sessions.c.pinned,
    sessions.c.updated_at,
)
Index("sessions_by_parent", sessions.c.parent_session_id)

turns = Table(
    "turns",
    metadata,
    Column("n", Int, primary_key=True),
    Column("id", Text, nullable=False, unique=True),
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("seq", Int, nullable=False),
    Column("role", Text, nullable=False),
    Column("blocks", Text, nullable=False),
    Column("aborted", Int, nullable=False, server_default="0"),
    Column("model", Text),
    Column("usage", Text),
    Column("created_at", Int, nullable=False),
    UniqueConstraint("session_id", "seq", name="turns_order"),
    CheckConstraint("role IN ('user', 'assistant')", name="turn_role"),
)

# The conversation tree (edits, regenerations and imported branches live in their
# session): each turn's parent, and the path the chat shows. ``turn_links`` holds one
# row per turn (``parent_id`` NULL for a first message: a session may have several,
# when its first message was edited); ``shown_at`` (epoch ms, strictly increasing per
# session) is when the path shown last passed through or ended at the turn, so a
# branch opened again follows the choices made below it last time
# (``parley.core.store.tree``). ``turn_path`` is the path shown, root first, by
# position (``pos`` 0, 1, …; positions only grow along it, gaps allowed): readers of
# "the chat" join it instead of reading every turn of the session. Narrow rows keyed
# by turn id: switching branches or editing rewrites these, never the turns.
turn_links = Table(
    "turn_links",
    metadata,
    Column("turn_id", Text, ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True),
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    # No foreign key: the store deletes a turn's branches with it (parley.core.store.tree).
    Column("parent_id", Text),
    Column("shown_at", Int, nullable=False, server_default="0"),
)
Index("turn_links_children", turn_links.c.session_id, turn_links.c.parent_id)

turn_path = Table(
    "turn_path",
    metadata,
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("pos", Int, nullable=False),
    Column("turn_id", Text, ForeignKey("turns.id", ondelete="CASCADE"), nullable=False),
    PrimaryKeyConstraint("session_id", "pos"),
    sqlite_with_rowid=False,
)
Index("turn_path_by_turn", turn_path.c.turn_id, unique=True)

#: Every schema object of the conversation tree (tables and indexes).
TREE_OBJECTS = frozenset({"turn_links", "turn_links_children", "turn_path", "turn_path_by_turn"})


compactions = Table(
    "compactions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("summary_turn_id", Text, nullable=False),
    Column("first_turn_id", Text),
    Column("last_turn_id", Text),
    Column("replaced_count", Int, nullable=False, server_default="0"),
    Column("dropped_count", Int, nullable=False, server_default="0"),
    Column("model", Text),
    Column("usage", Text),
    Column("reason", Text, nullable=False),
    Column("tokens_before", Int),
    Column("tokens_after", Int),
    Column("created_at", Int, nullable=False),
)
Index("compactions_by_session", compactions.c.session_id, compactions.c.created_at)
#: A summary turn's compaction row, found from the turn: a request finds its chat's latest
#: summary by walking the path back from its end (``parley.core.store.since_summary``),
#: not by reading every compaction the chat ever had.
COMPACTIONS_BY_SUMMARY = Index("compactions_by_summary", compactions.c.summary_turn_id)

#: The schema objects of the summary-turn index (added to files written before it).
COMPACTION_INDEX_OBJECTS = frozenset({"compactions_by_summary"})


def create_compaction_index(con: Connection) -> None:
    """Create ``compactions_by_summary`` where it is missing (idempotent; in the caller's
    transaction; both backends)."""
    COMPACTIONS_BY_SUMMARY.create(con, checkfirst=True)

settings = Table(
    "settings",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

app_state = Table(
    "app_state",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

# Attached files (images, PDFs), stored once by content: the sha256 of the
# bytes is the key, so the same file attached twice (or copied into a fork)
# is one row. A turn's blocks reference it as {"type": "image" | "document",
# "attachment": "<sha256>", ...} (parley.core.content); ``turn_attachments`` lists
# which turn (``turns.n``) references which file. Triggers keep that list in
# step with ``turns.blocks`` and delete a file when its last reference goes,
# in the same transaction (ATTACHMENT_DDL below).
attachments = Table(
    "attachments",
    metadata,
    Column("sha256", Text, primary_key=True),
    Column("media_type", Text, nullable=False),
    Column("size_bytes", Int, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", Int, nullable=False),
)

turn_attachments = Table(
    "turn_attachments",
    metadata,
    Column("turn_n", Int, nullable=False),
    # A turn never references a file that is not stored (checked by SQLite).
    Column("sha256", Text, ForeignKey("attachments.sha256"), nullable=False),
    PrimaryKeyConstraint("turn_n", "sha256"),
    sqlite_with_rowid=False,
)
Index("turn_attachments_by_sha", turn_attachments.c.sha256)

# Messages written while a reply streamed, waiting to be sent in their chat, in order
# (``position`` grows per session; gaps allowed). Saved when queued so a crash or a
# quit keeps them; a sent or taken-back message's row is deleted
# (``parley.core.store.queued``).
queued_messages = Table(
    "queued_messages",
    metadata,
    Column("id", Text, primary_key=True),
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("position", Int, nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", Int, nullable=False),
)
Index("queued_messages_by_session", queued_messages.c.session_id, queued_messages.c.position)

#: Every schema object of the queue of messages (table and index).
QUEUE_OBJECTS = frozenset({"queued_messages", "queued_messages_by_session"})


def create_queue_schema(con: Connection) -> None:
    """Create the queue of messages (:data:`QUEUE_OBJECTS`) where it is missing (idempotent;
    in the caller's transaction; both backends)."""
    queued_messages.create(con, checkfirst=True)  # with its index


# The files attached to a queued message, in order: their bytes are ``attachments`` rows
# (by sha256, shared with the turns that use the same file). A file a queued message
# holds is never released while it does (``attachments_keep_queued``), and a file the
# last queued message lets go of goes too unless a turn uses it (``queued_files_release``).
queued_files = Table(
    "queued_files",
    metadata,
    Column("queued_id", Text, ForeignKey("queued_messages.id", ondelete="CASCADE"),
           nullable=False),
    Column("position", Int, nullable=False),
    Column("name", Text, nullable=False),
    Column("media_type", Text, nullable=False),
    Column("sha256", Text, ForeignKey("attachments.sha256"), nullable=False),
    PrimaryKeyConstraint("queued_id", "position"),
)
Index("queued_files_by_sha", queued_files.c.sha256)

QUEUED_FILES_DDL = [
    "CREATE TRIGGER attachments_keep_queued BEFORE DELETE ON attachments "
    "WHEN EXISTS (SELECT 1 FROM queued_files WHERE sha256 = old.sha256) "
    "BEGIN SELECT RAISE(IGNORE); END",
    "CREATE TRIGGER queued_files_release AFTER DELETE ON queued_files BEGIN "
    "DELETE FROM attachments WHERE sha256 = old.sha256 "
    "AND NOT EXISTS (SELECT 1 FROM turn_attachments WHERE sha256 = old.sha256) "
    "AND NOT EXISTS (SELECT 1 FROM queued_files WHERE sha256 = old.sha256); END",
]
#: Every schema object of the files of queued messages (table, index, triggers).
QUEUED_FILE_OBJECTS = frozenset(
    {"queued_files", "queued_files_by_sha", "attachments_keep_queued", "queued_files_release"}
)


def create_queued_files_schema(con: Connection) -> None:
    """Create :data:`QUEUED_FILE_OBJECTS` where missing (idempotent; in the caller's
    transaction; a sessions.db file — PostgreSQL's triggers are ``postgres.sql``'s)."""
    queued_files.create(con, checkfirst=True)  # with its index
    names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
    for ddl in QUEUED_FILES_DDL:
        if ddl.split()[2] not in names:
            con.exec_driver_sql(ddl)


# Space documents (parley.core.store.space_documents): files a space gives to every chat
# in it. Their bytes are kept here, apart from ``attachments`` (whose rows go with the
# last turn referencing them); ``space_document_pages`` holds each one's text by page
# (page 1 for a text file), searched on SQLite through ``space_document_fts`` (an
# external-content FTS5 index kept by triggers), on PostgreSQL with ``to_tsvector``.
space_documents = Table(
    "space_documents",
    metadata,
    Column("id", Text, primary_key=True),
    Column("space_id", Text, ForeignKey("spaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("media_type", Text, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("size_bytes", Int, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("pages", Int, nullable=False),
    Column("tokens", Int, nullable=False),
    Column("position", Int, nullable=False, server_default="0"),
    Column("created_at", Int, nullable=False),
    Column("updated_at", Int, nullable=False),
)
Index("space_documents_by_space", space_documents.c.space_id, space_documents.c.position)

space_document_pages = Table(
    "space_document_pages",
    metadata,
    Column("n", Int, primary_key=True),
    Column(
        "document_id",
        Text,
        ForeignKey("space_documents.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("page", Int, nullable=False),
    Column("text", Text, nullable=False),
)
Index("space_document_pages_by_document", space_document_pages.c.document_id,
      space_document_pages.c.page)

SPACE_DOCUMENT_FTS_DDL = [
    "CREATE VIRTUAL TABLE space_document_fts USING fts5(text, content='space_document_pages', "
    "content_rowid='n', tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER space_document_pages_fts_insert AFTER INSERT ON space_document_pages BEGIN "
    "INSERT INTO space_document_fts(rowid, text) VALUES (new.n, new.text); END",
    "CREATE TRIGGER space_document_pages_fts_delete AFTER DELETE ON space_document_pages BEGIN "
    "INSERT INTO space_document_fts(space_document_fts, rowid, text) "
    "VALUES ('delete', old.n, old.text); END",
]
#: Every schema object of the space documents (tables, indexes, the index and its triggers).
SPACE_DOCUMENT_OBJECTS = frozenset(
    {
        "space_documents",
        "space_documents_by_space",
        "space_document_pages",
        "space_document_pages_by_document",
        "space_document_fts",
        "space_document_pages_fts_insert",
        "space_document_pages_fts_delete",
    }
)


def create_space_document_schema(con: Connection) -> None:
    """Create whatever of :data:`SPACE_DOCUMENT_OBJECTS` a file lacks (idempotent).

    Used by :func:`create_all` and by the addition that brings older v4 files up
    to date (:mod:`parley.core.store.upgrade.migrations`). On PostgreSQL only the
    two tables (and their indexes) are made: search reads ``to_tsvector`` there.
    Runs in the caller's transaction.
    """
    space_documents.create(con, checkfirst=True)
    space_document_pages.create(con, checkfirst=True)
    if con.dialect.name != "sqlite":
        return
    names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
    for ddl in SPACE_DOCUMENT_FTS_DDL:
        name = ddl.split()[3 if ddl.startswith("CREATE VIRTUAL") else 2]
        if name not in names:
            con.exec_driver_sql(ddl)


#: Tables whose presence marks a file as Parley v4.
V4_TABLES = frozenset({"spaces", "sessions", "turns", "compactions", "settings", "app_state"})

TITLE_ROWID_BASE = 1 << 40

SEARCH_DDL = [
    # No prefix index. Files made by earlier builds have prefix='3' (a 3-character
    # prefix query then reads one doclist instead of merging those of every word
    # starting with it) and keep it: queries read either shape the same way. It was
    # dropped because it made the index 1.6-2.3 times larger and its build 1.4-3
    # times slower (measured on prose, code and the 1 GB v3 benchmark file, whose
    # upgrade missed its 30 s budget on that alone); search therefore treats only
    # words of 4+ characters as prefixes on files without it (4-character prefixes
    # never used it: parley.core.store.search.min_prefix_chars).
    f"CREATE VIRTUAL TABLE search_fts USING fts5(title, body, scope, content='', "
    f"tokenize=\"{textindex.TOKENIZER}\")",
    # Title matches weigh more than body matches; the scope token does not count.
    "INSERT INTO search_fts(search_fts, rank) VALUES ('rank', 'bm25(4.0, 1.0, 0.0)')",
    # No merging inside the transaction that saves a turn: left to FTS5, it
    # cascades every 4**k writes into a ~30 ms merge, past the 5 ms budget.
    # ``Store.maintain`` merges in idle time instead (AsyncStore schedules it);
    # crisismerge bounds the segments of a level if that never runs.
    "INSERT INTO search_fts(search_fts, rank) VALUES ('automerge', 0)",
    "INSERT INTO search_fts(search_fts, rank) VALUES ('crisismerge', 16)",
]
_T = TITLE_ROWID_BASE

SCOPE_MARK = "\U000f0000"
_MARK_SQL = f"char({ord(SCOPE_MARK)})"
_TURN_ROW = "{0}.n, '', parley_turn_text({0}.blocks), " + _MARK_SQL + " || hex({0}.session_id)"
_TITLE_ROW = f"{_T} + {{0}}.n, parley_title_text({{0}}.title), '', {_MARK_SQL} || hex({{0}}.id)"
#: The values (rowid, title, body, scope) a turn row (``{0}`` = its alias) and a
#: session row are indexed with; for bulk loads that fill ``search_fts`` themselves.
TURN_SEARCH_ROW = _TURN_ROW
TITLE_SEARCH_ROW = _TITLE_ROW
_ADD = "INSERT INTO search_fts(rowid, title, body, scope) VALUES ({});"
_DEL = "INSERT INTO search_fts(search_fts, rowid, title, body, scope) VALUES ('delete', {});"

TRIGGER_DDL = [
    "CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN "
    + _ADD.format(_TURN_ROW.format("new"))
    + " END",
    "CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN "
    + _DEL.format(_TURN_ROW.format("old"))
    + " END",
    "CREATE TRIGGER turns_fts_update AFTER UPDATE OF blocks, session_id, n ON turns BEGIN "
    + _DEL.format(_TURN_ROW.format("old"))
    + " "
    + _ADD.format(_TURN_ROW.format("new"))
    + " END",
    "CREATE TRIGGER sessions_fts_insert AFTER INSERT ON sessions BEGIN "
    + _ADD.format(_TITLE_ROW.format("new"))
    + " END",
    "CREATE TRIGGER sessions_fts_delete AFTER DELETE ON sessions BEGIN "
    + _DEL.format(_TITLE_ROW.format("old"))
    + " END",
    "CREATE TRIGGER sessions_fts_update AFTER UPDATE OF title, id, n ON sessions BEGIN "
    + _DEL.format(_TITLE_ROW.format("old"))
    + " "
    + _ADD.format(_TITLE_ROW.format("new"))
    + " END",
]
TRIGGER_NAMES = [
    "turns_fts_insert",
    "turns_fts_delete",
    "turns_fts_update",
    "sessions_fts_insert",
    "sessions_fts_delete",
    "sessions_fts_update",
]


# The sha256 values a blocks JSON array references: top-level image/document
# blocks and the image/document parts of tool_result blocks. JSON1, no Python
# function, so every writer's connection keeps the links right.
_REFS = (
    "SELECT json_extract(b.value, '$.attachment') AS sha FROM json_each({0}) AS b "
    "WHERE b.type = 'object' AND json_extract(b.value, '$.type') IN ('image', 'document') "
    "AND json_type(b.value, '$.attachment') = 'text' "
    "UNION SELECT json_extract(p.value, '$.attachment') FROM json_each({0}) AS b, "
    "json_each(b.value, '$.content') AS p "
    "WHERE b.type = 'object' AND json_extract(b.value, '$.type') = 'tool_result' "
    "AND p.type = 'object' AND json_extract(p.value, '$.type') IN ('image', 'document') "
    "AND json_type(p.value, '$.attachment') = 'text'"
)
# Only turns whose JSON holds the key pay for parsing it (text turns: one instr()).
_HAS_REF = "instr({0}.blocks, '\"attachment\"') > 0"
_LINK = "INSERT OR IGNORE INTO turn_attachments (turn_n, sha256) SELECT new.n, sha FROM ({0});"

ATTACHMENT_DDL = [
    f"CREATE TRIGGER turns_attachments_insert AFTER INSERT ON turns "
    f"WHEN {_HAS_REF.format('new')} BEGIN {_LINK.format(_REFS.format('new.blocks'))} END",
    # New links first, then the old ones dropped: a file kept by the new blocks
    # is never released in between.
    f"CREATE TRIGGER turns_attachments_update AFTER UPDATE OF blocks, n ON turns "
    f"WHEN {_HAS_REF.format('old')} OR {_HAS_REF.format('new')} BEGIN "
    f"{_LINK.format(_REFS.format('new.blocks'))} "
    f"DELETE FROM turn_attachments WHERE turn_n = old.n AND (old.n <> new.n OR sha256 NOT IN "
    f"(SELECT sha FROM ({_REFS.format('new.blocks')}))); END",
    f"CREATE TRIGGER turns_attachments_delete AFTER DELETE ON turns "
    f"WHEN {_HAS_REF.format('old')} BEGIN "
    "DELETE FROM turn_attachments WHERE turn_n = old.n; END",
    # The last reference gone (a session, a turn or a fork deleted): the file goes.
    "CREATE TRIGGER attachments_release AFTER DELETE ON turn_attachments BEGIN "
    "DELETE FROM attachments WHERE sha256 = old.sha256 AND NOT EXISTS "
    "(SELECT 1 FROM turn_attachments WHERE sha256 = old.sha256); END",
]
#: Every schema object of the attachment store (tables, index, triggers).
ATTACHMENT_OBJECTS = frozenset(
    {
        "attachments",
        "turn_attachments",
        "turn_attachments_by_sha",
        "turns_attachments_insert",
        "turns_attachments_update",
        "turns_attachments_delete",
        "attachments_release",
    }
)


def create_attachment_schema(con: Connection) -> None:
    """Create whatever of :data:`ATTACHMENT_OBJECTS` a file lacks (idempotent).

    Used by :func:`create_all` and by the migration step that adds the
    attachment store to v4 files created before it existed
    (:mod:`parley.core.store.upgrade.migrations`). Runs in the caller's transaction.
    """
    attachments.create(con, checkfirst=True)
    turn_attachments.create(con, checkfirst=True)  # with its index
    names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
    for ddl in ATTACHMENT_DDL:
        name = ddl.split()[2]
        if name not in names:
            con.exec_driver_sql(ddl)


def dbapi_connection(con: Connection) -> sqlite3.Connection:
    """Return the ``sqlite3`` connection under an SQLAlchemy ``Connection``."""
    raw: Any = con.connection.dbapi_connection
    return raw


def create_all(con: Connection) -> None:
    """Create the whole v4 schema on a connection, then set ``PRAGMA user_version = 4``.

    Creates every table, index, the full-text index ``search_fts`` and its
    triggers, the default space ("General", id :data:`DEFAULT_SPACE_ID`), and
    registers the SQL functions the triggers need on this connection. The
    version is set last, so a file whose creation was interrupted never reads
    as v4.

    It runs inside the caller's transaction when there is one (the v3
    migration calls it in its own, so the whole upgrade commits or not at
    all); otherwise SQLAlchemy's autobegin opens one and the caller commits.
    It never commits. ``journal_mode`` cannot change inside a transaction: the
    store sets WAL when it opens the file.

    Args:
        con: an SQLAlchemy ``Connection`` on the target file (pysqlite).

    Raises:
        sqlalchemy.exc.OperationalError: one of the v4 tables already exists
            (rename legacy tables first) — a bug in the caller, not a user error.
    """
    textindex.register_functions(dbapi_connection(con))
    metadata.create_all(con, checkfirst=False)
    for ddl in (SEARCH_DDL + TRIGGER_DDL + ATTACHMENT_DDL + SPACE_DOCUMENT_FTS_DDL
                + QUEUED_FILES_DDL):
        con.exec_driver_sql(ddl)
    fork_index.create(con)
    path_count.create(con)
    con.execute(
        spaces.insert().values(
            id=DEFAULT_SPACE_ID, name=DEFAULT_SPACE_NAME, position=0, created_at=now_ms()
        )
    )
    con.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")


def drop_search_triggers(con: Connection | sqlite3.Connection) -> None:
    """Drop the search-index triggers (bulk loads then call :func:`rebuild_search_index`)."""
    for name in TRIGGER_NAMES:
        _exec(con, f"DROP TRIGGER IF EXISTS {name}")


def rebuild_search_index(con: Connection | sqlite3.Connection) -> None:
    """Re-create the full-text index from every turn and title, and its triggers.

    Used after a bulk load (with :func:`drop_search_triggers` before it) and by
    a future migration step that changes :mod:`parley.core.store.textindex`. Runs in
    the caller's transaction; takes about a minute per GB of text.
    """
    if isinstance(con, Connection):
        textindex.register_functions(dbapi_connection(con))
    else:
        textindex.register_functions(con)
    drop_search_triggers(con)
    _exec(con, "DROP TABLE IF EXISTS search_fts")
    for ddl in SEARCH_DDL:
        _exec(con, ddl)
    _exec(
        con,
        "INSERT INTO search_fts(rowid, title, body, scope) "
        f"SELECT {_TURN_ROW.format('turns')} FROM turns ORDER BY n",
    )
    _exec(
        con,
        "INSERT INTO search_fts(rowid, title, body, scope) "
        f"SELECT {_TITLE_ROW.format('sessions')} FROM sessions ORDER BY n",
    )
    for ddl in TRIGGER_DDL:
        _exec(con, ddl)


def _exec(con: Connection | sqlite3.Connection, sql: str) -> None:
    if isinstance(con, Connection):
        con.exec_driver_sql(sql)
    else:
        con.execute(sql)
