"""What Parley tells a person after it upgraded their sessions.db to the current format.

The upgrade from the v3 format (``parley.core.store.upgrade.v3.upgrade_file``) and the
conversation tree added to an older v4 file (``parley.core.store.upgrade.tree``, issue 32)
run while the store opens and back the old file up first; their report
(``Store.migration_report``) says what was upgraded and where the backup is. An
upgrade is never silent: the window shows :func:`upgrade_notice`'s words once the
chats show, and the log has the same line.
"""

from __future__ import annotations

from typing import Any

from parley.core.store.upgrade.migrations import UpToDateReport


def upgrade_notice(report: Any) -> str | None:
    """The words for an upgrade just made, or None when nothing was upgraded.

    Args:
        report: a ``parley.core.store.upgrade.v3.MigrationReport`` (``sessions``, ``backup_path``),
            an :class:`~parley.core.store.upgrade.migrations.UpToDateReport`, or None
            (the file was already current).

    Returns:
        "Parley upgraded your 218 chats to its new format. The old file is kept
        as a backup at <path> — …"; for the conversation tree "Parley brought your
        chats up to date: 12 edits and regenerations are now branches of their
        chats. The old file …"; None when ``report`` is None or made no backup
        (nothing a person would notice was changed).
    """
    backup = getattr(report, "backup_path", None)
    if report is None or backup is None:
        return None
    kept = (f"The old file is kept as a backup at {backup} — an older Parley can still "
            "open that copy.")
    if isinstance(report, UpToDateReport):
        if report.folded == 0:
            what = "from now on, edits and regenerations are kept as branches of their chat"
        elif report.folded == 1:
            what = "1 edit or regeneration is now a branch of its chat"
        else:
            what = (f"{report.folded:,} edits and regenerations are now branches of "
                    "their chats")
        return f"Parley brought your chats up to date: {what}. {kept}"
    count = int(getattr(report, "sessions", 0))
    chats = "your chat" if count == 1 else f"your {count:,} chats"
    return f"Parley upgraded {chats} to its new format. {kept}"
