"""Chats made for GUI tests straight in the window's store (as an import would)."""

from __future__ import annotations

from typing import Any

from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn


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


def tool_chat(driver: Any, w: Any) -> str:
    """Save and open a chat whose reply read a file with a tool (eight lines of output);
    return its id."""
    s = driver.run(w.store.create_session(title="Tools", model=w.chat.current_model()))
    out = "\n".join(f"row {i}, value {i * 7}, a fairly long line of tool output here"
                    for i in range(8))
    for turn in (
        Turn("user", [TextBlock("Read data.csv")]),
        Turn("assistant", [TextBlock("Reading it."),
                           ToolUseBlock("t1", "read_file", {"path": "data.csv"})]),
        Turn("user", [ToolResultBlock("t1", (TextBlock(out),))]),
        Turn("assistant", [TextBlock("Done: 8 rows.")]),
    ):
        driver.run(w.store.append_turn(s.id, turn))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    return s.id


def context_count(driver: Any, w: Any, sid: str) -> int:
    """What the meter should show: the chat's context turns read afresh, counted with the
    system prompt and tools its next request sends — learnt first when not known yet
    (the meter's own background task: counted before it ends, the tools would be missed)."""
    from parley.gui.header.context_meter import measure

    w.chat.meter.next_request_shape(sid)
    driver.until(lambda: w.tasks.pending == 0, timeout=20)
    turns = driver.run(w.store.context_turns(sid))
    shape = w.chat.meter.next_request_shape(sid)
    return int(measure(turns, None, w.chat.current_model(), w.hub, shape)[0])
