"""A big reply streams without the window doing work in proportion to its length on each
update, ends as a fresh render of the saved turn shows it, and keys typed meanwhile reach
the composer while it streams."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from parley.core.content import TextBlock, Turn
from parley.gui.text.markdown import lexer_loaded
from parley.gui.transcript.layout import RowBuilder, RowLayout
from parley.gui.transcript.pieces import PieceCache
from parley.gui.transcript.rows import Transcript
from parley.gui.transcript.specs import LIVE_PART_CHARS
from tests.gui.transcript_reading import show_turns


def distinct_reply(chars: int) -> str:
    """Markdown of about ``chars`` characters, no two paragraphs or code blocks alike
    (as a real reply is: nothing is shared through the caches of equal pieces)."""
    parts: list[str] = []
    size = i = 0
    while size < chars:
        part = (f"Paragraph {i} says something of its own, with `code {i}` and **bold**.\n\n"
                + (f"```python\ndef step_{i}(x):\n    return x + {i}\n```\n\n" if i % 3 == 0
                   else ""))
        parts.append(part)
        size += len(part)
        i += 1
    return "".join(parts)[:chars]


def reply(text: str) -> Turn:
    return Turn("assistant", [TextBlock(text)], id="live", model="anthropic:claude-sonnet-4-6")


def test_each_update_of_a_long_reply_makes_pieces_only_for_its_new_text(view, qtbot):
    """2,500 paragraphs (more than the caches of chunks and pieces hold): before, every
    update of the reply went over all of its chunks again and, past those caches'
    size, rendered each of them anew (thousands of documents per update)."""
    show_turns(view, [Turn("user", [TextBlock("Write a long answer.")], id="u1")])
    view.set_busy(True)
    text = distinct_reply(250_000)[:180_000]  # under the size a text is shown folded at
    step = len(text) // 20
    for end in range(step, len(text) + 1, step):
        view.update_turn(reply(text[:end]))
        qtbot.wait(1)
        view.list_view.layout_of(1, fresh=True)
    cache = view.list_view.delegate.cache
    made = cache.made
    view.update_turn(reply(text[:end] + " and a few more words"))
    layout = view.list_view.layout_of(1, fresh=True)
    assert len(layout.pieces) > 2_500
    assert cache.made - made <= 3  # the paragraph that grew (and a mark or two)


def test_a_reply_grown_by_more_than_a_layout_makes_in_time_is_shown_in_steps(view, qtbot):
    """Text arriving faster than it is rendered (a fast stream's updates bunched): the
    row shows what was made within the layout's time budget, makes the rest in the next
    layouts, and ends as a fresh render of the whole text."""
    show_turns(view, [Turn("user", [TextBlock("Write a long answer.")], id="u1")])
    view.set_busy(True)
    text = distinct_reply(60_000)
    view.update_turn(reply(text[:500]))
    qtbot.wait(300)  # past the layout throttle's longest wait (THROTTLE_MAX_MS)
    lv = view.list_view
    view.update_turn(reply(text))  # 800 paragraphs more at once
    first = lv.layout_of(1)
    assert first.partial and first.stale
    qtbot.waitUntil(lambda: not lv.layout_of(1).partial, timeout=10_000)
    whole = lv.layout_of(1)
    assert len(whole.pieces) > len(first.pieces)
    delegate = lv.delegate
    fresh = RowBuilder(PieceCache(delegate.colors, delegate.cache.font))
    transcript = view.model.transcript
    again = fresh.layout(transcript.nodes["live"], transcript, whole.width, True, None)
    assert pieces_of(whole) == pieces_of(again)


def pieces_of(layout: RowLayout) -> list[tuple[str, tuple[int, int, int, int], str]]:
    """What a row shows: each piece's kind, place and rendered document."""
    return [(p.kind, p.rect.getRect(), p.piece.doc.toHtml()) for p in layout.pieces]


def post_key(widget, text: str) -> None:
    """Queue a key press and release as the window system delivers them (through the
    event loop, after whatever the GUI thread is busy with)."""
    for char in text:
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.postEvent(widget, QKeyEvent(kind, ord(char.upper()),
                                                     Qt.KeyboardModifier.NoModifier, char))


def test_a_big_reply_takes_keys_while_it_streams_and_ends_as_a_fresh_render(driver, run,
                                                                             until):
    window = driver.configured()
    text = distinct_reply(400_000)  # past the size shown folded (its first 50,000 chars)
    driver.fake.script(text, token_delay_ms=2.0, chunk_size=2_000)
    driver.send("Write a very long answer.")
    state = window.chat.state

    def streaming() -> str:
        turn = state.partial.get(state.session_id or "")
        return turn.text() if turn is not None else ""

    until(lambda: len(streaming()) > 0, timeout=20)
    composer = window.composer
    composer.setFocus()
    post_key(composer, "next")
    until(lambda: composer.text().endswith("next"), timeout=10)
    assert 0 < len(streaming()) < len(text), "it still streams"
    until(lambda: window.tasks.pending == 0 and window.chat.turns
          and window.chat.turns[-1].role == "assistant"
          and window.chat.turns[-1].text() == text, timeout=120)
    driver.settle(window)

    lv = window.transcript.list_view
    row = lv.transcript_model().rowCount() - 1
    shown = lv.layout_of(row, fresh=True)
    saved = run(window.store.history(state.session_id))
    assert saved[-1].text() == text
    delegate = lv.delegate
    fresh = RowBuilder(PieceCache(delegate.colors, delegate.cache.font))
    transcript = Transcript(saved)
    fresh_layout = fresh.layout(transcript.nodes[saved[-1].id], transcript, shown.width,
                                True, None, idle=True)
    assert pieces_of(shown) == pieces_of(fresh_layout)
    assert shown.height == fresh_layout.height


def code_html(layout: RowLayout) -> str:
    return "".join(p.piece.doc.toHtml() for p in layout.pieces if p.kind == "code")


def test_code_whose_lexer_is_not_made_is_shown_at_once_then_highlighted(view, qtbot):
    """Opening a chat with code in a language not highlighted yet in this run: its
    lexer's first use (imported, compiled: 30-200 ms each) is not waited for; the code
    shows plain and is highlighted when the lexer was made in a thread."""
    language = next((name for name in ("erlang", "haskell", "ocaml", "fortran", "prolog",
                                       "cobol", "ada", "smalltalk") if not lexer_loaded(name)),
                    None)
    if language is None:
        pytest.skip("every rare lexer was made by an earlier test of this run")
    code = "".join(f"line_{i} = {i} + {i}\n" for i in range(30))
    text = f"Some text.\n\n```{language}\n{code}```\n\nMore text after it.\n"
    show_turns(view, [Turn("user", [TextBlock("Show me code.")], id="u1"),
                      Turn("assistant", [TextBlock(text)], id="a1")])
    lv = view.list_view
    plain = lv.layout_of(1)
    assert "color:" not in code_html(plain) and "line_29" in plain.plain_text()
    qtbot.waitUntil(lambda: "color:" in code_html(lv.layout_of(1)), timeout=10_000)
    shown = lv.layout_of(1)
    delegate = lv.delegate
    fresh = RowBuilder(PieceCache(delegate.colors, delegate.cache.font))  # highlights at once
    transcript = view.model.transcript
    whole = fresh.layout(transcript.nodes["a1"], transcript, shown.width, True, None, idle=True)
    assert pieces_of(shown) == pieces_of(whole)


def test_a_long_paragraph_is_shown_in_parts_while_written_then_whole(view, qtbot):
    """A reply of lines with no blank line between them is one markdown chunk: made
    again whole on each update, its cost grew with it (150 ms an update at 150,000
    characters). While it is written its parts are made, the last one again; once
    written it is made whole, as a fresh render shows it."""
    show_turns(view, [Turn("user", [TextBlock("Print the log.")], id="u1")])
    view.set_busy(True)
    text = "".join(f"Line {i} of a long log, with a few words on it.\n" for i in range(1_500))
    step = len(text) // 10
    lv = view.list_view
    for end in range(step, len(text) + 1, step):
        view.update_turn(reply(text[:end]))
        lv.layout_of(1, fresh=True)
    view.update_turn(reply(text))
    lv.layout_of(1, fresh=True)
    cache = lv.delegate.cache
    made = cache.made
    view.update_turn(reply(text + "One more line.\n"))
    live = lv.layout_of(1, fresh=True)
    assert cache.made - made <= 3
    texts = [p for p in live.pieces if p.kind == "text"]
    assert len(texts) > len(text) // LIVE_PART_CHARS - 2
    # The parts read as one paragraph: no gap between them (trial 16b saw one every ~26
    # lines, gone once the reply ended: the text jumped).
    assert all(b.rect.top() == a.rect.bottom() + 1 for a, b in zip(texts, texts[1:], strict=False))
    assert "One more line." in live.plain_text()
    view.set_busy(False)  # written
    whole = lv.layout_of(1, fresh=True)
    assert len([p for p in whole.pieces if p.kind == "text"]) == 1
    delegate = lv.delegate
    fresh = RowBuilder(PieceCache(delegate.colors, delegate.cache.font))
    transcript = view.model.transcript
    again = fresh.layout(transcript.nodes["live"], transcript, whole.width, True, None,
                         idle=True)
    assert pieces_of(whole) == pieces_of(again)
