"""The provider process (parley.core.providers.process): requests sent there through the
real SDKs to the fake provider server, errors and their fields back, a stopped reply
stopped there, and a process that ended replaced at the next request."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import time
from typing import Any

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.providers import errors
from parley.core.providers.anthropic_provider import AnthropicProvider
from parley.core.providers.base import ChatRequest, Stop, TextDelta
from parley.core.providers.process.client import PONG_WAIT_S, ProviderProcess, RemoteSender
from parley.core.providers.process.protocol import SenderSpec
from parley.core.providers.process.silence import process_silences

KEY = "sk-ant-fake.PROCESS-0123456789"
MODEL = "claude-haiku-4-5"


def params(url: str, text: str = "hi") -> dict[str, Any]:
    request = ChatRequest(MODEL, [Turn("user", [TextBlock(text)])], cache=False)
    return AnthropicProvider(None, url).request_params(request)


@pytest.fixture
async def own_process():
    """A provider process of this test's own (the shared one is left alone)."""
    process = ProviderProcess()
    yield process
    process.close()


def sender(process: ProviderProcess, url: str, key: str = KEY) -> RemoteSender:
    return RemoteSender(SenderSpec("anthropic", "Anthropic", url, key), process)


@pytest.mark.parametrize("error", [
    errors.AuthenticationFailed("Anthropic", missing=True),
    errors.RateLimited("Anthropic", 12.5, "slow down"),
    errors.NetworkError("Ollama", "http://127.0.0.1:11434/v1", timed_out=True),
    errors.ContextOverflow("Anthropic", 210_000, 200_000),
    errors.StreamInterrupted("Anthropic", "cut", nothing_arrived=True),
    errors.StreamInterrupted("Anthropic", "no data arrived in time", cause="timeout"),
    errors.ProviderProcessStopped("Anthropic", "exit status -9"),
    errors.ProviderProcessStopped("Anthropic", "it stopped answering for 15 s", hung=True),
])
def test_errors_cross_with_their_type_and_fields(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and back.__dict__ == error.__dict__
    assert str(back) == str(error) and back.retryable == error.retryable


async def test_a_reply_and_a_refusal_come_back_from_the_process(fake_provider, own_process):
    remote = sender(own_process, fake_provider.anthropic_base_url)
    fake_provider.script("Hello from the other process.")
    info = AnthropicProvider(None).model_info(MODEL)
    events = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Hello from the other process." and events[-1] == Stop("end_turn")
    assert fake_provider.last_request.has_auth
    fake_provider.fail("rate_limit", retry_after=7)
    with pytest.raises(errors.RateLimited) as refused:
        [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
    assert refused.value.retry_after_s == 7 and refused.value.provider == "Anthropic"


async def test_a_stopped_reply_is_stopped_in_the_process(fake_provider, own_process):
    remote = sender(own_process, fake_provider.anthropic_base_url)
    fake_provider.script("word " * 400, token_delay_ms=50, chunk_size=5)
    info = AnthropicProvider(None).model_info(MODEL)
    events = remote.attempt(params(fake_provider.anthropic_base_url), info)
    first = [await anext(events) for _ in range(3)]
    assert any(isinstance(e, TextDelta) for e in first)
    await events.aclose()  # what Stop does
    assert own_process._replies == {}  # noqa: SLF001 - nothing waits any more
    fake_provider.script("Next.")
    again = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
    assert "".join(e.text for e in again if isinstance(e, TextDelta)) == "Next."


async def test_a_process_that_ended_is_replaced_at_the_next_request(fake_provider, own_process):
    remote = sender(own_process, fake_provider.anthropic_base_url)
    info = AnthropicProvider(None).model_info(MODEL)
    fake_provider.script("word " * 400, token_delay_ms=50, chunk_size=5)
    events = remote.attempt(params(fake_provider.anthropic_base_url), info)
    assert await anext(events)
    first = own_process.generation
    os.kill(own_process._proc.pid, signal.SIGKILL)  # noqa: SLF001 - a crash
    with pytest.raises(errors.StreamInterrupted) as stopped:  # part of the reply had come
        async for _ in events:
            pass
    assert "broke off in the middle of the reply" in str(stopped.value)
    assert "connection process stopped" in str(stopped.value)
    assert stopped.value.cause == "process"  # the part kept says the process restarted
    fake_provider.reset()
    fake_provider.script("Back again.")
    events = remote.attempt(params(fake_provider.anthropic_base_url), info)
    again = [e async for e in events]
    assert own_process.generation == first + 1
    assert "".join(e.text for e in again if isinstance(e, TextDelta)) == "Back again."


async def test_the_process_ends_when_parley_closes_its_pipe(own_process, fake_provider):
    await sender(own_process, fake_provider.anthropic_base_url).open()
    proc = own_process._proc  # noqa: SLF001
    assert proc is not None and proc.poll() is None
    own_process.close(timeout_s=10)
    assert proc.returncode == 0  # it exited by itself, closing its clients


async def test_the_key_goes_over_the_pipe_not_the_command_line(own_process, fake_provider):
    await sender(own_process, fake_provider.anthropic_base_url).open()
    pid = own_process._proc.pid  # noqa: SLF001
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        command = f.read().decode()
    with open(f"/proc/{pid}/environ", "rb") as f:
        environment = f.read().decode(errors="replace")
    assert "parley.core.providers.process.worker" in command
    assert KEY not in command and KEY not in environment
    await asyncio.sleep(0)


async def test_a_request_sent_before_the_sdk_is_ready_waits_for_it(fake_provider):
    """The first request goes while the process still imports the SDK: it waits there (no
    error, sent once)."""
    process = ProviderProcess()
    try:
        remote = sender(process, fake_provider.anthropic_base_url)
        fake_provider.script("Waited for.")
        info = AnthropicProvider(None).model_info(MODEL)
        before = len(fake_provider.model_requests)
        events = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Waited for."
        assert len(fake_provider.model_requests) == before + 1
    finally:
        process.close()


async def test_a_process_that_ended_before_any_reply_says_so(fake_provider, own_process):
    remote = sender(own_process, fake_provider.anthropic_base_url)
    await remote.open()
    fake_provider.fail("hang", seconds=30)  # the request goes, no answer comes
    info = AnthropicProvider(None).model_info(MODEL)
    events = remote.attempt(params(fake_provider.anthropic_base_url), info)
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.5)
    os.kill(own_process._proc.pid, signal.SIGKILL)  # noqa: SLF001 - a crash
    with pytest.raises(errors.ProviderProcessStopped) as stopped:
        await asyncio.wait_for(waiting, 20)
    assert stopped.value.retryable
    assert str(stopped.value).startswith("Parley's connection to Anthropic stopped unexpectedly")
    await events.aclose()


async def test_a_process_that_ends_while_idle_is_started_again_at_once(
        fake_provider, own_process, monkeypatch):
    from parley.core.providers.process import client

    monkeypatch.setattr(client, "RESTART_AFTER_S", 0.0)  # it ran long enough
    remote = sender(own_process, fake_provider.anthropic_base_url)
    await remote.open()
    first, ended = own_process.generation, own_process._proc  # noqa: SLF001
    os.kill(ended.pid, signal.SIGKILL)  # a crash while nothing is asked
    for _ in range(100):
        if own_process.generation > first:
            break
        await asyncio.sleep(0.05)
    assert own_process.generation == first + 1  # no request needed
    with open(f"/proc/{own_process._proc.pid}/cmdline", "rb") as f:  # noqa: SLF001
        assert f.read().split(b"\0")[-3:-1] == [b"--warm", b"anthropic"]  # its SDK at once
    fake_provider.script("Still here.")
    info = AnthropicProvider(None).model_info(MODEL)
    events = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Still here."


async def test_a_hung_process_is_ended_and_its_request_fails_then_retries(
        fake_provider, monkeypatch):
    """A process that stops answering (SIGSTOP: as a deadlock looks from outside) is
    killed after its silence; a request waiting fails, retryable, saying so, and the next
    one goes to a new process; one hung while idle is replaced before anything is asked."""
    from parley.core.providers.process import client

    process = ProviderProcess(hung_after_s=2.0)
    try:
        remote = sender(process, fake_provider.anthropic_base_url)
        await remote.open()
        first, hung = process.generation, process._proc  # noqa: SLF001
        await asyncio.sleep(3)  # idle for longer than hung_after_s: not taken for hung
        assert process.generation == first and hung.poll() is None
        fake_provider.script("word " * 400, token_delay_ms=50, chunk_size=5)
        info = AnthropicProvider(None).model_info(MODEL)
        events = remote.attempt(params(fake_provider.anthropic_base_url), info)
        assert await anext(events)
        await asyncio.sleep(3)  # streaming for longer than hung_after_s: it answers
        assert hung.poll() is None
        os.kill(hung.pid, signal.SIGSTOP)
        with pytest.raises(errors.StreamInterrupted) as stopped:
            await asyncio.wait_for(_drain(events), 20)
        assert stopped.value.retryable
        assert "connection process stopped answering and was restarted" in str(stopped.value)
        assert stopped.value.cause == "process"
        assert hung.wait(5) == -signal.SIGKILL
        fake_provider.reset()
        fake_provider.script("After the hang.")
        again = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
        assert "".join(e.text for e in again if isinstance(e, TextDelta)) == "After the hang."
        assert process.generation == first + 1

        os.kill(process._proc.pid, signal.SIGSTOP)  # noqa: SLF001 - hung before any reply
        with pytest.raises(errors.ProviderProcessStopped) as silent:
            await asyncio.wait_for(remote.models(), 20)
        assert "stopped answering for" in str(silent.value)

        monkeypatch.setattr(client, "RESTART_AFTER_S", 0.0)  # it would have run 15 s
        await remote.open()
        idle = process._proc  # noqa: SLF001 - hung while nothing is asked: mended anyway
        os.kill(idle.pid, signal.SIGSTOP)
        assert await asyncio.to_thread(idle.wait, 20) == -signal.SIGKILL
        for _ in range(100):
            if process._proc is not idle and process._proc is not None:  # noqa: SLF001
                break
            await asyncio.sleep(0.05)
        assert process._proc is not idle  # noqa: SLF001 - another, before any request
        fake_provider.script("Mended.")
        again = [e async for e in remote.attempt(params(fake_provider.anthropic_base_url), info)]
        assert "".join(e.text for e in again if isinstance(e, TextDelta)) == "Mended."
    finally:
        process.close()


async def test_closing_a_client_of_a_hung_process_does_not_hold_up_quitting(
        fake_provider, own_process):
    remote = sender(own_process, fake_provider.anthropic_base_url)
    await remote.open()
    os.kill(own_process._proc.pid, signal.SIGSTOP)  # noqa: SLF001
    started = asyncio.get_running_loop().time()
    await remote.close()
    assert asyncio.get_running_loop().time() - started < 5


@pytest.mark.parametrize("mid_reply", [False, True])
async def test_quitting_kills_a_stopped_process_at_once(fake_provider, mid_reply):
    """Quitting (its clients closed, then the process) does not wait for a process that
    does not answer (SIGSTOP, idle or in the middle of a reply): it is killed at once
    (it took CLOSE_WAIT_S and then close's 2 s more)."""
    process = ProviderProcess()
    try:
        remote = sender(process, fake_provider.anthropic_base_url)
        await remote.open()
        events = None
        if mid_reply:
            fake_provider.script("slow " * 200, token_delay_ms=50, chunk_size=2)
            info = AnthropicProvider(None).model_info(MODEL)
            events = remote.attempt(params(fake_provider.anthropic_base_url), info)
            await anext(events)
        proc = process._proc  # noqa: SLF001
        assert proc is not None
        os.kill(proc.pid, signal.SIGSTOP)
        started = time.monotonic()
        await remote.close()
        process.close()
        # Two unanswered pings of PONG_WAIT_S each (the clients', then the exit's), with room
        # for a loaded machine (CI under load: 1.88 s); waiting for it took 4.0 s (CLOSE_WAIT_S,
        # then close's 2 s).
        assert time.monotonic() - started < 2 * PONG_WAIT_S + 1.5
        assert proc.returncode == -signal.SIGKILL
        if events is not None:
            with pytest.raises(errors.StreamInterrupted):  # the reply in flight: cut
                await _drain(events)
    finally:
        process.close()


async def test_quitting_closes_a_healthy_process_cleanly(fake_provider):
    process = ProviderProcess()
    remote = sender(process, fake_provider.anthropic_base_url)
    await remote.open()
    proc = process._proc  # noqa: SLF001
    assert proc is not None
    await remote.close()
    process.close()
    assert proc.returncode == 0  # its pipe closed: it closed its clients and exited


async def test_a_request_is_told_when_the_process_stops_answering_and_answers_again(
        fake_provider, own_process):
    """A provider keeping the request waiting is no silence (the process answers its
    pings); a stopped process is, told after SILENT_AFTER_S, and told over when it runs
    again."""
    from parley.core.providers.process.client import SILENT_AFTER_S

    remote = sender(own_process, fake_provider.anthropic_base_url)
    await remote.open()
    told: list[bool] = []
    fake_provider.fail("hang", seconds=30)  # the provider says nothing for 30 s
    info = AnthropicProvider(None).model_info(MODEL)
    events = remote.attempt(params(fake_provider.anthropic_base_url), info)
    with process_silences(told.append):
        waiting = asyncio.ensure_future(anext(events))  # the request, in the block's context
    await asyncio.sleep(SILENT_AFTER_S + 1.5)  # past the hint and a watchdog ping
    assert told == [] and not waiting.done()
    pid = own_process._proc.pid  # noqa: SLF001
    os.kill(pid, signal.SIGSTOP)
    try:
        stopped_at = asyncio.get_running_loop().time()
        while not told and asyncio.get_running_loop().time() - stopped_at < 12:
            await asyncio.sleep(0.05)
        assert told == [True]
        # Counted from its last answer (a pong): SILENT_AFTER_S after it, which is at most
        # two watchdog ticks before the stop (a ping goes at the first tick 0.75 s after the
        # last answer; CI's load delayed one: told 1.81 s after the stop).
        quiet = time.monotonic() - own_process._quiet_from  # noqa: SLF001
        assert quiet >= SILENT_AFTER_S
        tick = SILENT_AFTER_S / 4
        assert asyncio.get_running_loop().time() - stopped_at >= SILENT_AFTER_S - 2 * tick
    finally:
        os.kill(pid, signal.SIGCONT)
    for _ in range(60):
        if len(told) == 2:
            break
        await asyncio.sleep(0.05)
    assert told == [True, False]
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await events.aclose()


class _PingsSeen(ProviderProcess):
    """A provider process whose pings are noted (when each was sent, monotonic s)."""

    def __init__(self) -> None:
        super().__init__()
        self.pings: list[float] = []

    def _ping(self) -> None:
        self.pings.append(time.monotonic())
        super()._ping()


async def test_a_process_that_stops_mid_reply_is_told_after_silent_after_s_too(fake_provider):
    """Stopped in the middle of a reply, just after a watchdog ping it answered: the
    request is told after SILENT_AFTER_S from its last answer, as before any reply (it
    was told only after the next ping of the quarter of HUNG_AFTER_S and 3 s more)."""
    from parley.core.providers.process.client import SILENT_AFTER_S

    process = _PingsSeen()
    try:
        remote = sender(process, fake_provider.anthropic_base_url)
        await remote.open()
        told: list[bool] = []
        fake_provider.script("slow " * 200, token_delay_ms=50, chunk_size=2)  # ~25 s
        info = AnthropicProvider(None).model_info(MODEL)
        events = remote.attempt(params(fake_provider.anthropic_base_url), info)
        with process_silences(told.append):
            first = asyncio.ensure_future(anext(events))
        await first  # the reply streams
        streaming = time.monotonic()
        while not [t for t in process.pings if t > streaming]:  # the watchdog's next ping
            assert time.monotonic() - streaming < 10
            await anext(events)
        for _ in range(5):  # its pong comes among the reply's events
            await anext(events)
        pid = process._proc.pid  # noqa: SLF001
        os.kill(pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        try:
            pending = asyncio.ensure_future(_drain(events))
            while not told and time.monotonic() - stopped_at < 12:
                await asyncio.sleep(0.05)
            waited = time.monotonic() - stopped_at
        finally:
            os.kill(pid, signal.SIGCONT)
        assert told[:1] == [True]
        assert SILENT_AFTER_S - 0.5 <= waited <= SILENT_AFTER_S + 1.5, waited
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        await events.aclose()
    finally:
        process.close()


async def _drain(events: Any) -> None:
    async for _ in events:
        pass
