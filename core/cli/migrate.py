"""``parley --migrate-only``: upgrade sessions.db without a window, for scripted upgrades.

Opening a v3 file through :meth:`parley.core.store.store.Store.open` backs it up and
migrates it (``parley.core.store.upgrade.v3``); a v4 file written before the
conversation tree is backed up and converted (``parley.core.store.upgrade.tree``).
This command does only that, prints what was done (counts, time, the backup), and
exits. A current v4 file is opened and left untouched ("nothing was changed" is
said only when its size and mtime are as before). Where there is no sessions.db,
nothing is created: not the file, not its folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from parley.core.errors import ParleyError
from parley.core.paths import DB_NAME, DataDirError, cannot_create_reason, find_data_dir

if TYPE_CHECKING:  # the store is imported only when there is a file to open
    from parley.core.store.upgrade.migrations import UpToDateReport

#: Advice in store messages that only the window can act on, and what to say instead
#: on the command line (there is no file picker here).
_WINDOW_ADVICE = "Choose another file, or move this one away"
_COMMAND_LINE_ADVICE = "Run with --home pointing at another folder, or move this file away"
_ADVICE = "Run with --home pointing at the folder that holds sessions.db."


def for_command_line(message: str) -> str:
    """Reword advice meant for the window so a person at a terminal can follow it.

    Args:
        message: a :class:`~parley.core.errors.ParleyError` message (e.g. ``NotAParleyFile``'s).

    Returns:
        The message with "Choose another file, or move this one away" replaced by
        "Run with --home pointing at another folder, or move this file away";
        any other message unchanged.
    """
    return message.replace(_WINDOW_ADVICE, _COMMAND_LINE_ADVICE)


def migrate_only(home: Path | None = None, *, out: TextIO | None = None) -> int:
    """Upgrade the sessions.db of ``home`` (default: the data directory) in place.

    Args:
        home: the data directory (``--home``); None means ``PARLEY_HOME`` or the
            platform's user data directory. It is never created.
        out: where to print (default stdout; errors go to stderr).

    Returns:
        0 when the file is (now) current, does not exist or is empty ("Nothing
        to migrate"; nothing is created or changed), 2 when the data directory is a file or
        sessions.db could not be opened or migrated (the message says why; the
        file is left as it was).
    """
    out = out or sys.stdout
    folder = find_data_dir(home)
    path = folder / DB_NAME
    try:
        is_file = folder.exists() and not folder.is_dir()
        exists = not is_file and path.exists()
    except OSError as exc:  # a parent folder Parley may not look into
        return _refuse(DataDirError(folder, cannot_create_reason(exc), _ADVICE))
    if is_file:
        return _refuse(DataDirError(folder, "it is a file, not a folder", _ADVICE))
    if not exists:
        missing = "" if folder.is_dir() else f" (the folder {folder} does not exist)"
        print(f"Nothing to migrate: there is no sessions.db at {path}{missing}. "
              "Nothing was created.", file=out)
        return 0
    if path.stat().st_size == 0:  # Store.open would set it up as a new v4 file
        print(f"Nothing to migrate: {path} is empty (0 bytes). Nothing was changed; Parley "
              "sets it up as a new file when it starts.", file=out)
        return 0
    return _migrate(path, out)


def _refuse(error: DataDirError) -> int:
    print(error.message, file=sys.stderr)
    return 2


def _migrate(path: Path, out: TextIO) -> int:
    import asyncio

    from parley.core.store.upgrade.migrations import UpToDateReport
    from parley.core.workspace import Workspace

    shown = False
    live = out.isatty()  # a pipe or a log gets the result only, not a rewritten line

    def progress(done: int, total: int) -> None:
        nonlocal shown
        if total and live:
            shown = True
            print(f"\rMigrating… {done * 100 // total}%", end="", file=out, flush=True)

    async def migrate() -> Any:
        async with Workspace(target=path) as workspace:  # the changed-while-closed
            store = await workspace.open_store(progress, watch_closed=False)  # check: the window's
            return store.migration_report

    before = _stamp(path)
    try:
        report = asyncio.run(migrate())
    except ParleyError as err:
        if shown:
            print(file=out)  # end the progress line
        print(f"Parley could not migrate the file: {for_command_line(err.message)}",
              file=sys.stderr)
        return 2
    if shown:
        print(file=out)  # end the progress line
    if report is None:
        print(_unchanged(path, before), file=out)
    elif isinstance(report, UpToDateReport):
        print(up_to_date_words(path, report), file=out)
    else:
        print(
            f"Migrated {path}: {report.sessions} sessions, {report.turns} turns "
            f"({report.recovered_turns} damaged turns kept as recovered text), "
            f"{report.spaces} spaces, in {report.seconds:.1f} s.\n"
            f"Backup of the old file: {report.backup_path}",
            file=out,
        )
    return 0


def _stamp(path: Path) -> tuple[int, int]:
    """``(size in bytes, mtime in ns)`` of ``path``: a write changes one or the other."""
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _unchanged(path: Path, before: tuple[int, int]) -> str:
    """The words for a file that needed no upgrade, true to whether it was written."""
    if _stamp(path) == before:
        return f"{path} is already in the current format; nothing was changed."
    # Opening set it up for use: WAL mode or the default space, written by another tool.
    return (f"{path} is already in the current format; Parley only set it up for use "
            "(journal mode, default space). No chat was changed.")


def up_to_date_words(path: Path, report: UpToDateReport) -> str:
    """What bringing an older v4 file up to date did, for the command line.

    Args:
        path: sessions.db.
        report: ``Store.migration_report`` after the open
            (``parley.core.store.upgrade.migrations.UpToDateReport``).

    Returns:
        E.g. "Brought <path> up to date: 12 edits and regenerations folded into their
        5 chats as branches, in 0.4 s." and "Backup of the old file: <path>" on a
        second line when a backup was taken (the conversation tree); for an addition
        that changes no chat, what was added.
    """
    took = f"in {report.seconds:.1f} s"
    if report.backup_path is None:
        return (f"Brought {path} up to date ({'; '.join(report.added)}), {took}. "
                "No chat was changed.")
    if report.folded == 0:
        what = ("its chats now keep edits and regenerations as branches (it had none "
                "to fold)")
    elif report.folded == 1:
        what = "1 edit or regeneration folded into its chat as a branch"
    else:
        chats = "their chat" if report.chats == 1 else f"their {report.chats} chats"
        what = f"{report.folded} edits and regenerations folded into {chats} as branches"
    return (f"Brought {path} up to date: {what}, {took}.\n"
            f"Backup of the old file: {report.backup_path}")
