"""Spaces and sessions through the Store API, on a real SQLite file."""

from __future__ import annotations

import pytest

from parley.core.content import TextBlock, Turn, Usage
from parley.core.store import UNCHANGED, Store
from parley.core.store.errors import (
    CannotDeleteDefaultSpace,
    EmptyName,
    InvalidSpaceOrder,
    SessionNotFound,
    SpaceNameTaken,
    SpaceNotFound,
)
from tests.core.rawdb import raw_rows


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


def say(db: Store, session_id: str, text: str, role: str = "user") -> Turn:
    return db.append_turn(session_id, Turn(role, [TextBlock(text)]))  # type: ignore[arg-type]


# --- spaces -----------------------------------------------------------------------------


def test_spaces_are_created_in_order_renamed_and_updated(db):
    work = db.create_space("Work", system_prompt="Be terse.", default_model="openai:gpt-5")
    home = db.create_space("home")
    assert [s.name for s in db.list_spaces()] == ["General", "Work", "home"]
    assert [s.position for s in db.list_spaces()] == [0, 1, 2]
    assert db.rename_space(home.id, "  Home  ").name == "Home"
    updated = db.update_space(work.id, default_model=None)
    assert (updated.system_prompt, updated.default_model) == ("Be terse.", None)
    same = db.update_space(work.id, system_prompt=UNCHANGED)
    assert same == updated
    assert db.update_space(work.id, system_prompt="New").system_prompt == "New"
    assert db.get_space(work.id).system_prompt == "New"


def test_a_space_name_is_kept_as_typed_but_not_shared(db):
    """Two spaces named alike (trimmed, any case) could not be told apart in the sidebar
    or the "Move to space" menu (trial 16, shot-68/69): refused, nothing changed."""
    work = db.create_space("Work")
    garden = db.create_space("Garden")
    for name in ("work", "  WORK ", "general"):
        with pytest.raises(SpaceNameTaken):
            db.create_space(name)
        with pytest.raises(SpaceNameTaken):
            db.rename_space(garden.id, name)
    assert [s.name for s in db.list_spaces()] == ["General", "Work", "Garden"]
    assert db.rename_space(work.id, "WORK").name == "WORK"  # its own name, another case


def test_bad_space_inputs(db):
    with pytest.raises(EmptyName):
        db.create_space("   ")
    with pytest.raises(SpaceNotFound):
        db.rename_space("nope", "x")
    with pytest.raises(SpaceNotFound):
        db.update_space("nope", system_prompt="x")
    with pytest.raises(SpaceNotFound):
        db.delete_space("nope")
    with pytest.raises(CannotDeleteDefaultSpace):
        db.delete_space(db.default_space().id)
    assert [s.name for s in db.list_spaces()] == ["General"]


def test_reorder_spaces_needs_every_space_once(db):
    a, b = db.create_space("A"), db.create_space("B")
    general = db.default_space()
    assert [s.id for s in db.reorder_spaces([b.id, general.id, a.id])] == [
        b.id,
        general.id,
        a.id,
    ]
    for bad in ([b.id, a.id], [b.id, a.id, a.id], [b.id, a.id, general.id, "x"]):
        with pytest.raises(InvalidSpaceOrder):
            db.reorder_spaces(bad)
    assert [s.name for s in db.list_spaces()] == ["B", "General", "A"]


def test_delete_space_moves_or_deletes_its_sessions(db):
    work = db.create_space("Work")
    kept = db.create_session(space_id=work.id, title="kept")
    say(db, kept.id, "still here")
    db.delete_space(work.id)
    assert db.get_session(kept.id).space_id == db.default_space().id
    assert db.search("still")[0].session_id == kept.id

    play = db.create_space("Play")
    gone = db.create_session(space_id=play.id, title="gone")
    say(db, gone.id, "vanishing words")
    db.delete_space(play.id, delete_sessions=True)
    with pytest.raises(SessionNotFound):
        db.get_session(gone.id)
    assert db.search("vanishing") == []
    assert [s.name for s in db.list_spaces()] == ["General"]


# --- sessions ---------------------------------------------------------------------------


def test_new_session_takes_space_defaults(db):
    work = db.create_space("Work", system_prompt="Be terse.", default_model="openai:gpt-5")
    s = db.create_session(space_id=work.id)
    assert (s.space_id, s.model, s.system_prompt) == (work.id, "openai:gpt-5", "Be terse.")
    assert (s.title, s.title_source, s.turn_count, s.usage) == (None, None, 0, Usage())
    own = db.create_session(space_id=work.id, model="anthropic:x", system_prompt="Own")
    assert (own.model, own.system_prompt) == ("anthropic:x", "Own")
    default = db.create_session(title="Hi")
    assert (default.space_id, default.title, default.title_source) == ("default", "Hi", "user")
    assert default.parent_session_id is None and default.parent_exists
    with pytest.raises(SpaceNotFound):
        db.create_session(space_id="missing")


