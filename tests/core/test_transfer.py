"""Copying every chat from a sessions.db file to PostgreSQL and back (real file, real server)."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from parley.core.cli.copy_to import copy_only
from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    Turn,
    Usage,
)
from parley.core.store.errors import CopyMismatch, DestinationNotEmpty
from parley.core.store.imports import NewChat
from parley.core.store.postgres.store import PgStore
from parley.core.store.queued import NewFile
from parley.core.store.store import Store
from parley.core.store.transfer import copy_store
from tests.core import tree_rows
from tests.core.images import b64, png
from tests.core.rawdb import raw_rows


def fill(db: Store) -> dict[str, str]:
    """A store with some of everything: spaces, chats, a fork, branches (an edited
    question with three answers, the path shown on the middle one), a compaction, an
    attached picture, usage, settings and window state."""
    work = db.create_space("Work", system_prompt="Be brief.")
    db.add_space_document(work.id, "notes.txt", b"The purple elephant ships in March.")
    a = db.create_session(title="Trip to Lisbon")
    t1 = db.append_turn(a.id, Turn("user", [TextBlock("Where is the best café?"),
                                            ImageBlock("image/png", b64(png()))]))
    t2 = db.append_turn(a.id, Turn("assistant", [TextBlock("Try the pastéis place.")],
                                   model="anthropic:claude", usage=Usage(12, 30)))
    db.append_turn(a.id, Turn("user", [TextBlock("And the tram?")]))
    db.add_usage(a.id, Usage(12, 30, 0, 0, 0.25))
    summary = Turn("user", [CompactSummaryBlock("we talked about Lisbon", None, None, None, 0)])
    db.record_compaction(a.id, summary, first_turn_id=t1.id, last_turn_id=t2.id,
                         replaced_count=2, reason="manual")
    fork = db.fork(a.id, t2.id, title="Lisbon, another way")
    db.branch_before(a.id, t1.id)  # the first question edited, answered three times
    edited = db.append_turn(a.id, Turn("user", [TextBlock("Where is the best bakery?")]))
    first = db.append_turn(a.id, Turn("assistant", [TextBlock("Manteigaria.")]))
    db.branch_before(a.id, first.id)
    second = db.append_turn(a.id, Turn("assistant", [TextBlock("Pastéis de Belém.")]))
    db.append_turn(a.id, Turn("user", [TextBlock("Open on Sundays?")]))
    db.branch_before(a.id, second.id)
    db.append_turn(a.id, Turn("assistant", [TextBlock("Confeitaria Nacional.")]))
    db.show_branch(a.id, second.id)
    assert edited.id in tree_rows.path(db, a.id)
    assert [p.total for p in db.branches(a.id).points.values()] == [2, 3]
    b = db.create_session(title="Budget", space_id=work.id)
    db.append_turn(b.id, Turn("user", [TextBlock("quarterly numbers please")]))
    db.pin_session(b.id, True)
    db.set_setting("theme", "dark")
    db.set_state(f"draft:{b.id}", "half a sentence")
    db.queue_message(b.id, "queued while the reply streamed")
    db.queue_message(b.id, "and this after it", [NewFile("dot.png", "image/png", png())])
    return {"a": a.id, "b": b.id, "fork": fork.id, "work": work.id}


def snapshot(db: Store) -> dict[str, object]:
    """Everything a person sees, through the store's API (ids, titles, turns, files…)."""
    chats = db.list_sessions(include_archived=True, limit=10_000)
    return {
        "spaces": [(s.id, s.name, s.position, s.system_prompt) for s in db.list_spaces()],
        "chats": [(s.id, s.title, s.space_id, s.parent_session_id, s.pinned, s.usage,
                   s.created_at, s.meta, s.turn_count) for s in chats],
        "turns": {s.id: [(t.id, t.role, t.blocks, t.model, t.usage, t.created_at)
                         for t in db.get_turns(s.id)] for s in chats},
        "tree": {s.id: (tree_rows.links(db, s.id), tree_rows.path(db, s.id), db.branches(s.id))
                 for s in chats},
        "compactions": {s.id: [(c.id, c.summary_turn_id, c.replaced_count)
                               for c in db.list_compactions(s.id)] for s in chats},
        "files": db.attachment_usage(),
        "documents": [(d.id, d.space_id, d.name, d.sha256, d.pages, d.tokens,
                       db.space_document_pages(d.id))
                      for s in db.list_spaces() for d in db.space_documents(s.id)],
        "settings": db.all_settings(),
        "queued": {s.id: db.queued_messages(s.id) for s in chats},
    }


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_copies_to_postgresql_and_back_unchanged(tmp_path, postgres_url):
    path = tmp_path / "sessions.db"
    src = Store.open(path)
    ids = fill(src)
    before = snapshot(src)
    src.close()
    original = file_hash(path)

    src, pg = Store.open(path), PgStore.open_url(postgres_url)
    seen: list[tuple[int, int]] = []
    try:
        report = copy_store(src, pg, lambda done, total: seen.append((done, total)))
        assert snapshot(pg) == before
        assert pg.get_state(f"draft:{ids['b']}") == "half a sentence"
        assert [h.session_id for h in pg.search("pastéis")][:1] == [ids["a"]]
        assert {h.session_id for h in pg.search("quarterly")} == {ids["b"]}
        assert [h.page for h in pg.search_space_documents(ids["work"], "elephant")] == [1]
    finally:
        src.close()
    assert file_hash(path) == original  # the source was only read
    assert report.counts["sessions"] == 3 and report.counts["attachments"] == 1
    assert seen[-1][0] == seen[-1][1] == sum(report.counts.values())

    back_path = tmp_path / "back" / "sessions.db"
    back = Store.open(back_path)
    try:
        again = copy_store(pg, back)
        assert again.turns_digest == report.turns_digest
        assert snapshot(back) == before
        assert {h.session_id for h in back.search("quarterly")} == {ids["b"]}
        assert [h.page for h in back.search_space_documents(ids["work"], "elephant")] == [1]
        assert back.attachment_data(next(iter(
            b.attachment_id for t in back.get_tree(ids["a"]) for b in t.turn.blocks
            if isinstance(b, ImageBlock)))) == png()
    finally:
        back.close()
        pg.close()


