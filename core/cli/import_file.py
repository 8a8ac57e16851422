"""``parley --import FILE``: import a chat history or a conversation without a window.

For scripts and for people moving a whole history: the file is imported into
the store the window would open, exactly as File ▸ Import does: the PostgreSQL
database of ``--database`` / ``PARLEY_DATABASE_URL`` / the choice saved in
Settings → Storage, else the sessions.db of ``--home`` (default: ``PARLEY_HOME``
or the user data folder, created when missing)
(``parley.core.importing.files.import_path``), the summary is printed (its line, then
every file left out under "Not in the export:" and "Refused, with the reason:"), and the exit
status says how it went: 0 imported (also when everything was imported
before), 2 refused or failed (the reason on stderr; nothing was imported), a
database that cannot be reached or used included (the store's typed error's words).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from parley.core.errors import ParleyError

__all__ = ["import_only"]


def import_only(file: str | Path, home: Path | None = None, *, database: str | None = None,
                out: TextIO | None = None, err: TextIO | None = None,
                on_new: Callable[[], None] | None = None) -> int:
    """Import ``file`` into the current store and print the summary.

    Args:
        file: the file to import (a ChatGPT / Claude.ai / Open WebUI export, a
            Parley export, a Parley database — sessions.db, a backup, a rescue copy —
            merged by ids, Anthropic or OpenAI messages).
        home: the data folder (``--home``); None: ``PARLEY_HOME`` or the default.
        database: the PostgreSQL address given as ``--database`` (None: then
            ``PARLEY_DATABASE_URL``, then the choice saved in the data folder, then
            its sessions.db: ``parley.core.store.backends.database_url``).
        out: where the summary goes (default stdout).
        err: where a refusal goes (default stderr).
        on_new: called after chats were imported (not when nothing was new), e.g. to
            tell a window open on the data folder to list them.

    Returns:
        0 when the file was imported (the summary says what), 2 when it was
        refused or could not be read or written (the reason says why).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    path = Path(file).expanduser()
    try:
        summary, new = asyncio.run(_run(path, home, database, out))
    except ParleyError as exc:
        print(f"Parley did not import {path}: {_for_command_line(exc.message)}", file=err)
        return 2
    except OSError as exc:
        print(f"Parley did not import {path}: it cannot be read "
              f"({exc.strerror or exc}). Nothing was imported.", file=err)
        return 2
    print(summary, file=out)
    if new and on_new is not None:
        on_new()
    return 0


def _for_command_line(message: str) -> str:
    from parley.core.cli.migrate import for_command_line

    return for_command_line(message)


async def _run(path: Path, home: Path | None, database: str | None, out: TextIO
               ) -> tuple[str, bool]:
    """Import ``path``; return the summary (its line, naming a database imported into,
    then ``ImportSummary.details_text``: every file left out, under two headings) and
    whether chats came in."""
    from parley.core.importing.files import import_path
    from parley.core.workspace import Workspace

    if not path.is_file():
        raise OSError(2, "there is no such file" if not path.exists() else "it is not a file")
    workspace = Workspace(home, database=database)
    url = workspace.database_url()  # InvalidDatabaseUrl: refused, nothing opened
    live = out.isatty()
    loop = asyncio.get_running_loop()

    def show(done: int, total: int) -> None:
        print(f"\rImporting… {done:,} of {total:,}", end="", file=out, flush=True)

    def progress(done: int, total: int) -> None:  # on the store's thread
        if live and (done == total or done % 25 == 0):
            loop.call_soon_threadsafe(show, done, total)

    async with workspace:
        try:
            summary = await import_path(await workspace.open_store(), path, progress=progress)
        finally:
            if live:
                print(file=out)
    line = summary.line(path.name)
    if url is not None:
        from parley.core.store.postgres.store import parse_url, redact

        line += f" Into the database {redact(parse_url(url))}."
    details = summary.details_text()  # every file left out, under the Details headings
    return (f"{line}\n{details}" if details else line), summary.changed
