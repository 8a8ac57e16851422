"""A crash loses at most ~one journal interval of a reply, even when the stream pauses.

parley.core.chat.journal: "Streamed output is journalled as it arrives
(throttled, e.g. every ~250 ms) so a crash loses at most that much." Models
pause mid-reply (long thinking, a tool call's input being generated, a slow
network): text that arrived just after a journal write must still reach the
file about one interval later, not only when the next piece of the stream
arrives. The provider here is a stand-in that streams a burst, then pauses —
the fake HTTP server streams at an even pace and cannot pause — and the
store is the real one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from parley.core.chat.run import ChatRunner, text_blocks
from parley.core.errors import ParleyError
from parley.core.providers.base import Stop, TextDelta
from parley.core.providers.capabilities import ANTHROPIC
from parley.core.store import AsyncStore

INTERVAL_S = 0.25
BURST = [f"piece {i} " for i in range(5)]


class PausingProvider:
    """Streams a burst of text, pauses, then ends the reply."""

    caps = ANTHROPIC  # the run loop checks attachment limits by provider kind

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s

    async def stream(self, _request: Any) -> AsyncIterator[object]:
        for piece in BURST:
            yield TextDelta(piece)
            await asyncio.sleep(0.005)
        await asyncio.sleep(self.pause_s)
        yield TextDelta("the end.")
        yield Stop("end_turn")


class OneProviderHub:
    def __init__(self, provider: PausingProvider) -> None:
        self.provider = provider

    def resolve(self, _model_ref: str) -> tuple[PausingProvider, str]:
        return self.provider, "model"

    def model_info(self, model_ref: str) -> Any:
        raise ParleyError(f"unknown model {model_ref}")  # as for a model the catalog lacks


async def test_text_before_a_pause_reaches_the_file_within_about_one_interval(tmp_path):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    try:
        sid = (await store.create_session()).id
        runner = ChatRunner(store, OneProviderHub(PausingProvider(pause_s=2.0)),
                            journal_interval_s=INTERVAL_S)
        task = asyncio.ensure_future(runner.send(sid, text_blocks("go"), model_ref="x:model"))
        t0 = time.monotonic()
        stored = ""
        while time.monotonic() - t0 < 4 * INTERVAL_S:  # well inside the 2 s pause
            await asyncio.sleep(0.02)
            turns = await store.get_turns(sid)
            stored = turns[-1].text() if turns[-1].role == "assistant" else ""
            if stored == "".join(BURST):
                break
        assert stored == "".join(BURST), f"after {4 * INTERVAL_S} s the file holds {stored!r}"
        reply = await task
        assert reply is not None and reply.text() == "".join(BURST) + "the end."
    finally:
        await store.close()