def test_a_destination_with_chats_is_left_alone(tmp_path, postgres_url):
    src = Store.open(tmp_path / "sessions.db")
    pg = PgStore.open_url(postgres_url)
    try:
        fill(src)
        mine = pg.create_session(title="Already here")
        with pytest.raises(DestinationNotEmpty, match="already holds 1 chat;"):
            copy_store(src, pg)
        assert [s.id for s in pg.list_sessions()] == [mine.id]
    finally:
        src.close()
        pg.close()


def test_a_copy_that_differs_is_undone(tmp_path, postgres_url):
    src = Store.open(tmp_path / "sessions.db")
    pg = PgStore.open_url(postgres_url)
    try:
        fill(src)
        # The server changes one message as it is written: the check must catch it.
        raw_rows(pg, "CREATE FUNCTION garble() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "NEW.blocks := replace(NEW.blocks, 'tram', 'bus'); RETURN NEW; END $$")
        raw_rows(pg, "CREATE TRIGGER garble BEFORE INSERT ON turns FOR EACH ROW "
                     "EXECUTE FUNCTION garble()")
        with pytest.raises(CopyMismatch, match="the messages differ"):
            copy_store(src, pg)
        assert pg.list_sessions() == []
        assert [s.name for s in pg.list_spaces()] == ["General"]
    finally:
        src.close()
        pg.close()


def test_a_copy_whose_branches_differ_is_undone(tmp_path, postgres_url):
    src = Store.open(tmp_path / "sessions.db")
    pg = PgStore.open_url(postgres_url)
    try:
        fill(src)
        # The server hangs every answer under the first message: the check must catch it.
        raw_rows(pg, "CREATE FUNCTION flatten() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "IF NEW.parent_id IS NOT NULL THEN NEW.parent_id := (SELECT turn_id FROM "
                     "turn_links WHERE session_id = NEW.session_id AND parent_id IS NULL "
                     "LIMIT 1); END IF; RETURN NEW; END $$")
        raw_rows(pg, "CREATE TRIGGER flatten BEFORE INSERT ON turn_links FOR EACH ROW "
                     "EXECUTE FUNCTION flatten()")
        with pytest.raises(CopyMismatch, match="the messages differ"):
            copy_store(src, pg)
        assert pg.list_sessions() == []
    finally:
        src.close()
        pg.close()


@pytest.mark.slow  # ~20 s
def test_ten_thousand_chats_copy_to_postgresql_turn_for_turn(tmp_path, postgres_url):
    src = Store.open(tmp_path / "sessions.db")
    pg = PgStore.open_url(postgres_url)
    try:
        chats = [NewChat(f"Chat {i}", [Turn("user", [TextBlock(f"question number {i}")]),
                                       Turn("assistant", [TextBlock(f"answer {i} ✓")])],
                         source="test", source_id=str(i)) for i in range(10_000)]
        src.import_chats(chats)
        report = copy_store(src, pg)
        assert report.counts["sessions"] == 10_000 and report.counts["turns"] == 20_000
        sql = ("SELECT id, session_id, seq, role, blocks, aborted, model, usage, created_at "
               "FROM turns ORDER BY id")
        assert raw_rows(pg, sql) == raw_rows(src, sql)  # every turn, compared
        assert pg.search("\"question number 9999\"")[0].session_id == \
            src.search("\"question number 9999\"")[0].session_id
    finally:
        src.close()
        pg.close()


def test_the_command_line_copies_and_says_what(tmp_path, postgres_url):
    home = tmp_path / "home"
    with Store.open(home / "sessions.db") as db:
        fill(db)
    out, err = io.StringIO(), io.StringIO()
    assert copy_only(postgres_url, home, out=out, err=err) == 0
    # as the list shows them (the trial: "Copied 14 chats" for 8 in the list and a fork)
    assert out.getvalue().startswith("Copied 2 chats (with 1 fork), 12 messages, "
                                     "1 attached file, 2 spaces, "
                                     "1 compaction to parley@127.0.0.1:")
    assert "was not changed" in out.getvalue()
    assert "100%" in err.getvalue()
    assert "parley-test-password" not in out.getvalue()

    # and back, from the database to a new file
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "copy" / "sessions.db"
    assert copy_only(str(target), tmp_path / "other-home", database=postgres_url,
                     out=out, err=err) == 0
    assert out.getvalue().startswith("Copied 2 chats (with 1 fork), ")
    with Store.open(target) as copy, Store.open(home / "sessions.db") as original:
        assert snapshot(copy) == snapshot(original)

    # a second copy into the same place is refused, with the reason
    out, err = io.StringIO(), io.StringIO()
    assert copy_only(postgres_url, home, out=out, err=err) == 2
    assert "already holds 3 chats" in err.getvalue()
    assert out.getvalue() == ""


def test_nothing_to_copy_without_a_sessions_file(tmp_path):
    err = io.StringIO()
    assert copy_only(str(tmp_path / "x.db"), tmp_path / "empty-home", err=err) == 2
    assert "Nothing to copy" in err.getvalue()
    assert not (tmp_path / "empty-home").exists()


def test_the_command_line_copies_from_the_database_chosen_in_settings(tmp_path, postgres_url,
                                                                      monkeypatch):
    """--copy-to copies the chats the window shows: with a database chosen in Settings →
    Storage (and no --database), that database's, not an old sessions.db's."""
    from parley.core.store.backends import DATABASE_URL_ENV, open_store, save_database_choice

    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    home = tmp_path / "home"
    with Store.open(home / "sessions.db") as old:
        old.create_session(title="left in the file")
    pg = open_store(postgres_url)
    try:
        pg.create_session(title="in the database")
    finally:
        pg.close()
    save_database_choice(home, postgres_url)
    target = tmp_path / "copy.db"
    out, err = io.StringIO(), io.StringIO()
    assert copy_only(str(target), home, out=out, err=err) == 0, err.getvalue()
    with Store.open(target) as copy:
        assert [s.title for s in copy.list_sessions()] == ["in the database"]
