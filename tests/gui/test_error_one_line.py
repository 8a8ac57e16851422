"""A failed reply says what went wrong in one sentence under the message; the rest of the
message (what was kept, what to do) is behind "Details", in a modal dialog (real window,
SDK and fake provider)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from parley.gui.transcript.view import split_first_sentence


def test_a_failed_reply_is_one_sentence_with_details(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("permission")
    driver.send("Hello?", w)
    driver.until(lambda: driver.error_text(w), timeout=15)
    message = driver.error_text(w)  # the whole message, as the run said it
    bar = w.transcript.error_bar
    first = bar.label.text()
    assert first.startswith("Anthropic refused the request") and first.endswith(".")
    assert first != message and message.startswith(first)
    assert "Your conversation is saved." not in first  # in Details
    assert bar.details_button.isVisibleTo(w.transcript)
    assert bar.retry_button.isVisibleTo(w.transcript)
    driver.qtbot.mouseClick(bar.details_button, Qt.MouseButton.LeftButton)
    dialog = bar.dialog
    assert dialog is not None and dialog.isModal()
    assert message in dialog.text()
    driver.qtbot.keyClick(dialog.close_button, Qt.Key.Key_Return)
    driver.until(lambda: not dialog.isVisible())


def test_the_first_sentence_ends_where_a_sentence_does() -> None:
    assert split_first_sentence("One. Two.") == ("One.", "Two.")
    assert split_first_sentence("Just one sentence.") == ("Just one sentence.", "")
    assert split_first_sentence("Wait, e.g. a minute. Then go.") == (
        "Wait, e.g. a minute.", "Then go.")
    assert split_first_sentence("Claude Sonnet 4.6 refused. 3 tries.") == (
        "Claude Sonnet 4.6 refused.", "3 tries.")
    assert split_first_sentence("Is it on? yes it is.") == ("Is it on? yes it is.", "")