def test_list_sessions_newest_activity_first_pinned_on_top(db):
    a = db.create_session(title="a")
    b = db.create_session(title="b")
    c = db.create_session(title="c")
    say(db, a.id, "bump a")  # a is now the most recent
    assert [s.title for s in db.list_sessions()] == ["a", "c", "b"]
    db.pin_session(b.id, True)
    assert [s.title for s in db.list_sessions()] == ["b", "a", "c"]
    assert [s.title for s in db.list_sessions(pinned_first=False)] == ["a", "c", "b"]
    db.archive_session(c.id, True)
    assert [s.title for s in db.list_sessions()] == ["b", "a"]
    assert [s.title for s in db.list_sessions(include_archived=True)] == ["b", "a", "c"]
    assert [s.title for s in db.list_sessions(limit=1, offset=1)] == ["a"]
    assert db.list_sessions()[1].turn_count == 1


def test_session_position_is_its_offset_in_its_spaces_list(db):
    work = db.create_space("Work")
    made = [db.create_session(title=f"c{n}") for n in range(6)]
    db.create_session(title="elsewhere", space_id=work.id)  # another space: not counted
    db.pin_session(made[1].id, True)
    db.archive_session(made[4].id, True)
    for archived in (False, True):
        listed = [s.id for s in db.list_sessions(space_id=made[0].space_id,
                                                 include_archived=archived)]
        for s in made:
            where = db.session_position(s.id, include_archived=archived)
            assert where == (listed.index(s.id) if s.id in listed else None)
    assert db.session_position(made[4].id) is None  # archived, not listed
    with pytest.raises(SessionNotFound):
        db.session_position("nope")


def test_list_sessions_by_space(db):
    work = db.create_space("Work")
    w = db.create_session(space_id=work.id, title="w")
    db.create_session(title="g")
    assert [s.id for s in db.list_sessions(space_id=work.id)] == [w.id]
    assert len(db.list_sessions()) == 2



def test_first_pages_read_each_spaces_first_page_at_once(db):
    work = db.create_space("Work")
    general = db.default_space().id
    for n in range(5):
        db.create_session(space_id=work.id, title=f"w{n}")
        db.create_session(title=f"g{n}")
    old = db.list_sessions(space_id=work.id)[-1]
    db.pin_session(old.id, True)
    db.archive_session(db.list_sessions(space_id=general)[0].id, True)
    pages = db.first_pages([general, work.id, "no-such-space"], limit=3)
    assert list(pages) == [general, work.id, "no-such-space"]
    for sid in (general, work.id):
        assert [s.id for s in pages[sid]] == [s.id for s in db.list_sessions(space_id=sid, limit=3)]
    assert pages[work.id][0].id == old.id  # pinned first
    assert pages["no-such-space"] == []
    archived = db.first_pages([general], limit=10, include_archived=True)[general]
    assert len(archived) == 5 and len(pages[general]) == 3

def test_titles_user_and_auto(db):
    s = db.create_session()
    assert db.set_auto_title(s.id, "Auto title") is True
    assert db.get_session(s.id).title_source == "auto"
    assert db.set_auto_title(s.id, "Better auto") is True
    renamed = db.rename_session(s.id, "  Mine\n ")
    assert (renamed.title, renamed.title_source) == ("Mine", "user")
    assert db.set_auto_title(s.id, "Never") is False
    assert db.get_session(s.id).title == "Mine"
    cleared = db.rename_session(s.id, "")
    assert (cleared.title, cleared.title_source) == (None, None)
    assert db.set_auto_title(s.id, "   ") is False
    with pytest.raises(ValueError):
        db.rename_session(s.id, "x", source="robot")  # type: ignore[arg-type]


def test_session_updates_do_not_reorder_the_list(db):
    a = db.create_session(title="a")
    db.create_session(title="b")
    before = db.get_session(a.id).updated_at
    db.rename_session(a.id, "renamed")
    db.set_session_model(a.id, "openai:gpt-5")
    db.set_session_system_prompt(a.id, "sys")
    db.set_end_reason(a.id, "end_turn")
    after = db.get_session(a.id)
    assert after.updated_at == before
    assert (after.model, after.system_prompt, after.end_reason) == (
        "openai:gpt-5",
        "sys",
        "end_turn",
    )


def test_move_pin_archive_delete(db):
    work = db.create_space("Work")
    s = db.create_session()
    assert [m.space_id for m in db.move_session(s.id, work.id)] == [work.id]
    assert db.pin_session(s.id, True).pinned
    assert db.archive_session(s.id, True).archived
    assert not db.archive_session(s.id, False).archived
    with pytest.raises(SpaceNotFound):
        db.move_session(s.id, "nope")
    say(db, s.id, "bye")
    db.delete_session(s.id)
    with pytest.raises(SessionNotFound):
        db.get_session(s.id)
    with pytest.raises(SessionNotFound):
        db.delete_session(s.id)


