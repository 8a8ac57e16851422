"""``parley --import FILE``: import a chat history or a conversation without a window.

For scripts and for people moving a whole history: the file is imported into
the sessions.db of ``--home`` (default: ``PARLEY_HOME`` or the user data
folder, created when missing) exactly as File ▸ Import does
(``parley.core.importing.files.import_path``), the summary is printed, and the exit
status says how it went: 0 imported (also when everything was imported
before), 2 refused or failed (the reason on stderr; nothing was imported).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TextIO

from parley.core.errors import ParleyError

__all__ = ["import_only"]


def import_only(file: str | Path, home: Path | None = None, *, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    """Import ``file`` into the data folder's sessions.db and print the summary.

    Args:
        file: the file to import (a ChatGPT / Claude.ai / Open WebUI export, a
            Parley export, Anthropic or OpenAI messages).
        home: the data folder (``--home``); None: ``PARLEY_HOME`` or the default.
        out: where the summary goes (default stdout).
        err: where a refusal goes (default stderr).

    Returns:
        0 when the file was imported (the summary says what), 2 when it was
        refused or could not be read or written (the reason says why).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    path = Path(file).expanduser()
    try:
        summary = asyncio.run(_run(path, home, out))
    except ParleyError as exc:
        print(f"Parley did not import {path}: {_for_command_line(exc.message)}", file=err)
        return 2
    except OSError as exc:
        print(f"Parley did not import {path}: it cannot be read "
              f"({exc.strerror or exc}). Nothing was imported.", file=err)
        return 2
    print(summary, file=out)
    return 0


def _for_command_line(message: str) -> str:
    from parley.core.cli.migrate import for_command_line

    return for_command_line(message)


async def _run(path: Path, home: Path | None, out: TextIO) -> str:
    from parley.core.importing.files import import_path
    from parley.core.paths import DB_NAME, data_dir
    from parley.core.store.async_store import AsyncStore

    if not path.is_file():
        raise OSError(2, "there is no such file" if not path.exists() else "it is not a file")
    store = await AsyncStore.open(data_dir(home) / DB_NAME)
    live = out.isatty()
    loop = asyncio.get_running_loop()

    def show(done: int, total: int) -> None:
        print(f"\rImporting… {done:,} of {total:,}", end="", file=out, flush=True)

    def progress(done: int, total: int) -> None:  # on the store's thread
        if live and (done == total or done % 25 == 0):
            loop.call_soon_threadsafe(show, done, total)

    try:
        summary = await import_path(store, path, progress=progress)
    finally:
        await store.close()
        if live:
            print(file=out)
    return summary.line(path.name)
