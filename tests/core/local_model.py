"""A local (llama.cpp-compatible) model on the fake server, and requests and chats sent to it."""

from __future__ import annotations

from parley.core.content import TextBlock, Turn
from parley.core.providers.base import ChatRequest
from tests.core.compaction_support import open_env

TINY = "/models/tiny-270m-q8_0.gguf"  # llama.cpp names the model by its file


def request(model: str, *texts: str) -> ChatRequest:
    return ChatRequest(model, [Turn("user", [TextBlock(t)]) for t in texts or ("Hello?",)])


LOCAL = f"local:{TINY}"


def local_env(tmp_path, fake_provider):
    """``open_env`` with a compatible server "local" serving ``TINY``."""
    return open_env(tmp_path, fake_provider, compatible={
        "name": "Local", "provider_id": "local", "default_model": TINY})


async def send(env, text: str, model: str) -> tuple[Turn | None, list]:
    events: list = []
    reply = await env.runner.send(env.sid, [TextBlock(text)], model_ref=model,
                                  on_event=events.append)
    return reply, events
