"""Huge messages and very long unbroken lines stay quick to show and to paste.

Importing two ~10 MB unbroken lines froze the window for minutes: one such
line takes Qt seconds to minutes to lay out (the cost grows with its square,
see ``parley.gui.text.long_text``). Here the real transcript shows them folded, with
break chances in long runs, so this test finishes in seconds (without the fold
it would run into its timeout), and the whole text is still what Copy gives.
The composer refuses a paste longer than any model can read, and wraps a
long pasted line anywhere.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication, QTextOption

from parley.core.content import TextBlock, Turn
from parley.core.context.text_limits import max_text_chars
from parley.gui.composer.drafts import draft_key
from parley.gui.text.long_text import (
    BREAK_EVERY,
    FOLD_CHARS,
    SHOWN_CHARS,
    ZWSP,
    shown_text,
    shown_text_after,
)
from tests.gui.transcript_reading import show_turns

pytestmark = pytest.mark.timeout(60)

HUGE = "a" * 10_000_000  # one unbroken 10 MB line, as in the report
BIG = "b" * 3_000_000 + " the end"
LONG = "c" * (FOLD_CHARS - 10)  # under the fold: shown whole, wrapped anywhere


def shown(view, row: int) -> str:
    return "".join(p.piece.doc.toPlainText() for p in view.list_view.layout_of(row).pieces)


def test_huge_unbroken_lines_are_shown_folded_and_copied_whole(view):
    show_turns(view, [Turn("user", [TextBlock(HUGE)], id="u1"),
                    Turn("assistant", [TextBlock(BIG)], id="a1", model="anthropic:claude-x"),
                    Turn("user", [TextBlock(LONG)], id="u2")])
    view.repaint()
    for row, text in ((0, HUGE), (1, BIG)):
        seen = shown(view, row)
        assert "more characters not shown" in seen and "Copy message copies all" in seen
        body = seen.replace(ZWSP, "")
        assert text[:SHOWN_CHARS] in body and len(body) < SHOWN_CHARS + 400
    long_row = shown(view, 2)
    assert long_row.replace(ZWSP, "") == LONG  # every character, with break chances
    assert long_row.count(ZWSP) >= len(LONG) // BREAK_EVERY - 1
    view.copy_message(0)
    assert QGuiApplication.clipboard().text() == HUGE  # the whole message, as stored


def test_paste_longer_than_any_model_reads_is_refused_and_never_kept(driver):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})
    mime = QMimeData()
    mime.setText("x" * (max_text_chars() + 1))
    w.composer.setFocus()
    w.composer.insertFromMimeData(mime)
    assert w.composer.text() == ""
    message = w.statusBar().currentMessage()
    assert "more than any model can read" in message and "not taken" in message
    assert "512 KB" in message and "as a file instead" not in message  # advice that works

    line = "y" * 300_000  # a long unbroken line under the limit: taken, wrapped anywhere
    mime.setText(line)
    w.composer.insertFromMimeData(mime)
    assert w.composer.text() == line
    assert w.composer.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    driver.run(w.chat.drafts.save(None))
    assert driver.run(w.store.get_state(draft_key(None))) == line
    w.composer.set_text("short words again")
    assert w.composer.wordWrapMode() == QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["word ", "\n", "\t", "x" * 700, "y" * 1_400, ZWSP, "  "]),
                max_size=40),
       st.integers(min_value=0, max_value=20_000), st.integers(min_value=1, max_value=3_000))
def test_what_a_grown_text_shows_is_what_it_shows_fresh(parts, cut, grow):
    """While a reply streams, its break chances are found again only after its last
    space (``shown_text_after``): the result is the same as for the whole text."""
    text = "".join(parts)
    old = text[: min(cut, len(text))]
    new = text[: len(old) + grow]
    assert shown_text_after((old, *shown_text(old)), new) == shown_text(new)


def test_a_text_grown_past_the_fold_shows_the_same_first_part():
    text = "word " * (FOLD_CHARS // 5)
    old = (text, *shown_text(text))
    grown = text + "more " * 100
    shown, hidden = shown_text_after(old, grown)
    assert (shown, hidden) == shown_text(grown) and hidden == len(grown) - SHOWN_CHARS
    again = grown + "and more"
    assert shown_text_after((grown, shown, hidden), again)[0] is shown
