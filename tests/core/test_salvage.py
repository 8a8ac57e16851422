"""Salvaging a damaged sessions.db with SQLite's ``.recover``, merged with the newest backup.

SQLite only: the salvage of a damaged file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.recovery.damaged_file import set_aside
from parley.core.store import Store
from parley.core.store.queued import NewFile
from parley.core.store.sqlite import backups as B
from parley.core.store.sqlite import salvage as S
from tests.core.damaged import overwrite_pages, pages_of
from tests.core.images import make_pdf

PDF = make_pdf(["queued with the second message"])


def _chat(store: Store, title: str, n: int, start: int = 0, sid: str | None = None) -> str:
    if sid is None:
        sid = store.create_session(title=title).id
    for i in range(start, start + n):
        role = "user" if i % 2 == 0 else "assistant"
        store.append_turn(sid, Turn(role, [TextBlock(f"{title} {i} " + "z" * 700)]))
    return sid


def _all(path: Path) -> dict[str, Turn]:
    with Store.open(path) as store:
        return {t.id: t for s in store.list_sessions(include_archived=True, limit=1000)
                for t in store.get_turns(s.id)}


def test_salvage_merged_with_the_backup_brings_back_every_turn(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        old = _chat(store, "old", 120)
    backup = B.make_backup(db).path
    with Store.open(db) as store:
        _chat(store, "old", 30, start=120, sid=old)  # after the backup
        _chat(store, "new", 40)
    everything = _all(db)
    # Garbage over the pages of the oldest turns (all in the backup), in place.
    overwrite_pages(db, pages_of(db, "turns")[:6])
    aside = set_aside(db)
    assert aside is not None

    report = S.salvage(aside, db, backup)

    got = _all(db)
    assert got == everything  # old turns from the backup, newer ones salvaged: all equal
    assert report.turns == len(everything) == 190 and report.chats == 2
    assert 0 < report.from_backup < 120 and report.salvaged_turns == 190 - report.from_backup
    with Store.open(db) as store:  # a normal, searchable, writable file
        assert any(h.session_id == old for h in store.search("old"))
        store.append_turn(old, Turn("user", [TextBlock("writable again")]))
    assert aside.exists()  # the damaged file is kept


def test_salvage_without_a_backup_keeps_what_is_readable(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        _chat(store, "only", 150)
        space = store.create_space("Research")
        store.add_space_document(space.id, "notes.txt", b"The purple elephant ships in March.")
        queued_in = store.create_session(title="queued").id
        store.queue_message(queued_in, "first after the reply")
        store.queue_message(queued_in, "second after the reply",
                            [NewFile("paper.pdf", "application/pdf", PDF)])
    everything = _all(db)
    overwrite_pages(db, pages_of(db, "turns")[3:5])
    aside = set_aside(db)
    assert aside is not None
    report = S.salvage(aside, db)
    got = _all(db)
    assert report.backup is None and report.from_backup == 0
    assert 100 < len(got) < 150  # two pages of turns lost, the rest back
    assert all(got[k] == everything[k] for k in got)
    with Store.open(db) as store:  # the space's documents come back, searchable
        (hit,) = store.search_space_documents(space.id, "elephant")
        assert (hit.name, hit.page) == ("notes.txt", 1)
        assert [m.text for m in store.queued_messages(queued_in)] == [  # the queue, in order
            "first after the reply", "second after the reply"]
        (kept,) = store.queued_messages(queued_in)[1].files  # with its file
        assert (kept.name, store.queued_file(kept.sha256)) == ("paper.pdf", PDF)


def test_turns_of_a_chat_whose_row_was_lost_come_back_as_a_recovered_chat(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = _chat(store, "lost row", 20)
    overwrite_pages(db, pages_of(db, "sessions"))  # the chats' table, not the turns
    aside = set_aside(db)
    assert aside is not None
    S.salvage(aside, db)
    with Store.open(db) as store:
        chat = store.get_session(sid)
        assert chat.title == S.RECOVERED_TITLE
        assert len(store.get_turns(sid)) == 20


def test_a_salvage_that_reads_nothing_puts_the_damaged_file_back(tmp_path: Path) -> None:
    from parley.core.recovery.damaged_file import salvage_into

    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        _chat(store, "gone", 10)
    overwrite_pages(db, [1])  # the header and the list of tables
    damaged = db.read_bytes()
    try:
        salvage_into(db, None)
    except S.SalvageError as exc:
        assert "could not read" in exc.message or "cannot open" in exc.message
    else:
        raise AssertionError("a file without its first page salvaged")
    assert db.read_bytes() == damaged  # back where it was, as it was
    assert not [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def test_the_shells_recover_is_used_where_it_works(tmp_path: Path) -> None:
    if not S.cli_recovers():
        pytest.skip("this sqlite3 shell's .recover does not work (no sqlite_dbpage)")
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = _chat(store, "shell", 120)
    overwrite_pages(db, pages_of(db, "turns")[3:5])
    aside = set_aside(db)
    assert aside is not None
    S.salvage(aside, db)
    with Store.open(db) as store:
        assert 100 < len(store.get_turns(sid)) < 120


def test_a_salvage_counts_the_messages_it_could_not_bring_back(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        old = _chat(store, "old", 120)
    backup = B.make_backup(db).path
    with Store.open(db) as store:
        _chat(store, "old", 60, start=120, sid=old)  # after the backup: only in the file
    everything = _all(db)
    # Garbage over the pages of old turns (the backup holds them) and of the newest
    # ones (it does not): only the newest are lost; the id index still lists them.
    pages = pages_of(db, "turns")
    overwrite_pages(db, pages[:3] + pages[-3:-1])
    aside = set_aside(db)
    assert aside is not None

    report = S.salvage(aside, db, backup)

    lost = len(everything) - len(_all(db))
    assert lost > 0 and report.lost_turns == lost and report.lost_chats == 0
    without = tmp_path / "without.db"
    report = S.salvage(aside, without)  # no backup: every turn on those pages is lost
    with Store.open(without) as store:
        kept = len(store.get_turns(old))
    assert report.lost_turns == 180 - kept > lost


def test_a_damaged_list_of_tables_is_named_so_wherever_it_is(tmp_path: Path) -> None:
    """Trial 20: damage in the middle of the file, on the list of tables' own pages (not
    the first), was said to be "its first pages are damaged"."""
    from parley.core.recovery.damaged_file import salvage_into

    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        _chat(store, "gone", 10)
    schema_pages = pages_of(db, "sqlite_schema")
    assert schema_pages and 1 not in schema_pages
    overwrite_pages(db, schema_pages)
    with pytest.raises(S.SalvageError) as info:
        salvage_into(db, None)
    assert info.value.message == ("SQLite could not read anything of sessions.db: its list "
                                  "of tables is damaged, so no table can be found in it.")
    assert "first pages" not in info.value.message
