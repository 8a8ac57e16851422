"""What Parley tells a person after it upgraded their sessions.db from the v3 format.

The upgrade (``parley.core.store.upgrade.v3.upgrade_file``) runs while the store opens and
backs the old file up first; its report (``Store.migration_report``) says how
many chats were upgraded and where the backup is. An upgrade is never silent:
the window shows :func:`upgrade_notice`'s words once the chats show, and the
log has the same line.
"""

from __future__ import annotations

from typing import Any


def upgrade_notice(report: Any) -> str | None:
    """The words for an upgrade just made, or None when nothing was upgraded.

    Args:
        report: a ``parley.core.store.upgrade.v3.MigrationReport`` (``sessions``, ``backup_path``),
            or None (the file was already current).

    Returns:
        "Parley upgraded your 218 chats to its new format. The old file is kept
        as a backup at <path> — …", or None when ``report`` is None or made no
        backup (the file was already current).
    """
    backup = getattr(report, "backup_path", None)
    if report is None or backup is None:
        return None
    count = int(getattr(report, "sessions", 0))
    chats = "your chat" if count == 1 else f"your {count:,} chats"
    return (f"Parley upgraded {chats} to its new format. The old file is kept as a backup "
            f"at {backup} — an older Parley can still open that copy.")
