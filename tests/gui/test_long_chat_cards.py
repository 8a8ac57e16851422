"""Compaction cards of a chat compacted many times, in the real window: a 4,000-turn chat
written as the benchmarks write one (tests.benchmarks.gen_chat: compacted every 200
turns, each re-compaction from the first turn, so each summary is nested in the next).
Opening a card reads a page of its own items, never the history under it; a search hit
deep in the cards is shown in its card at a normal width; switching versions (‹ ›) keeps
the cards that were open open."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core import paths
from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.card_pages import CARD_PAGE, REVEAL_CONTEXT
from parley.gui.transcript.layout import INDENT, MAX_INDENT_LEVELS
from parley.gui.transcript.specs import CARD_MORE_HREF
from tests.benchmarks.gen_chat import SESSION_ID, write_long_chat
from tests.gui.long_chats import card_text, rows

pytestmark = pytest.mark.timeout(120)

TURNS = 3_950  # the newest card and 154 turns after it: all read on opening


def opened(driver: Any) -> Any:
    """A window on the 3,950-turn chat, opened."""
    write_long_chat(paths.db_path(driver.home), TURNS)
    w = driver.configured()
    w.chat.open_session(SESSION_ID)
    driver.until(lambda: w.session_id == SESSION_ID and rows(w) and w.tasks.pending == 0,
                 timeout=20)
    return w


def click(driver: Any, w: Any, point: Any) -> None:
    driver.qtbot.mouseClick(w.transcript.list_view.viewport(), Qt.MouseButton.LeftButton,
                            pos=point)


def test_opening_the_newest_card_reads_a_page_of_its_own_turns(driver: Any) -> None:
    w = opened(driver)
    card = rows(w)[0]
    assert card.kind == "card" and "Summarized" in card_text(w)
    read = len(w.chat.turns)
    click(driver, w, w.transcript.fold_point(card.key, "card"))
    driver.until(lambda: len(w.chat.turns) > read and w.tasks.pending == 0, timeout=20)
    # a page of the card's own turns was read, not the 3,800 turns under it
    assert len(w.chat.turns) - read == CARD_PAGE
    inside = w.transcript.model.transcript.rows_under(rows(w)[0])
    assert len(inside) <= CARD_PAGE and all(n.depth == 1 for n in inside)
    # the card nested in it: the 201st item (trial 15: "1 not shown" said not what)
    assert "originals kept · 1 older entry not shown yet · Show more" in card_text(w)
    click(driver, w, w.transcript.anchor_point(card.key, CARD_MORE_HREF))
    driver.until(lambda: rows(w)[1].kind == "card", timeout=20)
    nested = rows(w)[1]
    assert nested.depth == 1 and not nested.expanded
    assert len(w.chat.turns) - read == CARD_PAGE + 1
    assert "not shown" not in card_text(w)
    # the nested card opens the same way: its own 200 turns
    click(driver, w, w.transcript.fold_point(nested.key, "card"))
    driver.until(lambda: len(w.chat.turns) - read == 2 * CARD_PAGE + 1
                 and w.tasks.pending == 0, timeout=20)
    assert w.transcript.model.row_of(nested.key) == 1  # the header stayed in place


def test_a_search_hit_deep_in_nested_cards_is_shown_in_its_card_at_a_normal_width(
        driver: Any) -> None:
    w = opened(driver)
    hit = f"{500:032x}"  # turn 500: 17 cards down
    with Store.open(paths.db_path(driver.home)) as db:
        word = db.get_turn(hit).text().split()[0]
    read = len(w.chat.turns)
    w.chat.open_at(SESSION_ID, hit, word)
    driver.until(lambda: w.transcript.focused_turn_id() == hit, timeout=20)
    node = w.transcript.model.transcript.nodes[hit]
    cards = w.transcript.model.transcript.ancestors(node)
    assert len(cards) == 17 and all(c.expanded for c in cards)
    assert [c.depth for c in cards] == list(range(17))
    # the cards and the hit's card near it were read: not the turns of every card
    assert len(w.chat.turns) - read <= 16 + 2 * REVEAL_CONTEXT + 1
    assert w.transcript.list_view.delegate.highlight == (hit, word)
    lv = w.transcript.list_view
    row = w.transcript.model.row_of(hit)
    assert lv.viewport().rect().intersects(lv.visualRect(w.transcript.model.index(row)))
    # at a normal width: no further right than MAX_INDENT_LEVELS levels of nesting
    layout = lv.layout_of(row, fresh=True)
    top = lv.layout_of(w.transcript.model.row_of(cards[0].key), fresh=True)
    assert layout.column.left() - top.column.left() <= MAX_INDENT_LEVELS * INDENT
    assert layout.column.right() <= lv.viewport().width()
    assert len(layout.guides) == MAX_INDENT_LEVELS
    # the cards around it say their other items are not read, and read them when asked
    outer = cards[-2]
    assert "Show more" in card_text(w, w.transcript.model.row_of(outer.key))
    before = len(w.chat.turns)
    click(driver, w, w.transcript.anchor_point(outer.key, CARD_MORE_HREF))
    driver.until(lambda: len(w.chat.turns) > before and w.tasks.pending == 0, timeout=20)
    assert len(w.chat.turns) - before <= CARD_PAGE


def test_switching_versions_keeps_open_cards_open(driver: Any) -> None:
    w = opened(driver)
    card = rows(w)[0]
    click(driver, w, w.transcript.fold_point(card.key, "card"))
    driver.until(lambda: len(rows(w)) > 200 and w.tasks.pending == 0, timeout=20)
    under = len(w.transcript.model.transcript.rows_under(rows(w)[0]))
    last = w.chat.turns[-1]
    # another version of the last message, as an edit makes one
    driver.run(w.store.branch_before(SESSION_ID, last.id))
    driver.run(w.store.append_turn(SESSION_ID, Turn(last.role, [TextBlock("another")])))
    driver.run(w.chat.opener.reread(SESSION_ID))
    driver.until(lambda: w.tasks.pending == 0)
    assert rows(w)[0].expanded  # a reread of the path (an edit, another program) keeps it
    edited = w.chat.turns[-1]
    assert w.chat.opener.switch_branch(edited.id, -1)
    driver.until(lambda: w.chat.turns[-1].id == last.id and w.tasks.pending == 0, timeout=20)
    assert rows(w)[0].key == card.key and rows(w)[0].expanded
    assert len(w.transcript.model.transcript.rows_under(rows(w)[0])) == under  # its page
