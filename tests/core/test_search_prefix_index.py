"""Prefix search with and without FTS5's prefix index.

v4 files made before ``schema.SEARCH_DDL`` dropped ``prefix='3'`` keep that
index; files made now have none. Both must keep working the same way (the
table definition lives in each file), and search picks the shortest prefix it
can serve cheaply: 3 characters where the 3-character prefix index exists,
4 elsewhere (``parley.core.store.search.min_prefix_chars``).

SQLite only (FTS5's index options in the file), but for the 4-letter rule, which
PostgreSQL follows too.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store, schema
from parley.core.store.query import MIN_PREFIX_CHARS
from parley.core.store.search import min_prefix_chars
from parley.core.store.textindex import TOKENIZER

#: The full-text table as builds before this change created it.
OLD_SEARCH_TABLE = (
    "CREATE VIRTUAL TABLE search_fts USING fts5(title, body, scope, content='', "
    f"prefix='3', tokenize=\"{TOKENIZER}\")"
)


def _fill(store: Store) -> dict[str, str]:
    ids = {}
    for key, text in (("migration", "The migration finished overnight."),
                      ("mig", "A mig welder is a tool."),
                      ("other", "Nothing about that here.")):
        s = store.create_session(title=f"chat {key}")
        store.append_turn(s.id, Turn("user", [TextBlock(text)]))
        ids[key] = s.id
    return ids


def _found(store: Store, query: str) -> set[str]:
    return {h.session_id for h in store.search(query) if h.turn_id is not None}


def _search_table_sql(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return str(con.execute("SELECT sql FROM sqlite_master WHERE name = 'search_fts'")
                   .fetchone()[0])
    finally:
        con.close()


def _made_by_an_older_build(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuild the file's index with the old table definition (prefix='3')."""
    monkeypatch.setattr(schema, "SEARCH_DDL", [OLD_SEARCH_TABLE, *schema.SEARCH_DDL[1:]])
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("BEGIN")
        schema.rebuild_search_index(con)
        con.execute("COMMIT")
    finally:
        con.close()
    monkeypatch.undo()


def _fts_integrity(path: Path) -> None:
    con = sqlite3.connect(path)
    try:
        con.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()


def test_a_prefix_needs_four_letters(any_db: Store) -> None:
    ids = _fill(any_db)  # on a new sessions.db file, and on PostgreSQL
    assert _found(any_db, "migr") == {ids["migration"]}  # typing "migr" finds "migration"
    assert _found(any_db, "migration") == {ids["migration"]}
    assert _found(any_db, "mig") == {ids["mig"]}  # 3 letters: the whole word only
    assert _found(any_db, "mig ") == {ids["mig"]}
    assert MIN_PREFIX_CHARS == 4


def test_new_files_have_no_prefix_index(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    Store.open(path).close()
    assert "prefix" not in _search_table_sql(path)


def test_files_of_older_builds_keep_their_prefix_index_and_3_letter_prefixes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        ids = _fill(store)
    _made_by_an_older_build(path, monkeypatch)
    assert "prefix='3'" in _search_table_sql(path)
    with Store.open(path) as store:  # opened as a current v4 file, nothing rebuilt
        assert _found(store, "mig") == {ids["mig"], ids["migration"]}
        assert _found(store, "mig ") == {ids["mig"]}
        assert _found(store, "migr") == {ids["migration"]}
        # Writes through the triggers keep that index right.
        s = store.create_session(title="later")
        store.append_turn(s.id, Turn("user", [TextBlock("migrating the rest")]))
        assert _found(store, "mig") == {ids["mig"], ids["migration"], s.id}
        store.delete_session(ids["migration"])
        assert _found(store, "migr") == {s.id}
    assert "prefix='3'" in _search_table_sql(path)
    _fts_integrity(path)


@pytest.mark.parametrize(
    ("prefix_option", "expected"),
    [("prefix='3'", 3), ("prefix = '2 3'", 2), ("prefix='2,3'", 2), ("prefix='2'", 4),
     ("prefix='5'", 4), ("", 4)],
)
def test_min_prefix_chars_reads_the_files_table_definition(
    tmp_path: Path, prefix_option: str, expected: int
) -> None:
    from sqlalchemy import create_engine

    path = tmp_path / "x.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as con:
        option = f"{prefix_option}, " if prefix_option else ""
        con.exec_driver_sql(f"CREATE VIRTUAL TABLE search_fts USING fts5(body, {option}"
                            "content='')")
        assert min_prefix_chars(con) == expected
    engine.dispose()
