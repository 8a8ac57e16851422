"""When automatic backups are made: at most every N minutes while Parley is used, and at quit.

:class:`BackupScheduler` watches an open :class:`parley.core.store.async_store.AsyncStore`:
every :data:`CHECK_EVERY_S` it makes a backup (``parley.core.store.sqlite.backups.make_backup``)
when something was written since the last one (``AsyncStore.changes``: chats,
spaces, settings; not the window's geometry) and the last one is at least the
``backups.interval_minutes`` setting old. :meth:`BackupScheduler.close` makes a
last one at quit, if anything changed since. Backups run on a thread of their
own (never the store's thread, never the GUI's), one at a time; after each the
folder is rotated (``parley.core.store.sqlite.backups.rotate``).

A backup whose copy fails its check means sessions.db itself is damaged: the
scheduler then calls ``on_damaged`` (the window shows its recovery page) and
makes no more backups, so the rotation never replaces a sound backup.
Nothing here imports Qt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from parley.core.settings import Settings, spec
from parley.core.store.errors import BackupError, SourceDamaged
from parley.core.store.sqlite import backups, partials
from parley.core.store.sqlite.backups import Backup

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

INTERVAL_KEY = "backups.interval_minutes"
#: How often the scheduler looks whether a backup is due (seconds).
CHECK_EVERY_S = 60.0


def _log_failure(task: asyncio.Future[Any]) -> None:
    """A backup started by the timer failed with a bug (not a BackupError): log it."""
    if not task.cancelled() and task.exception() is not None:
        log.error("automatic backup failed", exc_info=task.exception())


class BackupScheduler:
    """Automatic backups of one open store.

    Args:
        store: the open ``AsyncStore`` (its ``path``, ``changes``, ``damaged``,
            ``report_damage``).
        interval_min: at most one backup per this many minutes (the setting's
            value; :meth:`start` reads it and follows its changes).
        check_every_s: how often to look whether one is due (seconds).
        on_made: called on the event loop with each new backup.
        on_error: called on the event loop with a backup that failed (no space…).
        on_damaged: called once when a backup finds sessions.db damaged.
        now: the clock (local time).

    Attributes:
        last: the newest automatic backup (from the folder at :meth:`start`), or None.
        last_error: the last failure's message, or None after a success.
    """

    def __init__(
        self,
        store: AsyncStore,
        *,
        interval_min: float | None = None,
        check_every_s: float = CHECK_EVERY_S,
        on_made: Callable[[Backup], None] | None = None,
        on_error: Callable[[BackupError], None] | None = None,
        on_damaged: Callable[[], None] | None = None,
        now: Callable[[], datetime] = datetime.now,
    ) -> None:
        self.store = store
        self.interval_min = float(interval_min if interval_min is not None
                                  else spec(INTERVAL_KEY).default)
        self.check_every_s = check_every_s
        self.on_made, self.on_error, self.on_damaged = on_made, on_error, on_damaged
        self.now = now
        self.last: Backup | None = None
        self.last_error: str | None = None
        self._backed_up_changes = 0  # store.changes when the last backup started
        self._timer: asyncio.TimerHandle | None = None
        self._running: asyncio.Task[Backup | None] | None = None
        self._stopped = False
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def folder(self) -> Any:
        """Where the backups go (``backups/`` beside sessions.db)."""
        return backups.folder_of(self.store.path)

    async def start(self, settings: Settings | None = None) -> None:
        """Remove unfinished copies a killed backup left, find the last backup, read the
        interval setting, start looking every minute."""
        folder = self.folder
        self.last = await asyncio.to_thread(self._find_last, folder)
        if settings is not None:
            self.interval_min = float(await settings.get(INTERVAL_KEY))
            self._unsubscribe = settings.on_change(self._setting_changed)
        self._arm()

    def _find_last(self, folder: Any) -> Backup | None:
        backups.secure(folder)  # backups an older Parley made readable to others
        for path in partials.remove_leftovers(folder):  # copies a killed backup left
            log.info("removed the unfinished backup %s", path)
        return backups.last_backup(self.store.path)

    def _setting_changed(self, key: str, value: Any) -> None:
        if key == INTERVAL_KEY:
            self.interval_min = float(value)

    def _arm(self) -> None:
        if self._stopped:
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.check_every_s, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if self.due():
            self._running = asyncio.ensure_future(self._backup())
            self._running.add_done_callback(_log_failure)
        self._arm()

    def changed(self) -> bool:
        """True when something was written since the last backup started."""
        return int(self.store.changes) != self._backed_up_changes

    def due(self) -> bool:
        """True when a backup should be made now (changed, old enough, none running)."""
        if self._stopped or self._busy() or not self.changed() or self._damaged():
            return False
        if self.last is None:
            return True
        return self.now() - self.last.made_at >= timedelta(minutes=self.interval_min)

    def _busy(self) -> bool:
        return self._running is not None and not self._running.done()

    def _damaged(self) -> bool:
        return self.store.damaged

    async def backup_now(self) -> Backup | None:
        """Make a backup now (or wait for the one being made); None if none was made."""
        if self._busy():
            assert self._running is not None
            return await asyncio.shield(self._running)
        self._running = asyncio.ensure_future(self._backup())
        return await asyncio.shield(self._running)

    async def _backup(self) -> Backup | None:
        if self._damaged():
            return None
        changes = int(self.store.changes)
        path, when = self.store.path, self.now()
        try:
            made = await asyncio.to_thread(backups.make_backup, path, now=when)
        except SourceDamaged as exc:
            log.error("%s", exc.message)
            self.last_error = exc.message
            self._stopped = True  # never rotate a sound backup away for a damaged one
            await self.store.report_damage()  # no more writes; the next start checks it whole
            if self.on_damaged is not None:
                self.on_damaged()
            return None
        except BackupError as exc:
            log.warning("%s", exc.message)
            self.last_error = exc.message
            if self.on_error is not None:
                self.on_error(exc)
            return None
        self._backed_up_changes = changes
        self.last, self.last_error = made, None
        gone = await asyncio.to_thread(backups.rotate, made.path.parent, when)
        log.info("backup %s made (%d turns); rotated away %d", made.path.name, made.turns or 0,
                 len(gone))
        if self.on_made is not None:
            self.on_made(made)
        return made

    async def close(self, *, final: bool = True) -> Backup | None:
        """Stop looking; finish a backup being made; with ``final`` make a last one if
        anything changed since the previous (call at quit, before or after the store
        closes). Returns the last backup made here, if any."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        made = None
        if self._running is not None and not self._running.done():
            with contextlib.suppress(Exception):
                made = await asyncio.shield(self._running)
        if final and not self._stopped and self.changed():
            made = await self.backup_now()
        self._stopped = True
        return made
