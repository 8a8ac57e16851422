"""What each kind of provider API accepts (the wire rules read these flags) and where
the public service of a kind listens.

Sources: Anthropic Messages API (images allowed inside tool_result content;
prompt cache TTL 5 minutes, refreshed on each hit, or 1 hour with
``ttl: "1h"``), OpenAI Chat Completions (``role: tool`` messages carry text
only; automatic prompt caching with no published TTL, so an estimate from
settings), OpenAI-compatible local servers (no prompt cache we can rely on,
chat templates that often reject a trailing assistant message).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

ProviderKind: TypeAlias = Literal["anthropic", "openai", "openai_compatible"]

#: The API root of each kind's public service (an OpenAI-compatible server has none:
#: its address is always set up).
DEFAULT_URLS: dict[ProviderKind, str] = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}
#: Environment variables per provider kind: (base URL, API key). Declared here, with no
#: import beyond the standard library, so the window can read them before its first paint
#: (``parley.core.first_start``); ``parley.core.providers.registry`` uses them.
ENV_BASE_URL: dict[ProviderKind, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "openai": "OPENAI_BASE_URL",
}
ENV_API_KEY: dict[ProviderKind, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
}


@dataclass(frozen=True, slots=True)
class ProviderCaps:
    """Capabilities of one provider API.

    Attributes:
        kind: which API family.
        image_in_tool_result: images may sit inside a tool result (wire rule 6);
            otherwise they go in a companion user message.
        needs_user_tail: the API rejects a conversation ending with an
            assistant message (no prefill), so wire rule 5 appends a short
            synthetic user continuation.
        cache_ttl_s: prompt cache lifetime in seconds after the last request,
            or None when there is no cache to keep warm.
        has_count_tokens: the API offers a token-counting endpoint.
    """

    kind: ProviderKind
    image_in_tool_result: bool
    needs_user_tail: bool
    cache_ttl_s: int | None
    has_count_tokens: bool


ANTHROPIC = ProviderCaps("anthropic", True, False, 300, True)
OPENAI = ProviderCaps("openai", False, True, 300, False)
OPENAI_COMPATIBLE = ProviderCaps("openai_compatible", False, True, None, False)

CAPS_BY_KIND: dict[ProviderKind, ProviderCaps] = {
    "anthropic": ANTHROPIC,
    "openai": OPENAI,
    "openai_compatible": OPENAI_COMPATIBLE,
}