@pytest.mark.parametrize(
    "call",
    [
        lambda st: st.get_session("nope"),
        lambda st: st.rename_session("nope", "x"),
        lambda st: st.set_auto_title("nope", "x"),
        lambda st: st.move_session("nope", "default"),
        lambda st: st.pin_session("nope", True),
        lambda st: st.archive_session("nope", True),
        lambda st: st.delete_session("nope"),
        lambda st: st.set_session_model("nope", "m"),
        lambda st: st.set_end_reason("nope", "x"),
        lambda st: st.add_usage("nope", Usage(1)),
        lambda st: st.list_forks("nope"),
        lambda st: st.get_turns("nope"),
        lambda st: st.count_turns("nope"),
        lambda st: st.history("nope"),
        lambda st: st.append_turn("nope", Turn("user", [TextBlock("x")])),
        lambda st: st.upsert_turn("nope", Turn("user", [TextBlock("x")])),
        lambda st: st.list_compactions("nope"),
        lambda st: st.fork("nope", "t"),
    ],
)
def test_unknown_session_is_a_typed_error_and_writes_nothing(db, call):
    db.create_session(title="only")
    before = raw_rows(db, "SELECT count(*), sum(updated_at) FROM sessions")
    with pytest.raises(SessionNotFound, match="nope"):
        call(db)
    assert raw_rows(db, "SELECT count(*), sum(updated_at) FROM sessions") == before
    assert raw_rows(db, "SELECT count(*) FROM turns")[0][0] == 0


def test_usage_adds_up(db):
    s = db.create_session()
    db.add_usage(s.id, Usage(100, 20, 1000, 50, 0.01))
    total = db.add_usage(s.id, Usage(10, 2, 0, 0, 0.002)).usage
    assert total == Usage(110, 22, 1000, 50, pytest.approx(0.012))
    assert db.get_session(s.id).usage.total_input_tokens == 1160


def test_meta_unknown_keys_are_kept(db):
    s = db.create_session()
    raw_rows(
        db, "UPDATE sessions SET meta = ? WHERE id = ?", ('{"futureKey": [1, 2], "x": "y"}', s.id)
    )
    assert db.get_session(s.id).meta == {"futureKey": [1, 2], "x": "y"}
    assert db.rename_session(s.id, "t").meta == {"futureKey": [1, 2], "x": "y"}


def test_deleting_sessions_and_spaces_forgets_their_app_state(db):
    work = db.create_space("Work")
    a = db.create_session(space_id=work.id)
    b = db.create_session(space_id=work.id)
    other = db.create_session()
    for owner in (a.id, b.id, other.id):
        db.set_state(f"draft:{owner}", "half a thought")
        db.set_state(f"frozen_prompt:{owner}", "system")
    db.set_state(f"memory:{work.id}", "likes tea")
    db.set_state("session.last", a.id)  # a value naming it, not a key: kept

    db.delete_session(a.id)
    assert db.get_state(f"draft:{a.id}") is None
    assert db.get_state(f"frozen_prompt:{a.id}") is None
    assert db.get_state(f"draft:{b.id}") == "half a thought"

    db.delete_space(work.id, delete_sessions=True)
    assert db.get_state(f"draft:{b.id}") is None
    assert db.get_state(f"memory:{work.id}") is None
    assert db.get_state(f"draft:{other.id}") == "half a thought"
    assert db.get_state("session.last") == a.id


def test_a_nul_character_never_fails_a_save(db):
    """PostgreSQL's text cannot hold NUL (U+0000): plain columns go without it there;
    messages (JSON) keep it on both backends."""
    from parley.core.store.postgres.store import PgStore

    def kept(value: str) -> str:
        return value.replace("\x00", "") if isinstance(db, PgStore) else value

    space = db.create_space("Wo\x00rk")
    s = db.create_session(title="Tr\x00ip", space_id=space.id, model="m\x00",
                          system_prompt="Be\x00 brief.")
    turn = db.append_turn(s.id, Turn("assistant", [TextBlock("he\x00llo")], model="m\x00"))
    got = db.get_session(s.id)
    assert (got.title, got.model, got.system_prompt) == (
        kept("Tr\x00ip"), kept("m\x00"), kept("Be\x00 brief."))
    assert db.get_space(space.id).name == kept("Wo\x00rk")
    again = db.get_turn(turn.id)
    assert (again.text(), again.model) == ("he\x00llo", kept("m\x00"))
    db.rename_session(s.id, "Tr\x00ip two")
    assert db.get_session(s.id).title == kept("Tr\x00ip two")


def test_moving_a_chat_moves_its_forks_nested_with_it(db):
    """A chat's forks follow it to another space, forks of forks too; a fork already in
    another space stays where it was put (trial 16, shot-44)."""
    work, home = db.create_space("Work"), db.create_space("Home")
    s = db.create_session(title="Trip")
    say(db, s.id, "hello")
    first = db.get_turns(s.id)[0].id
    f1 = db.fork(s.id, first)
    f1a = db.fork(f1.id, db.get_turns(f1.id)[0].id)
    f2 = db.fork(s.id, first)
    db.move_session(f2.id, home.id)
    other = db.create_session(title="Other")
    moved = db.move_session(s.id, work.id)
    assert [m.id for m in moved] == [s.id, f1.id, f1a.id]
    assert {db.get_session(i).space_id for i in (s.id, f1.id, f1a.id)} == {work.id}
    assert db.get_session(f1a.id).parent_session_id == f1.id
    assert db.get_session(f2.id).space_id == home.id
    assert db.get_session(other.id).space_id == db.default_space().id
