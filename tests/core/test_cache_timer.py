"""Compact before the cache expires: a fake clock, the real runner and store, the fake provider.

Requests go over real HTTP to the fake provider server with scripted usage;
the clock is a :class:`ManualClock`, so nothing sleeps. Compaction itself is
injected (``parley.core.compaction.compact`` is tested on its own): the stand-in records the
call and writes a compactions row with the reason it was given.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.compaction.cache_timer import (
    LEAD_S,
    QUIET_S,
    CacheTimer,
    long_threshold,
)
from parley.core.compaction.types import CompactEvent
from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.errors import ParleyError
from parley.core.events import CacheUpdated
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.registry import make_provider
from parley.core.providers.retry import RetryPolicy
from parley.core.settings import Settings
from parley.core.store.async_store import AsyncStore
from tests.fakes.clock import ManualClock

FAST = RetryPolicy(max_retries=0, initial_delay_s=0.01, max_delay_s=0.01)
HAIKU_200K = "anthropic:claude-haiku-4-5"  # 200k window: long from 100k tokens
SONNET_1M = "anthropic:claude-sonnet-4-6"  # 1M window: long from 400k tokens (0.8 × 1M / 2)
GPT = "openai:gpt-5"  # 400k window: long from 160k tokens
LOCAL = "local:llama3.2:3b"


class Rig:
    """Store, hub, runner, timer and a recording compaction on one fake clock."""

    def __init__(self, store, hub, runner, clock, fake) -> None:
        self.store, self.hub, self.runner, self.clock, self.fake = store, hub, runner, clock, fake
        self.settings = Settings.of(store)
        self.compactions: list[tuple[str, str, float]] = []
        self.errors: list[BaseException] = []
        self.compact_impl = self._record_compaction
        self.timer = CacheTimer(runner, self._compact, clock=clock, on_error=self.errors.append)

    async def _compact(self, session_id: str, *, reason: str = "manual", keep_turns=None):
        self.compactions.append((session_id, reason, self.clock.time()))
        return await self.compact_impl(session_id, reason)

    async def _record_compaction(self, session_id: str, reason: str) -> dict:
        turns = await self.store.get_turns(session_id)
        kept = min(2, len(turns) - 1)
        summary = Turn("user", [CompactSummaryBlock("What happened so far.")])
        await self.store.record_compaction(
            session_id, summary, first_turn_id=turns[0].id, last_turn_id=turns[-1 - kept].id,
            replaced_count=len(turns) - kept, reason=reason,
        )
        return {"compacted": True}

    async def session(self) -> str:
        return (await self.store.create_session()).id

    async def request(self, sid: str, model: str, tokens: int) -> Turn:
        """One completed request whose usage reports ``tokens`` input tokens."""
        # Real Anthropic usage for a warm long chat: mostly cache reads.
        self.fake.script("Noted.", usage={"input_tokens": 1000, "cache_read_input_tokens":
                                          tokens - 1000, "cache_creation_input_tokens": 0})
        turn = await self.runner.send(sid, [TextBlock("More, please.")], model_ref=model)
        assert turn is not None and turn.usage.total_input_tokens == tokens
        await self.timer.wait_idle()
        return turn

    async def enable(self, on: bool = True) -> None:
        await self.settings.set("experimental.compact_before_cache_expiry", on)

    async def advance(self, seconds: float) -> None:
        """Move the clock on, letting the loop run the timer's work at each deadline."""
        target = self.clock.now + seconds
        while self.clock.pending and self.clock.pending[0] <= target:
            self.clock.advance(self.clock.pending[0] - self.clock.now)
            await self.timer.wait_idle()
        self.clock.advance(target - self.clock.now)
        await self.timer.wait_idle()

    def at(self, ts: float) -> datetime:
        return datetime.fromtimestamp(ts).astimezone()


