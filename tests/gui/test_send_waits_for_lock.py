"""A sent message meeting another program's lock waits for it ("Saving…", the bar names the
lock) instead of going back to the box; a draft discard refused by the lock says nothing."""

from __future__ import annotations

import time

import pytest

from tests.core.faults import Locker, on_store_thread
from tests.gui.disk_full import on_disk, saving_window
from tests.gui.transcript_reading import save_mark

pytestmark = pytest.mark.timeout(90)


def test_a_message_waits_for_a_lock_held_past_the_stores_attempts(driver, problems):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    driver.run(on_store_thread(w.store, "PRAGMA busy_timeout = 100"))  # attempts end fast
    driver.fake.script("Second answer.")
    locker = Locker(w.store.path)
    try:
        driver.send("held by the lock")

        def shown_turns() -> list:
            return [t for t in w.transcript.model.transcript.turns
                    if t.text() == "held by the lock"]

        driver.until(lambda: len(shown_turns()) == 1, timeout=2)
        shown = shown_turns()
        driver.until(lambda: "keeps waiting" in w.chat.save_status.bar.text(), timeout=10)
        end = time.monotonic() + 2.0  # many rounds of the store's own attempts
        while time.monotonic() < end:
            driver.qtbot.wait(100)
            assert w.composer.text() == ""  # never bounced back into the box
            assert "stays in the box" not in w.chat.save_status.bar.text()
        bar = w.chat.save_status.bar.text()
        assert "another program holds sessions.db locked" in bar
        assert "nothing already saved is lost" in bar
        assert save_mark(w.transcript, shown[0].id) == "saving"
        assert len(driver.fake.model_requests) == 2  # the first answer and its title only
    finally:
        locker.release()
    driver.until(lambda: save_mark(w.transcript, shown[0].id) is None, timeout=10)
    driver.settle(w)
    assert on_disk(w, driver)[-2:] == [("held by the lock", False), ("Second answer.", False)]
    assert w.chat.save_status.bar.text() == ""
    assert problems == []


def test_esc_while_waiting_for_the_lock_gives_the_text_back(driver, problems):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    driver.run(on_store_thread(w.store, "PRAGMA busy_timeout = 100"))
    locker = Locker(w.store.path)
    try:
        driver.send("never mind")
        driver.until(lambda: "keeps waiting" in w.chat.save_status.bar.text(), timeout=10)
        assert w.chat.runs.stop()
        driver.until(lambda: w.composer.text() == "never mind", timeout=10)
        assert "keeps waiting" not in w.chat.save_status.bar.text()
        assert [t.text() for t in w.transcript.model.transcript.turns][-1] == "First answer."
    finally:
        locker.release()
    driver.settle(w)
    assert on_disk(w, driver)[-1] == ("First answer.", False)  # never saved, never sent
    assert len(driver.fake.model_requests) == 2


def test_quitting_while_a_message_waits_for_the_lock_asks_and_keeps_the_text(
    driver, problems,
):
    from tests.gui.disk_full import answer_question

    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    driver.run(on_store_thread(w.store, "PRAGMA busy_timeout = 100"))
    locker = Locker(w.store.path)
    try:
        driver.send("typed while locked")
        driver.until(lambda: "keeps waiting" in w.chat.save_status.bar.text(), timeout=10)
        w.qactions["app.quit"].trigger()
        text = answer_question(driver, w, "Keep Parley open")
        assert "your unsent text" in text and "another program holds sessions.db" in text
        driver.until(lambda: w.composer.text() == "typed while locked", timeout=10)
        assert w.isVisible()
    finally:
        locker.release()
    driver.settle(w)


def test_a_new_chats_first_message_waits_for_the_lock_too(driver, problems):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    driver.run(w.chat.opener.show_new_chat())
    driver.run(on_store_thread(w.store, "PRAGMA busy_timeout = 100"))
    driver.fake.script("Answer in the new chat.")
    locker = Locker(w.store.path)
    try:
        driver.send("first words of a new chat")
        driver.until(lambda: "keeps waiting" in w.chat.save_status.bar.text(), timeout=10)
        driver.qtbot.wait(1500)
        assert w.composer.text() == "" and w.chat.session_id is None
    finally:
        locker.release()
    driver.until(lambda: w.chat.session_id is not None, timeout=10)
    driver.settle(w)
    assert on_disk(w, driver) == [("first words of a new chat", False),
                                   ("Answer in the new chat.", False)]
    assert w.chat.save_status.bar.text() == "" and problems == []


def test_esc_while_a_new_chat_waits_gives_the_text_back(driver, problems):
    w = saving_window(driver)
    driver.run(w.chat.opener.show_new_chat())
    driver.run(on_store_thread(w.store, "PRAGMA busy_timeout = 100"))
    locker = Locker(w.store.path)
    try:
        driver.send("not now")
        driver.until(lambda: "keeps waiting" in w.chat.save_status.bar.text(), timeout=10)
        assert w.chat.runs.stop()
        driver.until(lambda: w.composer.text() == "not now", timeout=10)
        assert "keeps waiting" not in w.chat.save_status.bar.text()
    finally:
        locker.release()
    driver.settle(w)
    assert w.chat.session_id is None
