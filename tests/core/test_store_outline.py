"""Transcript windows over compacted sessions (parley.core.store.outline), on a real SQLite file."""

from __future__ import annotations

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, Turn, apply_compactions
from parley.core.store import Store


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


def chat(db: Store, n: int) -> tuple[str, list[Turn]]:
    s = db.create_session(title="long")
    turns = [Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i}")],
                  id=f"t{i}") for i in range(n)]
    for t in turns:
        db.append_turn(s.id, t)
    return s.id, turns


def compact(db: Store, sid: str, first: str, last: str, count: int, sid_turn: str) -> None:
    db.record_compaction(
        sid, Turn("user", [CompactSummaryBlock(f"summary {sid_turn}")], id=sid_turn),
        first_turn_id=first, last_turn_id=last, replaced_count=count)


def test_a_compacted_long_chat_opens_with_its_card_and_kept_turns_only(db):
    sid, turns = chat(db, 400)
    compact(db, sid, "t0", "t395", 396, "s1")
    win = db.transcript_window(sid, last=200)
    # the card (summary turn) and the four kept turns: no replaced turn is read
    assert [t.id for t in win.turns] == ["t396", "t397", "t398", "t399", "s1"]
    assert win.older == 0 and win.first_key == 0  # the card is shown where t0 was
    span = win.spans["s1"]
    assert (span.first_seq, span.last_seq, span.replaced_count, span.stored_count) == (
        0, 395, 396, 396)
    assert span.outer is None
    inside = db.compacted_turns(sid, "s1")
    assert [t.id for t in inside.turns] == [t.id for t in turns[:396]]
    assert inside.seqs["t0"] == 0 and inside.seqs["t395"] == 395


def test_windows_page_back_over_top_level_items_across_a_card(db):
    sid, _ = chat(db, 300)
    compact(db, sid, "t100", "t199", 100, "s1")  # a card in the middle (stored at seq 300)
    win = db.transcript_window(sid, last=50)
    assert [t.id for t in win.turns] == [f"t{i}" for i in range(250, 300)]
    assert win.older == 100 + 1 + 50  # t0..t99, the card, t200..t249
    win2 = db.transcript_window(sid, last=60, before=win.first_key)
    # 60 items: t200..t249, the card (shown at t100's place), t91..t99; in stored order
    assert [t.id for t in win2.turns] == (
        [f"t{i}" for i in range(91, 100)] + [f"t{i}" for i in range(200, 250)] + ["s1"])
    assert win2.first_key == 91 and win2.older == 91
    win3 = db.transcript_window(sid, before=win2.first_key)
    assert [t.id for t in win3.turns] == [f"t{i}" for i in range(91)] and win3.older == 0


def test_re_compaction_nests_the_earlier_card_and_reveal_reads_a_hit_inside(db):
    sid, _ = chat(db, 40)
    compact(db, sid, "t0", "t29", 30, "s1")  # stored at seq 40
    for i in range(40, 50):
        db.append_turn(sid, Turn("user", [TextBlock(f"later {i}")], id=f"t{i}"))
    compact(db, sid, "t0", "t45", 45, "s2")  # covers s1 and its range
    win = db.transcript_window(sid, last=10)
    assert [t.id for t in win.turns] == ["t46", "t47", "t48", "t49", "s2"]
    assert win.spans["s1"].outer == "s2" and win.spans["s2"].outer is None
    assert win.spans["s2"].stored_count == 47  # 46 turns and the earlier summary
    shown = db.transcript_window(sid, reveal="t3")
    assert {"t3", "s1", "s2", "t0", "t45"} <= {t.id for t in shown.turns}
    # the store's model view and the window agree on what the card stands for
    assert apply_compactions(db.get_turns(sid))[0].id == "s2"


def test_a_re_compaction_one_exchange_later_nests_the_summary_stored_after_its_range(db):
    sid, turns = chat(db, 400)
    compact(db, sid, "t0", "t395", 396, "s1")  # stored at seq 400, after t396..t399
    db.append_turn(sid, Turn("user", [TextBlock("one more")], id="m"))
    db.append_turn(sid, Turn("assistant", [TextBlock("noted")], id="r"))
    # keeping t398, t399, m, r: the range ends (t397) before where s1 is stored
    compact(db, sid, "t0", "t397", 398, "s2")
    win = db.transcript_window(sid, last=200)
    assert [t.id for t in win.turns] == ["t398", "t399", "m", "r", "s2"]  # no stray s1
    assert win.older == 0 and win.first_key == 0
    assert win.spans["s1"].outer == "s2" and win.spans["s2"].outer is None
    assert win.spans["s2"].stored_count == 399  # t0..t397 and s1
    inside = db.compacted_turns(sid, "s2")
    assert [t.id for t in inside.turns] == [t.id for t in turns[:398]] + ["s1"]
    assert [t.id for t in db.compacted_turns(sid, "s1").turns] == [
        t.id for t in turns[:396]]
    shown = db.transcript_window(sid, reveal="s1")  # a hit on the nested summary
    assert {"s1", "s2", "t0", "t397"} <= {t.id for t in shown.turns}


def test_a_chat_without_compactions_pages_like_stored_turns(db):
    sid, turns = chat(db, 30)
    win = db.transcript_window(sid, last=10)
    assert [t.id for t in win.turns] == [t.id for t in turns[20:]]
    assert win.older == 20 and win.spans == {} and win.first_key == 20
    assert db.compacted_turns(sid, "t3").turns == []
