"""``parley --migrate-only``: upgrade sessions.db without a window, for scripted upgrades.

Opening a v3 file through :meth:`core.store.store.Store.open` backs it up and
migrates it (shared/spec/v3-format.md); this command does only that, prints
the counts, and exits. A v4 file is opened and left untouched.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from core.errors import ParleyError
from core.paths import db_path


def migrate_only(home: Path | None = None, *, out: TextIO | None = None) -> int:
    """Upgrade the sessions.db of ``home`` (default: the data directory) in place.

    Args:
        home: the data directory (``--home``); None means ``PARLEY_HOME`` or the
            platform's user data directory.
        out: where to print (default stdout; errors go to stderr).

    Returns:
        0 when the file is (now) current or does not exist, 2 when it could not
        be opened or migrated (the message says why; the file is left as it was).
    """
    from core.store.store import Store

    out = out or sys.stdout
    path = db_path(home)
    if not path.exists():
        print(f"Nothing to migrate: there is no sessions.db at {path}.", file=out)
        return 0

    def progress(done: int, total: int) -> None:
        if total:
            print(f"\rMigrating… {done * 100 // total}%", end="", file=out, flush=True)

    try:
        store = Store.open(path, progress=progress)
    except ParleyError as err:
        print(f"\nParley could not migrate {path}: {err.message}", file=sys.stderr)
        return 2
    try:
        report = store.migration_report
    finally:
        store.close()
    if report is None:
        print(f"{path} is already in the current format; nothing was changed.", file=out)
        return 0
    print(
        f"\nMigrated {path}: {report.sessions} sessions, {report.turns} turns "
        f"({report.recovered_turns} damaged turns kept as recovered text), "
        f"{report.spaces} spaces, in {report.seconds:.1f} s.\n"
        f"Backup of the old file: {report.backup_path}",
        file=out,
    )
    return 0
