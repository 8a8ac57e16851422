"""``parley --copy-to TARGET``: copy every chat to a PostgreSQL database, or back to a file.

The source is the store Parley would open: the PostgreSQL database of ``--database`` /
``PARLEY_DATABASE_URL`` / the choice saved in Settings → Storage, else the sessions.db
of the data folder (``--home``). ``TARGET`` is a ``postgresql://`` URL (an empty
database: Parley sets it up) or a new sessions.db path. The copy is verified
(:mod:`parley.core.store.transfer`) and the source is only read. Prints what was copied,
or why nothing was, and exits.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from parley.core.errors import ParleyError
from parley.core.paths import DB_NAME, find_data_dir


def copy_only(target: str, home: Path | None = None, database: str | None = None, *,
              out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Copy the chats of the current store to ``target``.

    Args:
        target: ``postgresql://…`` or a path for a new sessions.db.
        home: the data folder (``--home``); None: ``PARLEY_HOME`` or the default.
        database: the source database URL (``--database``), if any; else
            ``PARLEY_DATABASE_URL``, then the choice saved in the data folder.
        out: where to print the result (default stdout); errors and progress go to ``err``
            (default stderr).

    Returns:
        0 when copied and verified; 2 when nothing was copied (the message says why):
        also for a source or target that looks like an address but is not a complete
        PostgreSQL one (``postgressql://…``, a port that is not a number).
    """
    from parley.core.store.backends import open_store
    from parley.core.store.postgres.store import is_database_url, looks_like_address, parse_url
    from parley.core.store.transfer import copy_store
    from parley.core.workspace import Workspace

    out = out or sys.stdout
    err = err or sys.stderr
    source_path = find_data_dir(home) / DB_NAME
    try:  # the store the window would open (nothing is created)
        source_url = Workspace(home, database=database).database_url()
        if looks_like_address(target):
            parse_url(target)  # a mistyped address is refused, never made a file
    except ParleyError as exc:
        print(exc.message, file=err)
        return 2
    if source_url is None and not source_path.exists():
        print(f"Nothing to copy: there is no {source_path}.", file=err)
        return 2
    if not is_database_url(target):
        target = str(Path(target).expanduser().absolute())
        if source_url is None and Path(target) == source_path:
            print("The copy must go somewhere else than the original.", file=err)
            return 2
        if Path(target).is_dir():
            print(f"Nothing was copied: {target} is a folder. --copy-to needs the path of a "
                  f"new file (for example {Path(target) / 'copy.db'}) or the address of an "
                  "empty PostgreSQL database (postgresql://user@host:5432/parley).", file=err)
            return 2
    shown = [-1]

    def progress(done: int, total: int) -> None:
        percent = 100 * done // max(1, total)
        if percent >= shown[0] + 10 or done == total:
            shown[0] = percent
            print(f"copying… {percent}%", file=err, flush=True)

    try:  # both stores on this thread: the copy is synchronous, one batch after another
        source = open_store(source_url or source_path)
        try:
            dest = open_store(target)
            try:
                report = copy_store(source, dest, progress)
                where = getattr(dest, "where", None) or dest.path
            finally:
                dest.close()
        finally:
            source.close()
    except ParleyError as exc:
        print(exc.message, file=err)
        return 2
    print(f"Copied {report.summary()} to {where}. Verified: every message and count "
          "matches the original, which was not changed.", file=out)
    return 0
