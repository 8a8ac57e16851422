"""Before the last chat shows at start-up the header says nothing misleading: no "New
chat" title, no empty model picker nor "No model", no token figure; then the last chat's
own. Same set-up as
``test_startup_waits``: the providers' loading held by ``gate``, the store's by
``store_gate``, the chat's code by ``chat_gate``: the last chat's title shows as soon as
the store is open (unless Ctrl+N was pressed), before its code is imported."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer

from tests.gui.starting import press, previous_chat, start

pytestmark = pytest.mark.timeout(90)


def _header(w: Any) -> tuple[str, str | None, str, bool]:
    """What the header shows: the title as painted (not the heading's ``title``: trial
    21 saw "New chat" painted while it was ""), the model picker's text (None: hidden),
    the meter's, and whether a new chat's greeting shows."""
    greeting = getattr(w, "greeting", None)
    picker = w.model_picker
    return (w.chat_heading.button.text(), picker.text() if picker.isVisible() else None,
            w.context_meter.label.text(), greeting is not None and greeting.isVisible())


def test_the_header_is_neutral_until_the_last_chat_shows(
        driver: Any, fake_provider: Any, gate: Any, store_gate: Any) -> None:
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    driver.until(lambda: w.startup.built)  # the header's widgets are made
    seen = [_header(w)]
    timer = QTimer()
    timer.timeout.connect(lambda: seen.append(_header(w)))
    timer.start(1)
    store_gate.set()
    driver.until(lambda: w.chat is not None and w.session_id == earlier
                 and not w.chat.adopting, timeout=30)
    timer.stop()
    seen.append(_header(w))
    title = driver.run(w.store.get_session(earlier)).title
    assert title and seen[-1][0] == title
    before = [h for h in seen if h[0] != title]  # until its title shows
    assert before, "no sample taken before the chat showed"
    assert all(h[0] in ("", "Loading…") for h in before), before
    assert all(h[1] is None or h[1] not in ("", "No model") for h in seen), seen  # no empty picker
    assert all(not h[3] for h in seen), seen  # the greeting of a new chat never shows
    assert all("tokens" not in h[2] or h[0] == title for h in seen), seen
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)


@pytest.fixture
def chat_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """While cleared, holds the import of the chat's code (the store open already)."""
    from parley.gui.startup import opening

    held = threading.Event()
    held.set()
    real = opening.import_chat
    monkeypatch.setattr(opening, "import_chat", lambda: (held.wait(timeout=60), real()))
    yield held
    held.set()


def test_the_last_chats_title_shows_as_soon_as_the_store_is_open(
        driver: Any, fake_provider: Any, gate: Any, chat_gate: threading.Event) -> None:
    earlier = previous_chat(driver, fake_provider, gate)
    gate.set()
    chat_gate.clear()
    w = start(driver)
    # The chat's code not imported yet, nor the chat shown: its title is, uneditable.
    driver.until(lambda: w.startup.built and w.chat_heading.button.text() != "", timeout=30)
    assert w.chat is None and w.transcript is None and w.startup.queueing
    assert not w.chat_heading.begin_edit()
    assert not w.model_picker.isVisible()  # its name comes with the chat
    chat_gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id == earlier
    title = driver.run(w.store.get_session(earlier)).title
    assert title and w.chat_heading.button.text() == title == w.chat_heading.title


def test_ctrl_n_while_starting_shows_no_earlier_title(
        driver: Any, fake_provider: Any, gate: Any, store_gate: Any) -> None:
    earlier = previous_chat(driver, fake_provider, gate)
    gate.set()
    store_gate.clear()
    w = start(driver)
    press(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # before the store opens
    driver.until(lambda: w.startup.built)
    shown: set[str] = set()
    timer = QTimer()
    timer.timeout.connect(lambda: shown.add(w.chat_heading.button.text()))
    timer.start(1)
    store_gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    timer.stop()
    shown.add(w.chat_heading.button.text())
    assert w.session_id is None  # the new chat
    title = driver.run(w.store.get_session(earlier)).title
    assert title not in shown and shown <= {"", "New chat"}, shown
