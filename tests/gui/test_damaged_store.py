"""The window when sessions.db turns out damaged while it is open (core.store.damage)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from core import paths
from core.content import TextBlock, Turn
from core.store import Store
from core.store.errors import DatabaseCorrupt
from tests.core.damaged import damage_search_index

pytestmark = pytest.mark.timeout(60)


def test_damage_found_while_open_is_told_once_and_nothing_more_is_written(
    driver: Any, home: Path
) -> None:
    w = driver.configured()
    path = paths.db_path(home)
    driver.close(w)
    with Store.open(path) as store:
        sound = store.create_session().id
        store.append_turn(sound, Turn("user", [TextBlock("an early question")]))
        for i in range(300):
            store.append_turn(sound, Turn("user", [TextBlock(f"word{i} " * 80)]))
    damage_search_index(path)

    w = driver.open()
    problems: list[str] = []
    w.show_problem = lambda error: problems.append(error.message)
    with pytest.raises(DatabaseCorrupt):
        driver.run(w.store.search("word7"))  # what the search panel runs
    driver.until(lambda: problems)
    assert "stopped saving" in problems[0] and "start it again" in problems[0]
    before = hashlib.sha256(path.read_bytes()).hexdigest()

    w.open_session(sound)
    driver.until(lambda: w.session_id == sound and w.tasks.pending == 0)
    driver.send("one more message")
    driver.until(lambda: w.tasks.pending == 0)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert len(problems) == 1  # said once, not at every refused write
