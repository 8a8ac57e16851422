"""The sidebar's order right after an import is the order Parley shows after a restart
(trial 16, shot-6 vs shot-9: Claude chats of 2024 below ChatGPT chats of 2023 until a
restart)."""

from __future__ import annotations

import json

import pytest

from parley.gui.dialogs import export_dialog
from parley.gui.dialogs.import_summary import ImportSummaryDialog
from tests.histories import chatgpt_export, claude_export, write_chatgpt_folder

pytestmark = pytest.mark.timeout(90)


def _summary_box(w) -> ImportSummaryDialog | None:
    boxes = [b for b in w.findChildren(ImportSummaryDialog, "import-summary") if b.isVisible()]
    return boxes[0] if boxes else None


def test_imported_chats_are_listed_newest_first_as_after_a_restart(driver, tmp_path):
    w = driver.configured()
    path = write_chatgpt_folder(tmp_path / "gpt", chatgpt_export(6), {})
    export_dialog.answers.append(path)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    _summary_box(w).accept()
    claude = tmp_path / "claude" / "conversations.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps(claude_export()), encoding="utf-8")
    export_dialog.answers.append(claude)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    _summary_box(w).accept()
    model = w.sidebar.model
    shown = model.session_ids()
    titles = [w.chat.sessions[s].title for s in shown]
    driver.run(w.chat.load_sidebar())  # as a restart lists them
    assert [w.chat.sessions[s].title for s in model.session_ids()] == titles
    stored = driver.run(w.store.list_sessions(limit=10_000))
    assert [s.id for s in stored] == shown, titles


def test_chats_imported_from_the_command_line_are_listed_as_after_a_restart(driver, tmp_path):
    """``parley --import`` twice beside the open window (a ChatGPT export of 2023, then a
    Claude one of 2024): the window lists them as a restart would."""
    import subprocess
    import sys

    from parley.core.paths import data_dir
    from parley.gui.app import _list_imported
    from parley.gui.startup.single_instance import SingleInstance

    w = driver.configured()
    instance = SingleInstance(data_dir(driver.home))
    instance.listen()
    told: list[int] = []
    instance.imported.connect(lambda: (told.append(1), _list_imported(w)))
    claude = tmp_path / "claude" / "conversations.json"
    claude.parent.mkdir()
    claude.write_text(json.dumps(claude_export()), encoding="utf-8")
    try:
        for n, export in enumerate((write_chatgpt_folder(tmp_path / "gpt", chatgpt_export(6),
                                                         {}), claude), 1):
            run = subprocess.run(
                [sys.executable, "-m", "parley.gui.app", "--import", str(export),
                 "--home", str(driver.home)], capture_output=True, text=True, timeout=60)
            assert run.returncode == 0, run.stderr
            driver.until(lambda n=n: len(told) == n, timeout=10)
        stored = [s.id for s in driver.run(w.store.list_sessions(limit=10_000))]
        model = w.sidebar.model
        driver.until(lambda: model.session_ids() == stored, timeout=10)
        titles = [s.title for s in driver.run(w.store.list_sessions(limit=10_000))]
        assert titles[0] in {"CSV totals", "Haiku"}, titles  # 2024 above 2023
    finally:
        instance.release()
