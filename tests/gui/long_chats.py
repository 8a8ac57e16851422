"""A 400-turn chat's rows and cards, and the window reopened on it: shared by the long-chat
tests."""

from __future__ import annotations

from typing import Any

N = 400
SUMMARY = ("<summary>The user counted messages from 0 upwards, one per turn, and the "
           "assistant repeated each number back five times.\n"  # long enough for 396 turns:
           # parley.core.compaction.check refuses a summary under 2 % of what it replaces
           + "".join(f"- Messages {k} to {k + 39}: counted and repeated back, none skipped.\n"
                     for k in range(0, 400, 40))
           + "</summary>")


def rows(w: Any) -> list[Any]:
    return list(w.transcript.model.rows)


def card_text(w: Any, row: int = 0) -> str:
    return str(w.transcript.list_view.layout_of(row, fresh=True).plain_text())


def restart(driver: Any, w: Any, sid: str) -> Any:
    """Close the window and open a new one on the same sessions.db (the chat reopens)."""
    driver.close(w)
    w2 = driver.open()
    driver.until(lambda: w2.chat.session_id == sid and rows(w2), timeout=20)
    return w2