@pytest.fixture
async def rig(tmp_path, fake_provider):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    hub = ProviderHub(store, keys=KeyStore(backend=FileBackend(tmp_path / "k.json"), environ={}),
                      retry=FAST, environ={})
    await hub.load()
    await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                           api_key="sk-ant-test", default_model="claude-haiku-4-5")
    await hub.add_provider("openai", base_url=fake_provider.openai_own_url,
                           api_key="sk-test", default_model="gpt-5")
    await hub.add_provider("openai_compatible", name="Local",
                           base_url=fake_provider.openai_base_url)
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    r = Rig(store, hub, runner, ManualClock(), fake_provider)
    yield r
    await r.timer.aclose()
    await hub.aclose()
    await store.close()


# -- the rule ----------------------------------------------------------------------


def test_long_threshold_is_100k_or_half_the_auto_compaction_trigger():
    assert long_threshold(200_000, 0.8) == 100_000  # half of 160k is 80k: 100k wins
    assert long_threshold(1_000_000, 0.8) == 400_000  # half of 800k
    assert long_threshold(400_000, 0.8) == 160_000
    assert long_threshold(1_000_000, 0.2) == 100_000  # half of 200k
    assert long_threshold(None, 0.8) == 100_000


# -- firing ------------------------------------------------------------------------


async def test_fires_a_minute_before_expiry_for_a_long_idle_session(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)

    assert rig.timer.expiry(sid) == rig.at(t0 + 300)  # Anthropic: 5-minute TTL
    assert rig.timer.armed(sid) == rig.at(t0 + 300 - LEAD_S)
    assert rig.clock.pending == [t0 + 240]

    await rig.advance(239)
    assert rig.compactions == []
    await rig.advance(1)
    assert rig.compactions == [(sid, "cache-timer", t0 + 240)]
    [row] = await rig.store.list_compactions(sid)
    assert row.reason == "cache-timer"  # the summary card reads this label
    assert rig.timer.armed(sid) is None and rig.timer.expiry(sid) is None
    assert rig.clock.pending == [] and rig.errors == []


async def test_the_real_compactor_labels_its_summary_as_the_timer_s(rig):
    rig.compact_impl = lambda sid, reason: rig.runner.compactor.compact(sid, reason=reason)
    await rig.enable()
    sid = await rig.session()
    for _ in range(3):  # six turns: the oldest two are compacted, four kept
        t_last = rig.clock.time()
        await rig.request(sid, HAIKU_200K, 150_000)
        await rig.advance(10)
    rig.fake.script("<summary>The user kept asking for more.</summary>")
    sent_before = len(rig.fake.model_requests)

    await rig.advance(t_last + 240 - rig.clock.time())
    assert [c[1:] for c in rig.compactions] == [("cache-timer", t_last + 240)]
    assert len(rig.fake.model_requests) == sent_before + 1  # the summary request
    [row] = await rig.store.list_compactions(sid)
    assert row.reason == "cache-timer" and row.replaced_count == 2
    history = await rig.store.history(sid)
    assert isinstance(history[0].blocks[0], CompactSummaryBlock)
    assert rig.timer.expiry(sid) is None and rig.errors == []


async def test_does_not_fire_for_a_short_session(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 99_999)
    assert rig.timer.expiry(sid) == rig.at(t0 + 300)  # the cache is still shown
    assert rig.timer.armed(sid) is None and rig.clock.pending == []
    await rig.advance(600)
    assert rig.compactions == []


async def test_does_not_fire_with_the_setting_off(rig):
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    assert rig.timer.expiry(sid) is not None and rig.timer.armed(sid) is None
    await rig.advance(600)
    assert rig.compactions == []


async def test_local_servers_have_no_cache_and_no_timer(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, LOCAL, 150_000)
    assert rig.timer.expiry(sid) is None and rig.timer.armed(sid) is None
    await rig.advance(3600)
    assert rig.compactions == []


async def test_openai_uses_the_estimate_from_settings(rig):
    await rig.enable()
    await rig.settings.set("cache.openai_ttl_estimate_s", 600)
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, GPT, 150_000)  # gpt-5: long from 160k
    assert rig.timer.expiry(sid) == rig.at(t0 + 600) and rig.timer.armed(sid) is None
    await rig.request(sid, GPT, 170_000)
    assert rig.timer.armed(sid) == rig.at(t0 + 600 - 60)
    await rig.advance(600)
    assert [c[1:] for c in rig.compactions] == [("cache-timer", t0 + 540)]


