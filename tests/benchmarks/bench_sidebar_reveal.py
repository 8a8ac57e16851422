"""A chat opened from elsewhere beyond the pages listed: the sidebar lists its space up to
it (``gui.chat.list_reveal``). With 10,000 chats in one space, open the Nth chat (default:
the oldest) the way the palette does and time: its place counted in the store, the rows
read, the rows put in the list (a GUI-thread stall), to the row selected and painted.

Usage::

    python -m tests.benchmarks.bench_sidebar_reveal --sessions 10000 --at 9999
"""

from __future__ import annotations

import argparse
import asyncio
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--at", type=int, default=-1, help="the row opened (default: last)")
    parser.add_argument("--more", type=int, default=3, help='"Show more" presses timed')
    args = parser.parse_args(argv)
    from tests.benchmarks.bench_window import new_home, open_window

    home = new_home()

    from parley.core.paths import db_path
    from tests.benchmarks.gen_store import generate

    t0 = time.perf_counter()
    generate(db_path(home), args.sessions, args.sessions * 2, long=2, quiet=True)
    import sqlite3

    with sqlite3.connect(db_path(home)) as con:  # every chat in one space (General)
        con.execute("UPDATE sessions SET space_id = 'default'")
    print(f"wrote {args.sessions:,} chats in {time.perf_counter() - t0:.1f} s")

    from PySide6.QtWidgets import QApplication


    loop, window = open_window(home)
    stalls: list[float] = []

    async def settle() -> None:
        while window.tasks.pending:
            await asyncio.sleep(0.001)

    def timed(obj: object, name: str, into: dict[str, float]) -> None:
        inner = getattr(obj, name)

        def add(t: float) -> None:
            ms = (time.perf_counter() - t) * 1000
            into[name] = into.get(name, 0.0) + ms
            into[name + " max"] = max(into.get(name + " max", 0.0), ms)

        def wrapper(*a: object, **k: object) -> object:
            t = time.perf_counter()
            out = inner(*a, **k)
            if not asyncio.iscoroutine(out):
                add(t)
                return out

            async def awaited() -> object:
                try:
                    return await out
                finally:
                    add(t)

            return awaited()

        setattr(obj, name, wrapper)

    async def scenario() -> None:
        await window.startup.start()
        await settle()
        chat = window.chat
        assert chat is not None
        sidebar = window.sidebar
        space = sidebar.model.space_ids()[0]
        ids = [s.id for s in await window.store.list_sessions(space_id=space,
                                                               limit=args.sessions + 10)]
        target = ids[args.at]
        spent: dict[str, float] = {}
        timed(sidebar.model, "add_sessions", spent)
        timed(window.store, "session_position", spent)
        timed(window.store, "list_sessions", spent)
        t = time.perf_counter()
        await chat.opener.open(target)  # as the palette's open_session does, awaited
        while not (chat.session_id == target and sidebar.model.has(target)):
            await asyncio.sleep(0.001)
            if time.perf_counter() - t > 60:
                raise SystemExit("the chat was not listed in 60 s")
        await settle()
        QApplication.processEvents()
        total = (time.perf_counter() - t) * 1000
        rows = sidebar.model.loaded_count(space)
        print(f"opened row {ids.index(target):,}: listed {rows:,} rows, selected: "
              f"{sidebar.tree.currentIndex().data() is not None}; to the row shown "
              f"{total:.0f} ms (position {spent.get('session_position', 0):.1f} ms awaited, "
              f"read {spent.get('list_sessions', 0):.1f} ms awaited, rows put in the list "
              f"{spent.get('add_sessions', 0):.0f} ms GUI thread, the longest step "
              f"{spent.get('add_sessions max', 0):.0f} ms)")
        for _ in range(args.more):  # "Show more" at the end of a long list
            if not sidebar.model.has_more(space):
                break
            spent.clear()
            t = time.perf_counter()
            before = sidebar.model.loaded_count(space)
            sidebar.load_more_requested.emit(space)
            while sidebar.model.loaded_count(space) == before:
                await asyncio.sleep(0.001)
            QApplication.processEvents()
            stalls.append(spent.get("add_sessions", 0))
            print(f"Show more at {before:,}: {(time.perf_counter() - t) * 1000:.0f} ms, "
                  f"rows put in {spent.get('add_sessions', 0):.0f} ms")
        await window.shutdown()

    with loop:
        loop.run_until_complete(scenario())


if __name__ == "__main__":
    main()
