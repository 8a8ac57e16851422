"""After the in-app v3 upgrade the window says how many chats were upgraded and where the
backup is, and the log says the same (real window, a generated v3 sessions.db)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from parley.core import paths
from parley.core.recovery.upgrade_notice import upgrade_notice
from tests.v3gen import generate


def test_the_window_tells_how_many_chats_were_upgraded_and_where_the_backup_is(
    driver, home, caplog
):
    gen = generate(paths.db_path(home), seed=3, sessions=4, turns_per_session=6)
    assert gen.expected is not None
    count = len(gen.expected.sessions)
    with caplog.at_level(logging.INFO, logger="parley.gui.startup.notices"):
        w = driver.open()
    (backup,) = paths.db_path(home).parent.glob("sessions.db.parley-pre-v4*.bak")
    driver.until(lambda: w.toast.message != "", timeout=10)
    told = w.toast.message
    assert f"upgraded your {count} chats" in told and str(backup) in told
    assert w.toast.isVisible() and w.toast.remaining_ms > 15_000
    assert told in caplog.text  # the same words in the log

    driver.close(w)
    w = driver.open()  # opened again: nothing was upgraded, nothing is said
    driver.qtbot.wait(200)
    assert "upgraded" not in w.toast.message


def test_the_window_tells_what_the_conversation_tree_conversion_did(driver, home, caplog):
    import shutil

    from tests.core.tree_conversion_check import DB

    shutil.copy(DB, paths.db_path(home))
    with caplog.at_level(logging.INFO, logger="parley.gui.startup.notices"):
        w = driver.open()
    backup = paths.db_path(home).with_name("sessions.db.parley-pre-tree.bak")
    driver.until(lambda: w.toast.message != "", timeout=10)
    told = w.toast.message
    assert told.startswith("Parley brought your chats up to date: ")
    assert "edits and regenerations are now branches of their chats" in told
    assert str(backup) in told and backup.exists()
    assert told in caplog.text

    driver.close(w)
    w = driver.open()  # converted now: nothing is said
    driver.qtbot.wait(200)
    assert "up to date" not in w.toast.message


def test_the_notice_words() -> None:
    one = SimpleNamespace(sessions=1, backup_path="/x/sessions.db.bak")
    many = SimpleNamespace(sessions=1218, backup_path="/x/b.bak")
    assert upgrade_notice(one).startswith("Parley upgraded your chat to its new format.")
    assert "your 1,218 chats" in upgrade_notice(many) and "/x/b.bak" in upgrade_notice(many)
    assert upgrade_notice(None) is None
    assert upgrade_notice(SimpleNamespace(sessions=0, backup_path=None)) is None


def test_the_notice_words_after_the_conversation_tree_was_added() -> None:
    from pathlib import Path

    from parley.core.store.upgrade.migrations import UpToDateReport

    bak = Path("/x/sessions.db.parley-pre-tree.bak")
    many = upgrade_notice(UpToDateReport(["tree"], bak, folded=1218, chats=40, seconds=1.0))
    assert many is not None
    assert many.startswith("Parley brought your chats up to date: 1,218 edits and "
                           "regenerations are now branches of their chats.")
    assert str(bak) in many and "0 chats" not in many
    one = upgrade_notice(UpToDateReport(["tree"], bak, folded=1, chats=1, seconds=1.0))
    assert one is not None and "1 edit or regeneration is now a branch of its chat" in one
    # Tables added without a conversion: no backup, nothing a person would notice.
    assert upgrade_notice(UpToDateReport(["attachments"], None, 0, 0, 0.1)) is None
