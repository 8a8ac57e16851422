"""Starting on a legacy v3 sessions.db: the window shows the upgrade's progress and stays
responsive while the file is migrated, then lists every migrated chat.

The window is the real one (``MainWindow.start`` → ``AsyncStore.open`` → the v3
upgrade on the store's worker thread, progress posted back to the GUI thread).
A ``QTimer`` on the GUI thread samples the loading page's text every few
milliseconds: the samples show which progress texts a person saw, and the gaps
between them show whether the GUI thread was free to run its event loop.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from PySide6.QtCore import QTimer

from parley.core import paths
from parley.core.store.upgrade import turns as v3_turns
from tests.v3gen import generate

pytestmark = pytest.mark.timeout(60)

UPGRADING = "Upgrading your chats to the new format…"
PERCENT = re.compile(re.escape(UPGRADING) + r" (\d{1,3})%")
TICK_MS = 10
#: The longest the GUI thread may go without running its timer while the upgrade
#: runs on other threads (a frame is 16 ms; this leaves room for a loaded CI box).
MAX_GAP_S = 0.25


def _archived(meta: str | None) -> bool:
    """Whether a v3 ``sessions.meta`` marks the chat archived (the migration keeps it so)."""
    try:
        value = json.loads(meta or "null")
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("archived") is True


@pytest.mark.slow  # ~6 s: generating and upgrading 20k turns
def test_v3_upgrade_shows_progress_stays_responsive_and_lists_every_chat(driver, home,
                                                                          monkeypatch):
    # 40 chats of 500 turns (+ the quirk chats): ~20k turns, a fraction of a second to
    # upgrade; smaller batches than the default so progress comes in several steps.
    monkeypatch.setattr(v3_turns, "BATCH", 2_000)
    gen = generate(paths.db_path(home), seed=5, sessions=40, turns_per_session=500)
    assert gen.expected is not None
    v3_ids = set(gen.expected.sessions)
    shown_ids = {s.id for s in gen.expected.sessions.values() if not _archived(s.meta)}
    assert 0 < len(shown_ids) < len(v3_ids)  # the sidebar hides archived chats
    total_turns = gen.expected.turn_count()
    assert total_turns > 5 * v3_turns.BATCH

    samples: list[tuple[float, str]] = []  # (time, loading page text) at each tick

    def tick() -> None:
        if driver.windows:
            samples.append((time.monotonic(), driver.windows[-1].loading_page.text()))

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    timer.start()
    try:
        w = driver.open()  # waits until the window is ready (set-up panel: no provider)
    finally:
        timer.stop()

    # 1. The progress text appeared, with a percentage that went up.
    percents = [int(m.group(1)) for _, text in samples if (m := PERCENT.search(text))]
    assert percents, f"no progress text among {len({t for _, t in samples})} texts seen"
    assert len(set(percents)) >= 2, percents
    assert percents == sorted(percents) and all(0 <= p <= 100 for p in percents)
    assert any("backup of the old file" in text for _, text in samples)

    # 2. The GUI thread kept running its event loop during the upgrade.
    during = [t for t, text in samples if text.startswith(UPGRADING)]
    upgrade_s = during[-1] - during[0]
    ticks = [t for t, _ in samples if during[0] <= t <= during[-1]]
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert len(ticks) >= 5, (len(ticks), upgrade_s)
    assert max(gaps) < MAX_GAP_S, f"GUI thread blocked {max(gaps):.3f} s during the upgrade"

    # 3. Afterwards every migrated chat is listed, and the file is v4 with all turns.
    listed = set(w.sidebar.model.session_ids())
    assert listed == shown_ids, (len(listed), len(shown_ids))
    migrated = driver.run(w.store.list_sessions(include_archived=True, limit=10_000))
    assert {s.id for s in migrated} == v3_ids
    assert sum(driver.run(w.store.count_turns(sid)) for sid in v3_ids) == total_turns
    backups = list(paths.db_path(home).parent.glob("sessions.db.parley-pre-v4*.bak"))
    assert len(backups) == 1
