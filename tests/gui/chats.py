"""Chats made for GUI tests straight in the window's store (as an import would)."""

from __future__ import annotations

from typing import Any

from parley.core.content import TextBlock, Turn


def long_chat(driver: Any, w: Any, n: int, title: str = "Long chat") -> tuple[str, list[Turn]]:
    """Save a chat of ``n`` turns ("message i" repeated, user and assistant in turn)
    in the window's store and list it in the sidebar; return its id and turns."""
    s = driver.run(w.store.create_session(title=title, model=w.chat.current_model()))
    turns = [Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i} " * 5)])
             for i in range(n)]

    async def fill() -> None:
        for t in turns:
            await w.store.append_turn(s.id, t)

    driver.run(fill(), timeout=60)
    driver.run(w.chat.load_sidebar())
    return s.id, turns