async def test_anthropic_uses_the_ttl_the_adapter_asks_for(rig, monkeypatch):
    hour = make_provider(rig.hub.config("anthropic"), "sk-ant-test", retry=FAST,
                         cache_ttl_s=3600)
    original = rig.hub.get
    monkeypatch.setattr(rig.hub, "get", lambda pid: hour if pid == "anthropic" else original(pid))
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)
    assert rig.timer.expiry(sid) == rig.at(t0 + 3600)
    assert rig.timer.armed(sid) == rig.at(t0 + 3540)
    await hour.aclose()


# -- the "half the auto-compaction trigger" rule, end to end ---------------------------


async def test_a_1m_window_needs_half_the_trigger(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, SONNET_1M, 150_000)
    assert rig.timer.armed(sid) is None  # 150k < 400k
    await rig.request(sid, SONNET_1M, 400_000)
    assert rig.timer.armed(sid) is not None


async def test_a_lower_compaction_threshold_lowers_the_bar(rig):
    await rig.enable()
    await rig.settings.set("compaction.threshold", 0.25)  # trigger 250k, half 125k
    sid = await rig.session()
    await rig.request(sid, SONNET_1M, 124_999)
    assert rig.timer.armed(sid) is None
    await rig.request(sid, SONNET_1M, 125_000)
    assert rig.timer.armed(sid) is not None


# -- activity, re-arming -------------------------------------------------------------


async def test_typing_pauses_and_stopping_re_arms_for_the_same_expiry(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)
    await rig.advance(100)
    updates: list[CacheUpdated] = []
    rig.runner.events.on(CacheUpdated, updates.append)

    rig.timer.activity(sid)  # a keystroke in the composer
    assert rig.timer.armed(sid) is None
    assert updates[-1].compact_at is None  # the meter stops saying "compacts … if idle"
    assert rig.timer.expiry(sid) == rig.at(t0 + 300)  # the cache itself is still warm
    assert rig.clock.pending == [t0 + 100 + QUIET_S]  # armed again once quiet

    for _ in range(3):  # typing on: each keystroke pushes the re-arming back
        await rig.advance(QUIET_S - 1)
        assert rig.timer.armed(sid) is None
        rig.timer.activity(sid)
    await rig.advance(QUIET_S - 0.5)
    assert rig.timer.armed(sid) is None and rig.compactions == []

    await rig.advance(0.5)  # quiet for QUIET_S seconds: the same deadline again
    assert rig.timer.armed(sid) == rig.at(t0 + 240)
    assert updates[-1].compact_at == rig.at(t0 + 240)
    await rig.advance(240 - (rig.clock.time() - t0))
    assert rig.compactions == [(sid, "cache-timer", t0 + 240)] and rig.errors == []


async def test_typing_past_the_deadline_does_not_re_arm_until_the_next_request(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)
    await rig.advance(238)
    rig.timer.activity(sid)  # typing through the deadline
    await rig.advance(QUIET_S)
    assert rig.timer.armed(sid) is None  # too late for this cache: nothing compacted
    await rig.advance(1000)
    assert rig.compactions == []

    t1 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 160_000)
    assert rig.timer.armed(sid) == rig.at(t1 + 240)
    await rig.advance(240)
    assert [c[2] for c in rig.compactions] == [t1 + 240]
    assert t1 > t0


