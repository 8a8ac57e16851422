"""A reply that meets a full disk, and the questions the window then asks: shared by the
unsaved-reply tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox

from parley.gui import dialogs
from parley.gui.database.save_status import TITLE
from tests.core.faults import BIG, page_limit


def saving_window(driver: Any) -> Any:
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})
    w.runner.saves.delays_s = (0.1,)
    return w


def disk_full_reply(driver: Any, w: Any) -> Any:
    """Send a question whose reply meets a full disk; returns the reply (kept)."""
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.run(page_limit(w.store, 2))
    driver.fake.script(BIG, token_delay_ms=1, chunk_size=4000)
    driver.send("second question")
    driver.until(lambda: w.runner.saves.pending() and not w.composer_bar.busy, timeout=20)
    return w.runner.saves.pending()[0].turn


def on_disk(w: Any, driver: Any) -> list[tuple[str, bool]]:
    turns = driver.run(w.store.get_turns(w.chat.session_id))
    return [(t.text(), t.aborted) for t in turns]


def question_box(w: Any, title: str = TITLE) -> QMessageBox | None:
    boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible() and b.windowTitle() == title]
    return boxes[0] if boxes else None


def answer_question(driver: Any, w: Any, label: str, save_as: Path | None = None, *,
           title: str = TITLE) -> str:
    """Wait for the question titled ``title``, click ``label`` (the Save dialog it opens
    answers ``save_as``)."""
    driver.until(lambda: question_box(w, title) is not None, timeout=10)
    box = question_box(w, title)
    assert box is not None
    text = box.text()
    if save_as is not None:
        dialogs.answers.append(str(save_as))
    next(b for b in box.buttons() if b.text() == label).click()
    driver.until(lambda: question_box(w, title) is None)
    return text
