"""How many trips to the store thread one message costs (``parley.core.chat.run``).

Every ``AsyncStore`` call is a hop to the store's worker thread and back; a run
reads the session once and the settings once (one snapshot) and passes them on
instead of reading them again in each step. The store here is the real one, on a
sessions.db file and on PostgreSQL (where each trip is a round trip to the server
too): the subclass only counts the calls it forwards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock
from parley.core.store.async_store import AsyncStore
from parley.core.tools.executor import ToolExecutor
from parley.core.tools.skills import SkillLibrary
from tests.core.hubs import fake_hub

P = ParamSpec("P")
T = TypeVar("T")

SONNET = "anthropic:claude-sonnet-4-6"


class CountingStore(AsyncStore):
    """The real ``AsyncStore``, counting its trips to the store thread by function name."""

    trips: Counter[str]

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if not hasattr(self, "trips"):
            self.trips = Counter()
        self.trips[getattr(fn, "__name__", "?")] += 1
        return await super()._call(fn, *args, **kwargs)


async def _send(runner: ChatRunner, store: CountingStore, sid: str, text: str) -> Counter[str]:
    store.trips = Counter()
    turn = await runner.send(sid, [TextBlock(text)], model_ref=SONNET)
    assert turn is not None and turn.text() == "Fine, thanks."
    return store.trips


@pytest.fixture
async def counted(tmp_path: Path, fake_provider: Any, any_target: Path | str
                  ) -> AsyncIterator[tuple[Any, ...]]:
    store = await CountingStore.open(any_target)
    hub = await fake_hub(store, tmp_path, fake_provider)
    skills = tmp_path / "skills"
    skills.mkdir()
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills, bundled_dir=None))
    try:
        yield store, hub, tools
    finally:
        await hub.aclose()
        await store.close()


async def test_a_message_reads_the_session_once_and_the_settings_once(
    counted: tuple[Any, ...], fake_provider: Any
) -> None:
    store, hub, _tools = counted
    runner = ChatRunner(store, hub, journal_interval_s=60, emit_interval_s=0.0)
    sid = (await store.create_session()).id
    fake_provider.script("Fine, thanks.")
    await _send(runner, store, sid, "How are you?")  # the first: titles the chat
    fake_provider.script("Fine, thanks.")
    trips = await _send(runner, store, sid, "And now?")
    assert trips["get_session"] == 1
    assert trips["all_settings"] + trips["get_setting"] == 1
    # the session, the settings, the message, the history, the reply (it was 6: the
    # session was read twice)
    assert sum(trips.values()) == 5, trips


async def test_a_message_with_tools_reads_the_session_once_and_the_settings_once(
    counted: tuple[Any, ...], fake_provider: Any
) -> None:
    store, hub, tools = counted
    runner = ChatRunner(store, hub, journal_interval_s=60, emit_interval_s=0.0, tools=tools)
    sid = (await store.create_session()).id
    fake_provider.script("Fine, thanks.")
    await _send(runner, store, sid, "How are you?")
    fake_provider.script("Fine, thanks.")
    trips = await _send(runner, store, sid, "And now?")
    assert trips["get_session"] == 1
    assert trips["all_settings"] + trips["get_setting"] == 1
    assert trips["get_state"] == 3  # the space's tool switch, unsupported models, the prompt
    # it was 11: the session three times, the settings twice
    assert sum(trips.values()) == 8, trips


async def test_a_request_is_converted_to_its_wire_form_once(
    counted: tuple[Any, ...], fake_provider: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The length check, the context estimates and the adapter share one
    ``to_messages`` of the history per request (it was four, and the new message
    alone was converted twice)."""
    from parley.core import wire

    store, hub, _tools = counted
    runner = ChatRunner(store, hub, journal_interval_s=60, emit_interval_s=0.0)
    sid = (await store.create_session()).id
    fake_provider.script("Fine, thanks.")
    await _send(runner, store, sid, "How are you?")
    converted: list[int] = []
    real = wire.apply_compactions  # every to_messages starts with it

    def counting(turns: Any) -> Any:
        converted.append(len(turns))
        return real(turns)

    monkeypatch.setattr(wire, "apply_compactions", counting)
    fake_provider.script("Fine, thanks.")
    await _send(runner, store, sid, "And now?")
    # the new message alone (its length check, before it is saved), then the history
    # once: question, reply, question
    assert converted == [1, 3]
    body = fake_provider.requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
