""""Compact now" in the real window (store, SDK, the fake provider server, which counts
requests its own way, unlike Parley's local estimate): the toast tells the context before
and after in the header meter's own figures, counts what it summarized in messages as the
card and the Markdown export do, and the command is not offered on the first-run set-up
page (trial 21)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from PySide6.QtWidgets import QMenu

from parley.core.export import export_session
from parley.gui.commands.palette_entries import action_entries
from parley.gui.header.context_meter import short_count
from tests.gui.chats import long_chat
from tests.gui.long_chats import SUMMARY, rows

pytestmark = pytest.mark.timeout(120)

SHOTS = "/tmp/h21shots"


def test_the_toast_gives_the_meters_figures_before_and_after(driver: Any) -> None:
    w = driver.configured()
    sid, _turns = long_chat(driver, w, 20)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    driver.fake.script("A reply of a few words: " + "noted " * 20)
    driver.send("A question before compacting.", wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    driver.settle(w)
    assert w.context_meter.measured  # the provider's figure, as the person sees it
    before = w.context_meter.label.text()

    driver.fake.script(SUMMARY)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message, timeout=30)
    driver.until(lambda: w.tasks.pending == 0 and w.context_meter.measured)
    driver.settle(w)
    after = w.context_meter.label.text()
    toast = w.toast.message
    w.grab().save(f"{SHOTS}/after-compact.png")

    shown = (before.split(" / ")[0], after.split(" / ")[0])  # "1.4k / 200k" → "1.4k"
    assert shown[0] != shown[1], (before, after)
    assert f"context {shown[0]} → {shown[1]} tokens" in toast, (toast, before, after)
    assert short_count(w.context_meter.used) == shown[1]

    # One count for what was summarized: the toast, the card and the export say messages.
    n = int(re.search(r"(\d+) earlier messages are now a summary", toast).group(1))
    card = rows(w)[0]
    assert card.kind == "card"
    text = w.transcript.list_view.layout_of(0, fresh=True).plain_text()
    assert f"Summarized {n} messages" in text, text
    exported = driver.run(export_session(w.store, sid, "markdown"))
    assert f"**Summary of {n} earlier messages** (compaction)" in exported.text


def test_compact_and_export_are_not_offered_on_the_set_up_page(driver: Any) -> None:
    w = driver.open()
    assert w.stack.currentWidget() is w.setup_panel
    for action_id in ("session.compact", "session.export"):
        assert not w.commands.available(action_id), action_id
        assert not w.qactions[action_id].isEnabled(), action_id  # menus and keys
    labels = [e.label for e in action_entries(w, "", w.keymap)]
    assert "Compact now" not in labels and "Export chat…" not in labels  # the palette
    chat_menu = next(m for m in w.menuBar().findChildren(QMenu)
                     if m.title().replace("&", "") == "Chat")
    chat_menu.aboutToShow.emit()
    assert not w.qactions["session.compact"].isEnabled()
    w.grab().save(f"{SHOTS}/setup.png")

    driver.set_up_anthropic(w)  # then they are there
    assert w.commands.available("session.compact")
    assert w.qactions["session.compact"].isEnabled()
    driver.fake.script("Hello!")
    driver.send("Hi", wait=True)
    driver.until(lambda: w.session_id is not None and w.tasks.pending == 0)
    labels = [e.label for e in action_entries(w, "", w.keymap)]
    assert "Compact now" in labels and "Export chat…" in labels
