"""Compact before the cache expires: the experimental idle-timer.

After each completed request the timer estimates when that session's prompt
cache expires: the request's start time + the provider's TTL (Anthropic: the
TTL the adapter actually asks for, 5 minutes or 1 hour, refreshed on each
hit; OpenAI: ``cache.openai_ttl_estimate_s`` from settings; local
OpenAI-compatible servers: none). If the setting
``experimental.compact_before_cache_expiry`` is on and the session is *long*
(see :func:`long_threshold`), a compaction is scheduled :data:`LEAD_S` seconds
before expiry, so the summary call still reads the conversation from the
cache. A run or a manual compaction in the session cancels it; the next
completed request re-arms it. Activity in the composer — typing, editing a
message, attaching a file (:meth:`CacheTimer.activity`) — only *pauses* it:
the deadline is dropped (and a timer compaction under way is stopped), and
once nothing has happened for :data:`QUIET_S` seconds it is armed again for
the same cache expiry, if its deadline is still ahead. One stray keystroke
(type, delete) therefore does not call the compaction off for good.

At most one deadline per session, and one clock handle for the earliest
deadline of all sessions: many idle sessions cost one wake-up per deadline,
not polling. :meth:`CacheTimer.close` drops every pending deadline (nothing is
compacted on the way out). The clock is injectable (a test's clock moves only when
told), so nothing here sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from parley.core.compaction.types import CompactEvent
from parley.core.errors import ParleyError
from parley.core.events import CacheUpdated, RequestEnded, RequestStarted
from parley.core.settings import Settings
from parley.core.tasks import TaskSet

if TYPE_CHECKING:
    from parley.core.chat.run import ChatRunner

log = logging.getLogger(__name__)

#: Compact this many seconds before the cache expires.
LEAD_S = 60.0
#: A session is long from this many input tokens on (or more, see long_threshold).
MIN_LONG_TOKENS = 100_000
#: Do not start a compaction when less than this is left before expiry (seconds):
#: the machine slept, the cache has gone cold, compacting now would cost, not save.
LATE_MARGIN_S = 5.0
ANTHROPIC_TTL_S = {"5m": 300, "1h": 3600}
#: Seconds without composer activity after which a paused deadline is armed again.
QUIET_S = 5.0

SETTING_ENABLED = "experimental.compact_before_cache_expiry"
Compact = Callable[..., Awaitable[Any]]
ErrorHandler = Callable[[BaseException], None]


class Handle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """Wall-clock time and one-shot callbacks (the cache timer's only notion of time)."""

    def time(self) -> float:
        """Return the current time, Unix epoch seconds."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        """Call ``callback()`` on the event loop at ``when`` (epoch seconds)."""
        ...


class LoopClock:
    """:func:`time.time` and the running asyncio loop's ``call_later``."""

    def time(self) -> float:
        return time.time()

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a Qt slot outside a loop callback (qasync)
            loop = asyncio.get_event_loop()
        return loop.call_later(max(0.0, when - time.time()), callback)


def long_threshold(context_window: int | None, threshold: float) -> int:
    """Return the input tokens from which a session counts as long.

    Rule: at least :data:`MIN_LONG_TOKENS`, or half the
    token count at which auto-compaction fires (``threshold`` × context
    window) if that is more. The auto-compaction trigger is used whether or
    not auto-compaction is on.

    Args:
        context_window: the model's context window in tokens (None: unknown).
        threshold: ``compaction.threshold``, a fraction of the window.
    """
    if not context_window:
        return MIN_LONG_TOKENS
    return max(MIN_LONG_TOKENS, math.ceil(0.5 * threshold * context_window))


@dataclass
class _State:
    """What the timer knows of one session (times in epoch seconds)."""

    started_at: float | None = None  # start of the current / last request
    expires_at: float | None = None  # estimated prompt-cache expiry
    compact_at: float | None = None  # armed deadline
    long: bool = False
    idle: bool = False  # the last request completed; no run or compaction since
    generation: int = 0  # bumped by every activity
    ended: int = 0  # completed requests seen (a newer one's estimate wins)
    quiet_at: float | None = None  # composer activity pauses the deadline until then
    resume_at: float | None = None  # when to arm again after a pause


def _as_datetime(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts).astimezone() if ts is not None else None


def _compacted(result: Any) -> bool:
    if isinstance(result, dict):
        return bool(result.get("compacted"))
    return bool(getattr(result, "compacted", False))


class CacheTimer:
    """Schedules compactions just before idle long sessions' prompt caches expire.

    Args:
        runner: the ``ChatRunner``: its ``store``, ``hub`` and ``hooks``
            (``session:start`` / ``session:end``; ``compact:start`` /
            ``compact:end`` if compaction fires them there) and ``is_running``.
        compact: ``compact(session_id, reason='cache-timer')`` coroutine function
            (``parley.core.compaction.compact``); its result's ``compacted`` is read.
        settings: the shared settings (default ``Settings.of(runner.store)``).
        clock: time and scheduling (default :class:`LoopClock`).
        lead_s: seconds before expiry at which to compact.
        quiet_s: seconds without composer activity after which a paused
            deadline is armed again (:meth:`activity`).
        on_error: receives an exception of a timer-started compaction or of
            reading the finished request (default: logged). ParleyErrors are
            things a person can act on; anything else is a bug.

    Emits :class:`~parley.core.events.CacheUpdated` on ``runner.events`` whenever a
    session's estimate or deadline changes.
    """

    def __init__(
        self,
        runner: ChatRunner,
        compact: Compact,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
        lead_s: float = LEAD_S,
        quiet_s: float = QUIET_S,
        on_error: ErrorHandler | None = None,
    ) -> None:
        self.runner = runner
        self.store = runner.store
        self.hub = runner.hub
        self.events = runner.events
        self.compact = compact
        self.settings = settings or Settings.of(self.store)
        self.clock: Clock = clock or LoopClock()
        self.lead_s = lead_s
        self.quiet_s = quiet_s
        self.on_error = on_error or (lambda e: log.warning("cache timer: %s", e))
        self._states: dict[str, _State] = {}
        self._handle: Handle | None = None
        self._handle_at: float | None = None
        self._tasks = TaskSet(on_user_error=lambda e: self.on_error(e), on_bug=self._bug)
        self._compacting: dict[str, asyncio.Task[Any]] = {}
        self._closed = False
        self._unsubscribe = [
            self.events.on(RequestStarted, self._on_start),
            self.events.on(RequestEnded, self._on_end),
            self.events.on(CompactEvent, self._on_compact),
            self.settings.on_change(self._on_setting),
        ]

    # -- public -------------------------------------------------------------
    def activity(self, session_id: str) -> None:
        """The person did something in the session's composer (typed, began an edit,
        attached a file): pause its pending compaction and stop a timer compaction
        already under way.

        When the session is idle (its last request completed, no run since), the
        deadline is armed again :attr:`quiet_s` seconds after the last activity,
        for the same cache expiry, if the deadline is still ahead then; the
        ``cache:updated`` hook says so each time (the meter shows it).
        """
        st = self._states.get(session_id)
        if st is None:
            return
        self._stop(session_id, st)
        st.quiet_at = self.clock.time() + self.quiet_s
        st.resume_at = st.quiet_at if st.idle else None
        self._reschedule()

    def _busy(self, session_id: str) -> None:
        """A run or a compaction started: call the deadline off until the next
        completed request."""
        st = self._states.get(session_id)
        if st is None:
            return
        st.idle = False
        st.quiet_at = st.resume_at = None  # sending ends the typing
        self._stop(session_id, st)
        self._reschedule()

    def _stop(self, session_id: str, st: _State) -> None:
        st.generation += 1
        task = self._compacting.pop(session_id, None)
        if task is not None:
            task.cancel()
        self._disarm(session_id)

    def expiry(self, session_id: str) -> datetime | None:
        """When the session's prompt cache is estimated to expire (local time), or
        None: no cache (local server), no request yet, or already expired."""
        st = self._states.get(session_id)
        if st is None or st.expires_at is None or st.expires_at <= self.clock.time():
            return None
        return _as_datetime(st.expires_at)

    def armed(self, session_id: str) -> datetime | None:
        """When the session's compaction is due (local time), or None when not armed."""
        st = self._states.get(session_id)
        return _as_datetime(st.compact_at) if st is not None else None

    def close(self) -> None:
        """Drop every pending deadline, cancel timer compactions under way, stop
        listening. Nothing is compacted on the way out. Idempotent."""
        self._closed = True
        for unsubscribe in self._unsubscribe:
            with contextlib.suppress(ValueError):  # already removed
                unsubscribe()
        self._unsubscribe = []
        if self._handle is not None:
            self._handle.cancel()
        self._handle = self._handle_at = None
        self._tasks.cancel()
        self._states.clear()

    async def aclose(self) -> None:
        """:meth:`close`, then wait for the cancelled tasks to end."""
        tasks = self._tasks.cancel()
        self.close()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Wait until the timer's background work (reading a finished request,
        a compaction it started) is done. For tests and orderly shutdown."""
        await self._tasks.wait_idle()

    # -- events --------------------------------------------------------------
    def _state(self, session_id: str) -> _State:
        return self._states.setdefault(session_id, _State())

    def _on_start(self, event: RequestStarted) -> None:
        sid = event.session_id
        if self._closed:
            return
        self._busy(sid)
        self._state(sid).started_at = self.clock.time()

    def _on_end(self, event: RequestEnded) -> None:
        sid = event.session_id
        if self._closed:
            return
        st = self._state(sid)
        if event.status != "ok":
            return  # unknown whether it reached the cache: keep the old estimate, stay idle
        started = st.started_at if st.started_at is not None else self.clock.time()
        st.idle = True
        st.ended += 1
        self._spawn(self._after_request(sid, st.ended, started))

    def _on_compact(self, event: CompactEvent) -> None:
        sid = event.session_id
        if self._closed or sid in self._compacting:
            return
        if event.name == "compact:start":
            self._busy(sid)
        elif event.name == "compact:end":
            self._forget_cache(sid)

    def _on_setting(self, key: str, value: Any) -> None:
        if key != SETTING_ENABLED or self._closed:
            return
        for sid, st in list(self._states.items()):
            if not value:
                self._disarm(sid)
            elif st.long and st.idle and st.compact_at is None:
                self._arm_when_quiet(sid)
                if st.compact_at is not None:
                    self._changed(sid)

    # -- arming ---------------------------------------------------------------
    async def _after_request(self, session_id: str, ended: int, started: float) -> None:
        try:
            last = await self.store.get_turns(session_id, last=4)
            reply = next(
                (t for t in reversed(last) if t.role == "assistant" and not t.aborted), None
            )
            if reply is None or not reply.model or reply.usage is None:
                return
            ttl = await self._ttl_s(reply.model)
            threshold = await self.settings.get("compaction.threshold")
            window = self.hub.model_info(reply.model).context_window
            enabled = await self.settings.get(SETTING_ENABLED)
        except ParleyError as exc:  # session deleted, provider removed meanwhile
            log.info("cache timer: no estimate for %s: %s", session_id, exc)
            return
        st = self._states.get(session_id)
        if self._closed or st is None or st.ended != ended:
            return  # closed, or a later request's estimate is coming
        st.expires_at = started + ttl if ttl else None
        st.long = reply.usage.total_input_tokens >= long_threshold(window, threshold)
        if st.long and enabled and st.idle:  # no run or compaction since
            self._arm_when_quiet(session_id)
        self._changed(session_id)

    async def _ttl_s(self, model_ref: str) -> int | None:
        """The prompt cache TTL of a model's provider (seconds), None for no cache."""
        from parley.core.providers.model_ref import parse_model_ref

        provider_id, _ = parse_model_ref(model_ref)
        kind = self.hub.config(provider_id).kind
        if kind == "anthropic":
            try:
                ttl: int | None = self.hub.get(provider_id).caps.cache_ttl_s
            except ParleyError:
                ttl = ANTHROPIC_TTL_S.get(await self.settings.get("cache.anthropic_ttl"))
            return ttl
        if kind == "openai":
            return int(await self.settings.get("cache.openai_ttl_estimate_s"))
        return None  # local OpenAI-compatible servers: no cache to keep warm

    def _arm_when_quiet(self, session_id: str) -> None:
        """Arm now, or when the composer has been quiet for :attr:`quiet_s` seconds."""
        st = self._states[session_id]
        if st.quiet_at is not None and self.clock.time() < st.quiet_at:
            st.resume_at = st.quiet_at
            self._reschedule()
            return
        self._arm(session_id)

    async def _resume(self, session_id: str, generation: int) -> None:
        """Arm a deadline paused by composer activity again, if nothing happened since."""
        enabled = await self.settings.get(SETTING_ENABLED)
        st = self._states.get(session_id)
        if self._closed or st is None or st.generation != generation:
            return
        if enabled and st.idle and st.long and st.compact_at is None:
            self._arm(session_id)
            if st.compact_at is not None:
                self._changed(session_id)

    def _arm(self, session_id: str) -> None:
        """Set the session's deadline (when its cache is known and far enough off)."""
        st = self._states[session_id]
        if st.expires_at is None or st.expires_at - self.lead_s <= self.clock.time():
            return
        st.compact_at = st.expires_at - self.lead_s
        self._reschedule()

    def _disarm(self, session_id: str) -> None:
        st = self._states.get(session_id)
        if st is None or st.compact_at is None:
            return
        st.compact_at = None
        self._reschedule()
        self._changed(session_id)

    def _forget_cache(self, session_id: str) -> None:
        st = self._states.get(session_id)
        if st is None:
            return
        st.expires_at = None
        st.long = st.idle = False
        st.compact_at = st.resume_at = None
        self._reschedule()
        self._changed(session_id)

    def _reschedule(self) -> None:
        """Keep exactly one clock handle, at the earliest armed deadline or resume time."""
        deadlines = [
            t
            for s in self._states.values()
            for t in (s.compact_at, s.resume_at)
            if t is not None
        ]
        earliest = min(deadlines) if deadlines and not self._closed else None
        if earliest == self._handle_at:
            return
        if self._handle is not None:
            self._handle.cancel()
        self._handle, self._handle_at = None, earliest
        if earliest is not None:
            self._handle = self.clock.call_at(earliest, self._wake)

    def _changed(self, session_id: str) -> None:
        st = self._states.get(session_id)
        self.events.emit(CacheUpdated(
            session_id, self.expiry(session_id),
            _as_datetime(st.compact_at) if st else None))

    # -- firing ---------------------------------------------------------------
    def _wake(self) -> None:
        self._handle = self._handle_at = None
        if self._closed:
            return
        now = self.clock.time()
        for sid, st in list(self._states.items()):
            if st.resume_at is not None and st.resume_at <= now:
                st.resume_at = None
                self._spawn(self._resume(sid, st.generation))
            if st.compact_at is None or st.compact_at > now:
                continue
            st.compact_at = None
            if st.expires_at is not None and now <= st.expires_at - LATE_MARGIN_S:
                self._compacting[sid] = self._spawn(self._fire(sid, st.generation))
            else:  # woken too late (the machine slept): the cache is cold already
                st.expires_at = None
            self._changed(sid)
        self._reschedule()

    async def _fire(self, session_id: str, generation: int) -> None:
        try:
            enabled = await self.settings.get(SETTING_ENABLED)
            st = self._states.get(session_id)
            if (
                not enabled
                or self._closed
                or st is None
                or st.generation != generation
                or self.runner.is_running(session_id)
            ):
                return
            log.info("compacting idle session %s before its prompt cache expires", session_id)
            result = await self.compact(session_id, reason="cache-timer")
            if _compacted(result):
                self._forget_cache(session_id)
        finally:
            if self._compacting.get(session_id) is asyncio.current_task():
                del self._compacting[session_id]

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coro)

    def _bug(self, exc: BaseException) -> None:
        log.error("cache timer bug", exc_info=exc)
        self.on_error(exc)
