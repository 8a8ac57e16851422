"""When a draft is written while it is typed: a moment after typing stops, and at
least twice a second while it goes on.

A pure debounce (write :data:`QUIET_MS` after the last keystroke) never fires while
someone keeps typing, so a kill after a minute of steady typing lost the whole
draft. :class:`DraftTimer` adds a ceiling: the first keystroke not yet written
starts a second clock, and the draft is written :data:`LONGEST_MS` later even if
typing goes on. Either clock firing writes it and stops both.

A write is asked for through ``save`` (the chat controller spawns
``Drafts.save``, which encodes and writes the text on the store's worker thread,
so a long draft never stalls the GUI thread). While a write is still running the
next one is not started beside it: it is asked for again when that one ends
(:meth:`DraftTimer.saved`), so writes of a long draft on a slow disk never queue
up behind each other.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

#: ms after the last keystroke before the draft is written (the debounce): short, so a
#: crash or a kill half a second after typing stopped keeps the words (a write is a small
#: transaction on the store's thread, well under a millisecond for a short draft)
QUIET_MS = 200
#: ms after the first keystroke not yet written before it is written anyway (the throttle)
LONGEST_MS = 500


class DraftTimer:
    """Debounce and throttle the writes of the open chat's draft.

    Args:
        parent: owns the two timers (the main window).
        save: starts a write of the draft now (returns at once; the write runs on,
            and its end is told by :meth:`saved`).
    """

    def __init__(self, parent: QObject, save: Callable[[], None]) -> None:
        self._save = save
        self._quiet = _single_shot(parent, QUIET_MS, self._due)
        self._longest = _single_shot(parent, LONGEST_MS, self._due)
        self._writing = False
        self._again = False

    def typed(self) -> None:
        """The draft changed: write it once typing pauses, and within :data:`LONGEST_MS`."""
        self._quiet.start()
        if not self._longest.isActive():
            self._longest.start()

    def stop(self) -> None:
        """The draft is being written now by other means: no timed write is due."""
        self._quiet.stop()
        self._longest.stop()
        self._again = False

    @property
    def due(self) -> bool:
        """True while a change is not yet written nor being written."""
        return self._quiet.isActive() or self._longest.isActive() or self._again

    def saved(self) -> None:
        """A write asked for by ``save`` ended (written or not): start the one asked
        for meanwhile, if any."""
        self._writing = False
        if self._again:
            self._again = False
            self._start()

    def _due(self) -> None:
        self._quiet.stop()
        self._longest.stop()
        if self._writing:
            self._again = True  # written when the running write ends
        else:
            self._start()

    def _start(self) -> None:
        self._writing = True
        self._save()


def _single_shot(parent: QObject, ms: int, slot: Callable[[], None]) -> QTimer:
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(ms)
    timer.timeout.connect(slot)
    return timer
