"""A local server whose window Parley does not know: the first over-window refusal is the
last. When the chat cannot be summarized (every summary request fails), the request is
sent again with the newest turns that fit the window the refusal named, and the next
requests fit it from the start. Real sessions.db, real SDKs, the fake server playing a
llama.cpp server started with ``-c 3000`` that has no ``/props``.
"""

from __future__ import annotations

from parley.core.chat.events import OlderTurnsUnseen, RunFailed
from parley.core.compaction.unseen import load_unseen
from tests.core.local_model import LOCAL, local_env, send
from tests.core.unseen_support import message


async def test_a_refused_chat_goes_on_with_the_newest_turns_that_fit(tmp_path, fake_provider):
    fake_provider.windows.llamacpp(3_000, "llamacpp_400")
    fake_provider.windows.props = None  # the window is only known from the refusal
    fake_provider.summary_answers = "error"
    async with local_env(tmp_path, fake_provider) as env:
        told = []
        for n in range(8):
            reply, events = await send(env, message(n, tokens=300), LOCAL)
            assert reply is not None, [e for e in events if isinstance(e, RunFailed)]
            told += [e.unseen for e in events if isinstance(e, OlderTurnsUnseen)]

        assert fake_provider.windows.refused == 1  # the first refusal is the last
        unseen = await load_unseen(env.store, env.sid)
        assert unseen is not None and unseen.reason in ("summary-failed", "waiting")
        assert told and told[-1] == unseen
        assert len(await env.store.get_turns(env.sid)) == 16
