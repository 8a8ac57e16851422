"""The context meter: how much of the model's context window the chat uses.

Shows a small ring and "12.3k / 200k"; the tooltip gives exact figures, where
the window came from and the prompt-cache read tokens of the last reply. The
numbers come from :func:`measure`: the tokens the last reply's request held by
the provider's own count plus an estimate of what was added since
(``parley.core.context.size``), else ``parley.core.context.tokens.estimate_tokens``; the window the
provider gave, else settings, the catalog or a default
(``ProviderHub.model_info``). This widget only displays them.

The times it shows ("cache warm until 20:27", "compacts 20:25 if idle") are dropped
once they have passed (a "warm until" in the past would say the cache is warm when it
is not): one single-shot timer is set for the next of them, none runs while there is
nothing to change. The window coming back to the front looks again (a timer does not
count the time a computer slept).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from parley.gui.look import appearance


def measure(turns: Sequence[Any], system: str | None, model_ref: str | None,
            hub: Any, sent: Any = None,
            counted: Any = None) -> tuple[int, int | None, int, str | None, bool]:
    """Return what the meter shows for a chat.

    Args:
        turns: the chat's stored turns (``parley.core.content.Turn``).
        system: its system prompt, if any (used when ``sent`` is None).
        model_ref: ``provider:model`` answering next, or None.
        hub: the ``ProviderHub`` (None before it is loaded: window unknown).
        sent: the chat's last request as the run loop sent it
            (``parley.core.compaction.compact.SentRequest``), or None: its system prompt (memory
            and skills included) and tools are counted.

    Returns:
        (tokens the next request holds — the last reply's reported input plus
        the estimated tokens added since, else ``parley.core.context.tokens.estimate_tokens``
        over the wire turns, system prompt and tools —, the model's context
        window in tokens (None when unknown), the prompt-cache read tokens of
        the last reply (0 if none), where the window came from (``provider``,
        ``settings``, ``catalog``, ``default``; None when unknown), whether the
        tokens rest on the provider's count).
    """
    from parley.core.context.size import measured_tokens, request_estimate
    from parley.core.errors import ParleyError
    from parley.core.providers.base import ChatRequest
    from parley.core.providers.capabilities import CAPS_BY_KIND
    from parley.core.providers.catalog import builtin_model

    window, source = None, None
    caps = CAPS_BY_KIND["anthropic"]
    if model_ref and hub is None:  # providers not loaded yet: the catalog, if it knows
        known = builtin_model(model_ref)
        if known is not None:
            window, source = known.context_window, known.window_source
    if model_ref and hub is not None:
        try:
            info = hub.model_info(model_ref)
            window, source = info.context_window, info.window_source
            caps = CAPS_BY_KIND[hub.config(model_ref.split(":", 1)[0]).kind]
        except ParleyError:
            pass  # a provider no longer set up: estimate as Anthropic, window unknown
    request = ChatRequest("", list(turns), system)
    if sent is not None:
        request = ChatRequest("", list(turns), sent.request.system, tools=sent.request.tools)
    measured = measured_tokens(caps, request, model_ref, sent, counted)
    used = measured if measured is not None else request_estimate(caps, request)
    last = next((t for t in reversed(turns) if t.role == "assistant" and t.usage), None)
    cache_read = last.usage.cache_read_tokens if last and last.usage else 0
    return used, window, cache_read, source, measured is not None


#: How the tooltip names where a context window came from.
WINDOW_SOURCES = {
    "provider": "as the provider reports it",
    "settings": "as set in model_overrides",
    "catalog": "from Parley's model catalog",
    "default": "a safe default: the provider does not say",
}


def short_count(n: int) -> str:
    """Return a token count for people: 950, 12.3k, 200k, 1.2M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        value = n / 1000
        return f"{value:.1f}k".replace(".0k", "k") if value < 100 else f"{round(value)}k"
    value = n / 1_000_000
    return f"{value:.1f}M".replace(".0M", "M")


class _Ring(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fraction = 0.0
        self.setFixedSize(QSize(16, 16))

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        t = appearance.current()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(2, 2, 12, 12)
        p.setPen(QPen(QColor(t.border), 2.2))
        p.drawEllipse(rect)
        if self.fraction > 0:
            color = t.danger if self.fraction >= 0.9 else t.accent if self.fraction >= 0.7 \
                else t.muted
            pen = QPen(QColor(color), 2.2)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            p.setPen(pen)
            p.drawArc(rect, 90 * 16, -int(min(1.0, self.fraction) * 360 * 16))
        p.end()


class ContextMeter(QWidget):
    """Ring + label; call :meth:`set_usage` whenever the chat or the model changes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ContextMeter")
        self.setAccessibleName("Context used")
        self.ring = _Ring(self)
        self.label = QLabel(self)
        self.label.setObjectName("ContextMeterLabel")
        self._lay = lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        lay.setSpacing(6)
        lay.addWidget(self.ring)
        lay.addWidget(self.label)
        self.used = 0
        self.context_window: int | None = None  # tokens
        self.cache_read = 0
        self.window_source: str | None = None
        self.measured = False
        self.cache_expiry: datetime | None = None
        self.compact_at: datetime | None = None
        #: Fires when the next time shown passes (:meth:`_forget_past`); idle otherwise.
        self.next_change = QTimer(self)
        self.next_change.setSingleShot(True)
        self.next_change.timeout.connect(self._time_passed)
        #: True while a chat opens (:meth:`set_counting`): no figure is shown.
        self.counting = False
        self._parts: list[str] = []  # what the label says, most important first
        self._room: tuple[int | None, int | None] = (None, None)  # fit_room's arguments
        self.set_usage(0, None)
        self.set_counting()  # until the first chat's figure (Parley is starting)

    def fit_room(self, room: int | None, figure_room: int | None = None) -> None:
        """Show as many of the label's parts as fit (every part stays in the tooltip).

        Args:
            room: px for the figure and the words after it ("cache warm until …",
                "compacts … if idle"); None: everything is shown.
            figure_room: px for the figure alone when the words do not fit (more: the
                chat's title gives room for it first); None: ``room``. Only the ring
                when not even the figure fits.
        """
        self._room = (room, figure_room)
        lay = self._lay
        chrome = lay.contentsMargins().left() + lay.contentsMargins().right() + \
            self.ring.width() + lay.spacing()
        fm = self.label.fontMetrics()
        shown = ""
        for k in range(len(self._parts), 0, -1):
            text = "  ·  ".join(self._parts[:k])
            most = room if k > 1 or figure_room is None else max(room or 0, figure_room)
            if most is None or chrome + fm.horizontalAdvance(text) <= most:
                shown = text
                break
        if shown != self.label.text() or self.label.isHidden() != (not shown):
            self.label.setText(shown)
            self.label.setVisible(bool(shown))
            self.updateGeometry()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The ring alone: a narrow window drops the words, never grows for them."""
        m = self._lay.contentsMargins()
        return QSize(m.left() + m.right() + self.ring.width(), super().minimumSizeHint().height())

    def set_usage(self, used: int, window: int | None, cache_read: int = 0,
                  window_source: str | None = None, measured: bool = False) -> None:
        """Show ``used`` tokens of a ``window``-token context window (:func:`measure`).

        Args:
            used: tokens the next request would send (history, system prompt, tools).
            window: the model's context window in tokens, or None when unknown.
            cache_read: prompt-cache read tokens of the last reply (0 if none).
            window_source: where the window came from (:data:`WINDOW_SOURCES` keys).
            measured: ``used`` rests on the provider's count of the last request.
        """
        self.used, self.context_window, self.cache_read = used, window, cache_read
        self.window_source, self.measured = window_source, measured
        self.counting = False
        self.ring.fraction = used / window if window else 0.0
        self.ring.update()
        self._show()

    def set_cache_expiry(
        self, expires: datetime | None, compact_at: datetime | None = None
    ) -> None:
        """Show until when the chat's prompt cache is estimated to stay warm (None: hide),
        and when the experimental idle compaction will compact it.

        Args:
            expires: local time of the estimated expiry (``CacheTimer.expiry``),
                or None when there is no cache, no request yet, or it expired. A time
                already past shows nothing; a time ahead stops showing when it passes.
            compact_at: local time the chat is compacted if it stays idle
                (``CacheTimer.armed``), or None when that is not planned (the same).
        """
        if self.counting:
            return  # the chat left's, or the new chat's before its figure
        self.cache_expiry = expires
        self.compact_at = compact_at
        self._show()

    def set_counting(self) -> None:
        """Show no figure but "counting…" (another chat is opening: the figures shown
        were the chat left's) until the next :meth:`set_usage`."""
        self.used, self.cache_read, self.measured, self.counting = 0, 0, False, True
        self.cache_expiry = self.compact_at = None
        self.next_change.stop()
        self.ring.fraction = 0.0
        self.ring.update()
        self._show()

    def _show(self) -> None:
        if self.counting:
            self._parts = ["counting…"]
            self.fit_room(*self._room)
            tip = "Counting how much of the model's context window this chat uses…"
            self.setToolTip(tip)
            self.setAccessibleDescription(tip)
            return
        self._forget_past()
        used, window, cache_read = self.used, self.context_window, self.cache_read
        warm = f"cache warm until {self.cache_expiry:%H:%M}" if self.cache_expiry else ""
        if window:
            text = f"{short_count(used)} / {short_count(window)}"
            tip = (f"About {used:,} of this model's {window:,}-token context window "
                   f"are in use ({100 * used / window:.0f}%).")
            if self.window_source in WINDOW_SOURCES:
                tip += f"\nThe window is {WINDOW_SOURCES[self.window_source]}."
        else:
            text = f"{short_count(used)} tokens"
            tip = f"About {used:,} tokens are in use; this model's context window is unknown."
        compact_at = self.compact_at
        parts = [text] + [p for p in (warm,) if p]
        if compact_at is not None:
            parts.append(f"compacts {compact_at:%H:%M} if idle")
        self._parts = parts
        self.fit_room(*self._room)
        if self.measured:
            tip += ("\nCounted by the provider (for the last reply, or after a compaction), "
                    "plus an estimate of what was added since.")
        if cache_read:
            tip += f"\nThe last reply read {cache_read:,} tokens from the prompt cache."
        if warm:
            tip += (f"\nThe prompt cache is estimated to stay warm until "
                    f"{self.cache_expiry:%H:%M}: a message sent before then is cheaper.")
        if compact_at is not None:
            tip += (f"\nThis long chat will be compacted at about {compact_at:%H:%M} if "
                    "nothing happens in it before then, so the next message does not pay "
                    "for re-reading it all (Settings → Compaction, experimental). Typing "
                    "pauses it until you stop for a few seconds; sending calls it off "
                    "until the reply.")
        self.setToolTip(tip)
        self.setAccessibleDescription(tip)

    def _forget_past(self) -> None:
        """Drop the cache expiry and the compaction time once they have passed; set the
        timer for the next one still ahead (stopped when there is none)."""
        ahead = []
        if self.cache_expiry is not None:
            if _seconds_until(self.cache_expiry) <= 0:
                self.cache_expiry = None
            else:
                ahead.append(_seconds_until(self.cache_expiry))
        if self.compact_at is not None:
            if _seconds_until(self.compact_at) <= 0:
                self.compact_at = None
            else:
                ahead.append(_seconds_until(self.compact_at))
        if not ahead:
            self.next_change.stop()
            return
        # 50 ms late rather than early; a wait longer than a QTimer's is set again then
        self.next_change.start(min(int(min(ahead) * 1000) + 50, _LONGEST_WAIT_MS))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        """The window came to the front: the times shown are checked (after a sleep the
        timer fires late)."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow() \
                and (self.cache_expiry is not None or self.compact_at is not None):
            self._show()

    def _time_passed(self) -> None:
        """The next time shown has passed (or the longest wait ended): show what is true."""
        self._show()


#: The longest single wait of the meter's timer (ms; a QTimer takes a 32-bit int).
_LONGEST_WAIT_MS = 2**31 - 1


def _seconds_until(when: datetime) -> float:
    """Seconds from now until ``when`` (aware or naive local time); negative when past."""
    now = datetime.now(when.tzinfo) if when.tzinfo is not None else datetime.now()
    return (when - now).total_seconds()
