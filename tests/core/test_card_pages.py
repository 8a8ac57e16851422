"""A compaction card's own items read a page at a time, and the cards around a search hit
(parley.core.store.card_pages), on a real sessions.db written as a long chat is: compacted
every 200 turns, each re-compaction from the first turn (tests.benchmarks.gen_chat)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store import Store, outline
from parley.core.store.card_pages import CARD_PAGE, REVEAL_CONTEXT
from parley.core.store.schema import turn_path as P
from tests.benchmarks.gen_chat import SESSION_ID, write_long_chat


@pytest.fixture(scope="module")
def long_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cards") / "sessions.db"
    write_long_chat(path, 4_000)  # 18 compactions, each nested in the next
    return path


def newest_card(db: Store) -> str:
    win = db.transcript_window(SESSION_ID, last=200)
    [top] = [sp for sp in win.spans.values() if sp.outer is None]
    return top.summary_turn_id


def test_opening_the_newest_card_reads_its_own_items_not_the_history_under_it(long_db: Path):
    with Store.open(long_db) as db:
        top = newest_card(db)
        spans = db.transcript_window(SESSION_ID, last=1).spans
        [nested] = [sp for sp in spans.values() if sp.outer == top]
        page = db.card_page(SESSION_ID, top)
        # its own items: the 200 turns its compaction replaced, and the card nested in it
        # (shown where its range began, first); none of the 3,600 turns under that card
        assert page.levels == {top: 201}
        assert len(page.turns) == CARD_PAGE
        assert nested.summary_turn_id not in page.seqs  # the 201st item, on the next page
        assert page.older == 1
        assert all(nested.last_seq < page.seqs[t.id] <= spans[top].last_seq for t in page.turns)
        more = db.card_page(SESSION_ID, top, before=page.first_key)
        assert [t.id for t in more.turns] == [nested.summary_turn_id]
        assert more.older == 0 and more.first_key == nested.first_seq
        assert isinstance(more.turns[0].blocks[0], CompactSummaryBlock)


def test_a_card_of_many_turns_pages_back_over_all_of_them_once(tmp_path: Path):
    with Store.open(tmp_path / "sessions.db") as db:
        sid = db.create_session().id
        for i in range(530):
            db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                     [TextBlock(f"m{i}")], id=f"t{i}"))
        db.record_compaction(sid, Turn("user", [CompactSummaryBlock("all")], id="s"),
                             first_turn_id="t0", last_turn_id="t525", replaced_count=526)
        seen: list[str] = []
        before = None
        sizes = []
        while True:
            page = db.card_page(sid, "s", last=100, before=before)
            if not page.turns:
                break
            assert page.levels == {"s": 526}
            sizes.append(len(page.turns))
            seen = [t.id for t in page.turns] + seen
            assert page.older == 526 - len(seen)
            before = page.first_key
        assert sizes == [100] * 5 + [26]
        assert seen == [f"t{i}" for i in range(526)]


def test_a_hit_deep_in_nested_cards_reads_its_card_near_it_and_the_cards_around(
        long_db: Path):
    with Store.open(long_db) as db:
        hit = f"{500:032x}"  # turn 500: inside the third compaction, 17 cards down
        shown = db.transcript_window(SESSION_ID, reveal=hit)
        spans = shown.spans
        around = [sp for sp in spans.values() if sp.first_seq <= shown.seqs[hit] <= sp.last_seq]
        assert len(around) == 17
        assert {sp.summary_turn_id for sp in around} <= set(shown.seqs)  # every card
        [inner] = [sp for sp in around if sp.last_seq - sp.first_seq ==
                   min(s.last_seq - s.first_seq for s in around)]
        assert shown.levels == {inner.summary_turn_id: 201}
        # the items read: the top level's, the cards, and the hit's card near the hit only
        top_level = db.transcript_window(SESSION_ID)
        near = [t for t in shown.turns if t.id not in top_level.seqs
                and t.id not in {sp.summary_turn_id for sp in around}]
        assert hit in {t.id for t in near}
        assert len(near) <= 2 * REVEAL_CONTEXT + 1


def _steps(db: Store, fn: Any) -> int:
    """SQLite virtual-machine steps ``fn(con)`` takes (progress handler every 100 steps)."""
    steps = [0]

    def run(con: Any) -> None:
        raw = con.connection.driver_connection
        raw.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 100) or 0, 100)
        try:
            fn(con)
        finally:
            raw.set_progress_handler(None, 100)

    db._r(run)  # noqa: SLF001 (the store's own connection, as its reads use it)
    return steps[0]


def test_the_count_of_earlier_items_does_not_walk_the_turns_under_the_cards(long_db: Path):
    with Store.open(long_db) as db:
        win = db.transcript_window(SESSION_ID, last=20)
        assert win.first_key is not None
        every = list(win.spans.values())
        top = [sp for sp in every if sp.outer is None]
        ids = [sp.summary_turn_id for sp in every]
        count = db._r(lambda c: outline._count_outside(  # noqa: SLF001
            c, SESSION_ID, top, ids, win.first_key))
        assert win.older == count + 1  # the turns before (none: all under the card), the card
        steps = _steps(db, lambda c: outline._count_outside(  # noqa: SLF001
            c, SESSION_ID, top, ids, win.first_key))
        walk = _steps(db, lambda c: c.execute(  # every turn of the path, as it counted before
            select(func.count()).where(P.c.session_id == SESSION_ID,
                                       outline._outside(top, every),  # noqa: SLF001
                                       P.c.pos < win.first_key)).scalar_one())
        # the turns after the card (about 130), not the 4,000 under it
        assert steps * 5 < walk
