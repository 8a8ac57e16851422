"""What start-up tells the person about the file and the last run.

An older sessions.db upgraded as it opens: its progress while it runs
(:func:`upgrade_progress`), then the words kept (:func:`note_upgrade`) and shown once
the window is ready. The previous run, if it did not exit cleanly: recorded as this run
starts (:func:`note_previous_run`) and what it left told once a chat shows
(:func:`tell_previous_run`). Once ready, the notices kept until then and the offer of a
rescue copy (:func:`show_kept`). The start-up state machine
(``parley.gui.startup.phases``) says when.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.gui.window.base import WindowBase

log = logging.getLogger(__name__)
#: How long the notice of a v3 upgrade shows (ms; longer while the pointer rests on it).
UPGRADE_NOTICE_MS = 30_000


def upgrade_progress(window: WindowBase, done: int, total: int) -> None:
    """Shown while an older sessions.db is upgraded (a backup is made first), in the
    chat page (the message box stays usable) and on the loading page."""
    percent = f" {100 * done // total}%" if total else ""
    text = (f"Upgrading your chats to the new format…{percent}\n"
            "A backup of the old file is kept next to it.")
    window.loading_page.setText(text)
    if window.transcript is None:  # a message sent meanwhile: still said kept
        window._transcript_slot.setText(window.startup.kept_note.with_note(text))


def note_upgrade(window: WindowBase) -> None:
    """The store upgraded the file as it opened (v3, or the conversation tree added):
    keep the words to tell (``window.upgrade_notice``) and log them."""
    from parley.core.recovery.upgrade_notice import upgrade_notice

    assert window.store is not None
    window.upgrade_notice = upgrade_notice(window.store.migration_report)
    if window.upgrade_notice:
        log.info("%s", window.upgrade_notice)


async def note_previous_run(window: WindowBase) -> None:
    """Record this run (``Workspace.note_run``) and keep what the last one left if it
    did not exit cleanly (a cut-off reply, an unanswered message, an interrupted
    compaction) as ``window.previous_run``."""
    assert window.workspace is not None
    window.previous_run = await window.workspace.note_run()


def tell_previous_run(window: WindowBase) -> None:
    """Show what the previous run left (:func:`note_previous_run`), if anything."""
    run = window.previous_run
    notice = run.notice() if run is not None else None
    if notice:
        window.undo.notice(notice)


def show_kept(window: WindowBase) -> None:
    """Start-up is ready: the notices kept until now (after a recovery, a v3 upgrade)
    are shown, and a rescue copy saved elsewhere (sessions.db could not take the chats)
    is offered."""
    if window.pending_notice:
        window.undo.notice(window.pending_notice, 15_000)
        window.pending_notice = None
    if window.upgrade_notice:  # a v3 file was upgraded as it opened: say so, and where
        window.undo.notice(window.upgrade_notice, UPGRADE_NOTICE_MS)
    from parley.gui.database.rescued_offer import offer_rescued

    window.tasks.spawn(offer_rescued(window, window), name="rescued")
