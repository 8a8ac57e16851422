"""sessions.db as a kill or damage leaves it, and the window started on it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from parley.core import paths
from parley.core.content import TextBlock, Turn
from parley.core.store import Store


def as_if_killed(driver: Any, w: Any, home: Path) -> None:
    """What the file holds now becomes sessions.db as a kill would leave it: the window
    is closed, then its file replaced by a copy taken while it ran."""
    path = w.store.path
    snapshot = home / "snapshot.db"
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    dst = sqlite3.connect(snapshot)
    src.backup(dst)
    src.close()
    dst.close()
    driver.close(w)
    for p in home.iterdir():
        if p.name.startswith(path.name):
            p.unlink()
    snapshot.rename(path)


def set_up_then_closed(driver: Any, home: Path) -> Path:
    """A home taken through first-run set-up, its window closed (the backup at quit
    holds the set-up's settings); returns its sessions.db."""
    driver.close(driver.set_up())
    return paths.db_path(home)


def stored_long_chat(path: Path, n: int = 300, title: str = "Long chat") -> str:
    with Store.open(path) as store:
        chat = store.create_session(title=title)
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            store.append_turn(chat.id, Turn(role, [TextBlock(f"turn {i} " + "x" * 500)]))
        store.set_state("session.last", chat.id)  # reopened at start
        return chat.id


def start_window(driver: Any, home: Path) -> Any:
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=home, env={})
    driver.windows.append(w)
    w.show()
    w.startup.start_after_first_paint()
    return w


def successor_of(driver: Any, w: Any) -> Any:
    """The window that took ``w``'s place after a recovery, once ready."""
    driver.until(lambda: w.successor is not None, 30)
    new = w.successor
    driver.windows.remove(w)
    driver.windows.append(new)
    driver.until(lambda: new.ready and new.tasks.pending == 0, 40)
    return new


def made_chat(w: Any, driver: Any) -> str:
    sessions = driver.run(w.store.list_sessions())
    return next(s.id for s in sessions if s.title == "Long chat")
