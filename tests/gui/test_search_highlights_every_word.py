"""A search of several words highlights each of them in the message it opens: Ctrl+K,
``second beta``, Enter on the hit marked only "second" (the snippet's first match).

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QColor

from parley.gui.commands.message_search import matched_words
from parley.gui.commands.palette import open_palette
from parley.gui.transcript.delegate import _matches

pytestmark = pytest.mark.timeout(90)


def _marked(w: Any, turn_id: str) -> list[str]:
    """The texts the transcript paints as matches in the row of ``turn_id``."""
    key, term = w.transcript.list_view.delegate.highlight
    assert key == turn_id
    row = w.transcript.turn_ids().index(turn_id)
    layout = w.transcript.list_view.layout_of(row)
    return [sel.cursor.selectedText() for placed in layout.pieces
            for sel in _matches(placed.piece.doc, term, QColor("yellow"))]


def test_the_palette_highlights_every_word_searched(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Noted.")
    driver.send("First alpha, then the Second thing, and BETA last.", w, wait=True)
    chat, asked = w.session_id, w.chat.turns[0].id
    w.chat.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)

    palette = open_palette(w, w)
    driver.qtbot.keyClicks(palette.input, "second beta")
    driver.until(lambda: palette.search.settled
                 and any(e.kind == "message" for e in palette.entries()), timeout=10)
    palette.activate(next(i for i, e in enumerate(palette.entries()) if e.kind == "message"))
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0
                 and w.transcript.focused_turn_id() == asked)
    assert sorted(_marked(w, asked), key=str.casefold) == ["BETA", "Second"]


def test_matched_words_are_every_marked_match_then_the_query() -> None:
    assert matched_words("a \x02Second\x03 b \x02BETA\x03", "second beta") == "Second BETA"
    # a word outside the snippet still comes from the query; short ones and quotes do not
    assert matched_words("\x02castles\x03 and", '"castles" a tram') == "castles tram"
    assert matched_words("no marks", "") is None
    assert matched_words("the \x02Alhambra\x03", "alhambr") == "Alhambra"  # a prefix typed
