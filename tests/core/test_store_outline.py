"""Transcript windows over compacted sessions (parley.core.store.outline), on a real SQLite file."""

from __future__ import annotations

import random
import time

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, Turn, apply_compactions
from parley.core.store import Store, outline
from parley.core.store.outline import Span


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
    # the hit's card (s1: all its 30 turns, near the hit) and the card around it (s2:
    # its card only; its own items are read when asked for, a page at a time)
    ids = {t.id for t in shown.turns}
    assert {"t3", "s1", "s2", "t0", "t29"} <= ids and "t45" not in ids
    assert shown.levels == {"s1": 30}
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
    ids = {t.id for t in shown.turns}
    # s2's own items (s1's card, t396 and t397), not the turns s1 stands for
    assert {"s1", "s2", "t396", "t397"} <= ids and "t0" not in ids
    assert shown.levels == {"s2": 3}


def test_a_chat_without_compactions_pages_like_stored_turns(db):
    sid, turns = chat(db, 30)
    win = db.transcript_window(sid, last=10)
    assert [t.id for t in win.turns] == [t.id for t in turns[20:]]
    assert win.older == 20 and win.spans == {} and win.first_key == 20
    assert db.compacted_turns(sid, "t3").turns == []


def test_windows_read_the_path_shown_not_the_other_branches(db):
    """An edit in the middle of a compacted chat: the windows, their positions and the
    card's count are the path's; a turn of the branch left is not revealed. (The edit is
    inside s1's range, so s1 cannot apply on its branch and is not carried there:
    ``parley.core.store.summary_carry``.)"""
    sid, _turns = chat(db, 30)
    compact(db, sid, "t0", "t24", 25, "s1")  # stored after t29, at position 30
    db.branch_before(sid, "t20")
    db.append_turn(sid, Turn("user", [TextBlock("edited")], id="e20"))
    win = db.transcript_window(sid, last=5)
    assert [t.id for t in win.turns] == ["t16", "t17", "t18", "t19", "e20"]
    assert win.seqs["e20"] == 20 and win.older == 16 and win.spans == {}
    everything = db.transcript_window(sid, reveal="t25")
    assert [t.id for t in everything.turns] == [f"t{i}" for i in range(20)] + ["e20"]
    compact(db, sid, "t0", "t15", 16, "s2")  # on this branch: shown where t0 is
    win = db.transcript_window(sid, last=6)
    assert [t.id for t in win.turns] == ["t16", "t17", "t18", "t19", "e20", "s2"]
    assert list(win.spans) == ["s2"] and win.spans["s2"].stored_count == 16
    assert win.first_key == 0 and win.older == 0
    db.show_branch(sid, "t29")  # back to the branch compacted first
    assert list(db.transcript_window(sid, last=1).spans) == ["s1"]


# --- the nesting rule, checked against its literal statement -------------------------


def _nest_by_intervals(all_spans: list[Span]) -> dict[str, str | None]:
    """The module doc's rule as written (the implementation before it was made
    ``n log n``): in each interval the newest span is the card; the spans inside its
    range, before it and after it are arranged the same way; one across its ends is
    left out."""
    outer: dict[str, str | None] = {}
    todo = [(sorted(all_spans, key=lambda sp: sp.summary_seq, reverse=True), None)]
    while todo:
        spans_in, above = todo.pop()
        if not spans_in:
            continue
        card, rest = spans_in[0], spans_in[1:]
        outer[card.summary_turn_id] = above
        inside = [sp for sp in rest
                  if card.first_seq <= sp.first_seq and sp.last_seq <= card.last_seq]
        before = [sp for sp in rest if sp.last_seq < card.first_seq]
        after = [sp for sp in rest if sp.first_seq > card.last_seq]
        todo += [(after, above), (before, above), (inside, card.summary_turn_id)]
    return outer


@pytest.mark.parametrize("seed", range(40))
def test_the_nesting_follows_the_rule_for_any_spans(seed):
    rng = random.Random(seed)
    n, width = rng.randint(1, 40), rng.choice([10, 30, 200])
    spans = []
    for k in range(n):
        a = rng.choice([0, 0, rng.randrange(width)])  # many ranges start at the first turn
        b = rng.randrange(a, width)
        spans.append(Span(f"s{k}", width + k, a, b, b - a + 1, b - a + 1))
    rng.shuffle(spans)
    assert outline._nest(spans) == _nest_by_intervals(spans)


def test_thousands_of_re_compactions_nest_in_about_n_log_n():
    """A chat compacted 20,000 times, every range from its first turn (each card holds
    all the earlier ones): arranged in well under a second (the rule as written took
    about a minute, measured: every card compares every span below it; 4 s for 5,000)."""
    n = 20_000
    spans = [Span(f"s{k}", 10 * n + k, 0, 5 * k + 4, 5 * k + 5, 5 * k + 5) for k in range(n)]
    start = time.perf_counter()
    outer = outline._nest(spans)
    assert time.perf_counter() - start < 1.0
    assert outer[f"s{n - 1}"] is None
    assert all(outer[f"s{k}"] == f"s{k + 1}" for k in range(n - 1))