async def test_typing_during_a_reply_arms_once_the_composer_is_quiet(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    t1 = rig.clock.time()
    rig.timer.activity(sid)  # typing the next message while the reply streams …
    rig.fake.script("Noted.", usage={"input_tokens": 1000, "cache_read_input_tokens": 159_000})
    await rig.runner.send(sid, [TextBlock("More.")], model_ref=HAIKU_200K)
    rig.timer.activity(sid)  # … and on after it finished
    await rig.timer.wait_idle()
    assert rig.timer.armed(sid) is None
    await rig.advance(QUIET_S)
    assert rig.timer.armed(sid) == rig.at(t1 + 240)


async def test_a_new_run_cancels_until_it_completes(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    rig.fake.fail("server_error")
    assert await rig.runner.send(sid, [TextBlock("again")], model_ref=HAIKU_200K) is None
    await rig.timer.wait_idle()
    assert rig.timer.armed(sid) is None  # the run started; it failed, so no re-arm
    await rig.advance(1000)
    assert rig.compactions == []


async def test_a_manual_compaction_cancels(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    rig.runner.events.emit(CompactEvent("compact:start", sid, "manual"))
    assert rig.timer.armed(sid) is None
    rig.runner.events.emit(CompactEvent("compact:end", sid, "manual"))
    assert rig.timer.expiry(sid) is None  # the old prefix's cache no longer matters
    await rig.advance(1000)
    assert rig.compactions == []


async def test_activity_while_the_timer_compacts_stops_that_compaction(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    started, cancelled = asyncio.Event(), []

    async def slow(session_id, reason):
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(session_id)
            raise

    rig.compact_impl = slow
    rig.clock.advance(240)
    await asyncio.wait_for(started.wait(), 5)
    rig.timer.activity(sid)
    await rig.timer.wait_idle()
    assert cancelled == [sid] and rig.errors == []


async def test_turning_the_setting_off_disarms_and_on_re_arms_an_idle_session(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)
    await rig.enable(False)
    assert rig.timer.armed(sid) is None and rig.clock.pending == []
    await rig.enable(True)
    assert rig.timer.armed(sid) == rig.at(t0 + 240)


async def test_a_late_wake_after_sleep_does_not_compact_a_cold_cache(rig):
    await rig.enable()
    sid = await rig.session()
    t0 = rig.clock.time()
    await rig.request(sid, HAIKU_200K, 150_000)
    rig.clock.now = t0 + 400  # the laptop slept through the deadline
    await rig.advance(0)
    assert rig.compactions == [] and rig.timer.expiry(sid) is None


async def test_a_failed_compaction_is_reported_not_raised(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)

    class Refused(ParleyError):
        pass

    async def refuse(session_id, reason):
        raise Refused("The summary model is not available.")

    rig.compact_impl = refuse
    await rig.advance(240)
    assert [type(e) for e in rig.errors] == [Refused]
    assert rig.timer.armed(sid) is None


# -- several sessions, one clock handle, closing ----------------------------------------


async def test_several_sessions_share_one_clock_handle_for_the_earliest_deadline(rig):
    await rig.enable()
    a, b, c = rig.session(), rig.session(), rig.session()
    a, b, c = await a, await b, await c
    t0 = rig.clock.time()
    await rig.request(a, HAIKU_200K, 150_000)
    rig.clock.advance(30)
    await rig.request(b, HAIKU_200K, 200_000)
    rig.clock.advance(30)
    await rig.request(c, HAIKU_200K, 50_000)  # short: never armed
    assert rig.clock.pending == [t0 + 240]  # one handle, a's deadline

    rig.timer.activity(a)  # paused: the one handle is now a's re-arming once quiet
    assert rig.clock.pending == [t0 + 60 + QUIET_S]
    await rig.request(a, HAIKU_200K, 150_000)  # a re-armed at t0 + 60 + 240
    assert rig.clock.pending == [t0 + 270]

    await rig.advance(1000)
    assert [(s, t) for s, _, t in rig.compactions] == [(b, t0 + 270), (a, t0 + 300)]
    assert rig.clock.pending == []


async def test_many_idle_sessions_wake_once_per_distinct_deadline(rig):
    await rig.enable()
    sids = [await rig.session() for _ in range(6)]
    for sid in sids:
        await rig.request(sid, HAIKU_200K, 120_000)  # same clock time: same deadline
    assert len(rig.clock.pending) == 1
    await rig.advance(240)
    assert sorted(s for s, _, _ in rig.compactions) == sorted(sids)


async def test_closing_drops_pending_timers(rig):
    await rig.enable()
    sid = await rig.session()
    await rig.request(sid, HAIKU_200K, 150_000)
    rig.timer.close()
    assert rig.clock.pending == []
    await rig.advance(1000)
    assert rig.compactions == [] and rig.timer.expiry(sid) is None
    await rig.request(sid, HAIKU_200K, 150_000)  # no longer listening
    assert rig.clock.pending == []
