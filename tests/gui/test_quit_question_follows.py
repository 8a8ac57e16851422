"""The question on quitting while a message waits follows its reason: it closes by itself
once the message was sent and saved (real window; providers held back by ``gate``)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parley.gui.startup.quit_waiting import SENT_MEANWHILE, TITLE
from tests.gui.disk_full import question_box
from tests.gui.starting import press, previous_chat, start, type_keys

pytestmark = pytest.mark.timeout(90)


def test_the_quit_question_closes_once_its_message_was_sent(driver, fake_provider,
                                                            gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    w.composer.clear()
    type_keys(w, "Send me while you ask")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.chat.runs.waiting(earlier))
    fake_provider.script("Sent while the question was up.")
    w.qactions["app.quit"].trigger()
    driver.until(lambda: question_box(w, TITLE) is not None, timeout=10)
    gate.set()  # the provider is ready: the message is sent and saved
    driver.until(lambda: question_box(w, TITLE) is None, timeout=30)  # no stale question
    driver.until(lambda: w.isEnabled())
    assert w.isVisible()  # nobody answered: Parley stays open, and says why
    assert w.statusBar().currentMessage() == SENT_MEANWHILE
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    history = [(t.role, t.text()) for t in driver.run(w.store.history(earlier))]
    assert history[-2:] == [("user", "Send me while you ask"),
                            ("assistant", "Sent while the question was up.")]
