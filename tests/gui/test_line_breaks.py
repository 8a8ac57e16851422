"""Single line breaks in a reply are kept as line breaks (issue 35, item 1).

A poem typed with Shift+Enter and echoed back by the fake provider shows its three
lines in the reply, not one joined line; a fenced code block and a list render as
they did before (the code keeps its lines and copies verbatim, the list is a list).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QTextDocument

from parley.gui.text.markdown import MarkdownStyle, document_stylesheet, render_markdown

pytestmark = pytest.mark.timeout(60)

POEM = ["Grey autumn shower", "puddles hold the sky", "quiet afternoon"]


def _type_lines(driver, lines: list[str]) -> None:
    """Type lines into the message box with Shift+Enter between them, then Return."""
    w = driver.windows[-1]
    w.composer.setFocus()
    for i, line in enumerate(lines):
        if i:
            driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
        driver.qtbot.keyClicks(w.composer, line)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


def test_an_echoed_poem_keeps_its_lines(driver, fake_provider):
    # nothing scripted: the fake provider echoes the message
    w = driver.configured()
    _type_lines(driver, POEM)
    driver.until(lambda: driver.last_text() == "You said: " + "\n".join(POEM)
                 and not w.composer_bar.busy, timeout=10)
    shown = driver.transcript_text()
    # QTextDocument writes a line break inside a paragraph as U+2028.
    lines = [ln.strip() for ln in shown.replace("\u2028", "\n").splitlines()]
    at = lines.index("You said: " + POEM[0])
    assert lines[at:at + 3] == ["You said: " + POEM[0], *POEM[1:]], shown


def test_a_reply_with_a_list_and_code_keeps_both_as_before(driver, fake_provider, qtbot):
    w = driver.configured()
    code = "for x in range(3):\n    print(x)\n"
    fake_provider.script(f"Steps:\n\n- one\n- two\n\n```python\n{code}```\n")
    driver.send("show me")
    driver.until(lambda: driver.last_text().startswith("Steps") and not w.composer_bar.busy,
                 timeout=10)
    shown = driver.transcript_text()
    assert "for x in range(3):\n    print(x)" in shown.replace("\u2028", "\n")
    QGuiApplication.clipboard().setText("before")
    turn_id = w.chat.turns[-1].id
    point = w.transcript.anchor_point(turn_id, "parley:copy/")
    assert point is not None
    qtbot.mouseClick(w.transcript.list_view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert QGuiApplication.clipboard().text() == code


def test_breaks_do_not_touch_code_lists_or_tables():
    out = render_markdown("- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```\nl1\nl2\n```\n")
    assert "<br" not in out.html
    assert "<ul>\n<li>a</li>\n<li>b</li>\n</ul>" in out.html
    assert out.code_blocks[0].code == "l1\nl2\n"
    doc = QTextDocument()
    doc.setDefaultStyleSheet(document_stylesheet(MarkdownStyle()))
    doc.setHtml(out.html)
    assert "l1\nl2" in doc.toPlainText()


def test_a_single_newline_in_a_paragraph_is_a_line_break_and_a_blank_line_a_paragraph():
    out = render_markdown("one\ntwo\n\nthree")
    assert out.html == "<p>one<br />\ntwo</p>\n<p>three</p>\n"
