"""The bar above the composer while a failed request waits to be sent again.

A provider's 429 with ``retry-after`` (or an overloaded server, a dropped
connection) is waited out by the provider layer (``parley.core.providers.retry``);
the run loop says so with ``RetryWaiting``. Instead of a silent Stop button,
the open chat shows "Rate limited — retrying in 12 s", counting down each
second, with Cancel, which stops the run like Esc: the message stays saved
and Retry sends it later. The bar goes as soon as the reply starts or the
run ends; a chat switched away from and back to shows what is left of its wait.

A reply whose connection dropped before any of it came (``RetryWaiting.dropped``) is
sent again after a short backoff; the bar says "The connection dropped; trying again…"
however short the wait, until the reply starts, so no retry goes unsaid. (A reply that
had begun is never retried by itself: what arrived stays, marked cut off, with Retry.)

The same bar says "Waiting for Parley's connection process…" while a request waits on
a provider process that has stopped answering (``ProviderProcessSilent``), until it
answers again or the request ends (restarted after its silence, the process's
requests fail or are sent again, as the run says).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

#: Waits shorter than this (s) are not shown (a backoff of half a second would flash).
MIN_SHOWN_S = 1.0
RATE_LIMITED = "Rate limited — retrying in {n} s"
BUSY = "The server did not answer — retrying in {n} s"
NOW = "Retrying now…"
DROPPED = "The connection dropped; trying again…"
DROPPED_IN = "The connection dropped — trying again in {n} s"
SILENT = "Waiting for Parley's connection process…"
SILENT_DETAIL = ("Parley's connection process, which sends your messages to the provider, "
                 "has not answered for a few seconds. If it stays silent, Parley restarts "
                 "it. Cancel stops waiting: your message stays.")


@dataclass(frozen=True, slots=True)
class _Wait:
    until: float  # time.monotonic() when the retry goes
    rate_limited: bool
    detail: str
    silent: bool = False  # no retry: the connection process does not answer
    dropped: bool = False  # the connection dropped before any of the reply came


def wait_text(seconds_left: float, rate_limited: bool, dropped: bool = False) -> str:
    """The bar's words for a wait with ``seconds_left`` s to go (whole seconds, rounded up).

    ``dropped``: the connection dropped before the reply came ("The connection dropped;
    trying again…" once the wait is under a second, and while the request goes again)."""
    n = math.ceil(max(0.0, seconds_left))
    if dropped:
        return DROPPED_IN.format(n=n) if n > 1 else DROPPED
    if n <= 0:
        return NOW
    return (RATE_LIMITED if rate_limited else BUSY).format(n=n)


class RetryBar(QFrame):
    """"Rate limited — retrying in 12 s" and Cancel (``cancel_clicked``)."""

    cancel_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("RetryNotice")
        self.setAccessibleName("Waiting to retry")
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.cancel = QPushButton("Cancel", self)
        self.cancel.setAccessibleName("Cancel the retry")
        self.cancel.setToolTip("Stop waiting: your message stays; Retry sends it later")
        self.cancel.setCursor(Qt.CursorShape.PointingHandCursor)
        self.cancel.setAutoDefault(False)
        self.cancel.clicked.connect(self.cancel_clicked)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 6, 8, 6)
        row.addWidget(self.label, 1)
        row.addWidget(self.cancel)
        self.setStyleSheet(
            "#RetryNotice { border: 1px solid palette(mid); border-radius: 8px;"
            " background: palette(alternate-base); }")
        self.hide()

    def text(self) -> str:
        """What the bar says ('' when hidden)."""
        return self.label.text() if not self.isHidden() else ""


class RetryNotice:
    """Keeps each chat's retry wait and shows the open chat's in a :class:`RetryBar`.

    Args:
        bar: the bar (placed by the caller, above the composer).
        open_chat: returns the id of the chat shown (None: a new chat).
        clock: monotonic seconds (tests may pass their own).
    """

    def __init__(self, bar: RetryBar, open_chat: Callable[[], str | None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bar = bar
        self._open_chat = open_chat
        self._clock = clock
        self._waits: dict[str, _Wait] = {}
        self._tick = QTimer(bar)
        self._tick.setInterval(250)  # the seconds change on time, whatever the phase
        self._tick.timeout.connect(self.refresh)

    def waiting(self, sid: str, seconds: float, rate_limited: bool, detail: str = "",
                *, dropped: bool = False) -> None:
        """A run of ``sid`` waits ``seconds`` before sending again (``RetryWaiting``).

        A wait under :data:`MIN_SHOWN_S` is not shown, unless ``dropped`` (the connection
        dropped before the reply came): that one is said until the reply starts."""
        if seconds < MIN_SHOWN_S and not dropped:
            return
        self._waits[sid] = _Wait(self._clock() + seconds, rate_limited, detail,
                                 dropped=dropped)
        self.refresh()

    def silent(self, sid: str, silent: bool) -> None:
        """A request of a run of ``sid`` waits on a connection process that does not
        answer (``silent``), or no longer does (``ProviderProcessSilent``)."""
        if silent:
            self._waits[sid] = _Wait(0.0, False, SILENT_DETAIL, silent=True)
            self.refresh()
            return
        wait = self._waits.get(sid)
        if wait is not None and wait.silent:
            self.over(sid)

    def over(self, sid: str) -> None:
        """The wait of ``sid`` ended: the reply started, or the run ended."""
        if self._waits.pop(sid, None) is not None:
            self.refresh()

    def refresh(self) -> None:
        """Show the open chat's wait (what is left of it), or hide the bar."""
        wait = self._waits.get(self._open_chat() or "")
        if wait is None:
            self.bar.hide()
            if not self._waits:
                self._tick.stop()
            return
        self.bar.label.setText(SILENT if wait.silent
                               else wait_text(wait.until - self._clock(), wait.rate_limited,
                                              wait.dropped))
        self.bar.setAccessibleName("Waiting for the connection process" if wait.silent
                                   else "Waiting to retry")
        self.bar.cancel.setAccessibleName("Stop waiting" if wait.silent
                                          else "Cancel the retry")
        self.bar.setToolTip(wait.detail)
        self.bar.show()
        if not self._tick.isActive():
            self._tick.start()
