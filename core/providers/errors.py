"""Provider errors a person can act on, in the core's own types.

Every adapter maps its SDK's exceptions (and error events inside a stream) to
one of these. Each message names the provider, says what happened and what to
do; the conversation itself is always kept (the user's turn is saved before
the request is sent). A message never contains an API key: text that comes
from the API is passed through :func:`scrub` first.

The provider is named as the person set it up (``naming.message_name``): the name
typed in Settings, "the server at 127.0.0.1:8000" for a default-named provider sent to
another server than its vendor's (a proxy at ``ANTHROPIC_BASE_URL``), else the vendor
("Anthropic"). A name starting with "the" is capitalized where it starts a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from parley.core.errors import ParleyError

#: Things that look like API keys (``sk-…``, ``sk-ant-…``, masked ``sk-ab***wxyz``).
_KEYLIKE = re.compile(r"\b(?:sk|key|pk|rk)-[A-Za-z0-9_\-\*\.]{6,}", re.IGNORECASE)


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` with every given secret and anything key-like replaced by ``[redacted]``.

    Args:
        text: a message that may quote a key (OpenAI's 401 echoes a masked one).
        secrets: exact values to remove (the key in use); None and short values
            (under 4 characters) are ignored.
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


def server_address(url: str) -> str:
    """The host and port of ``url`` as a person would say it (``127.0.0.1:8000``,
    ``proxy.example.com``): no scheme, path or credentials; ``url`` itself when it has
    no host."""
    parts = urlsplit(url.strip() if "://" in url else "//" + url.strip())
    host = parts.netloc.rsplit("@", 1)[-1]
    return host or url


def _start(provider: str) -> str:
    """``provider`` at the start of a sentence ("the server at …" → "The server at …")."""
    return "The" + provider[3:] if provider.startswith("the ") else provider


def _names_address(provider: str, url: str | None) -> bool:
    """True when ``provider`` (a message name) already says ``url``'s address."""
    return bool(url) and f"server at {server_address(url or '')}" in provider


class ProviderError(ParleyError):
    """A model provider request failed.

    Attributes:
        provider: the provider's name in messages, e.g. ``"Anthropic"``, ``"My proxy"``
            or ``"the server at 127.0.0.1:8000"`` (``naming.message_name``).
        status: the HTTP status, when there was one (200 for an error event
            inside a stream).
        retryable: whether sending the same request again may succeed
            (before any output arrived).
    """

    retryable: bool = False

    def __init__(self, message: str, *, provider: str, status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class AuthenticationFailed(ProviderError):
    """The provider rejected the API key (HTTP 401), or there is no key."""

    def __init__(self, provider: str, *, status: int | None = 401, missing: bool = False) -> None:
        if missing:
            text = (
                f"No API key is set for {provider}. Add one in Settings → Providers. "
                "Your conversation is saved."
            )
        else:
            text = (
                f"{_start(provider)} rejected the API key. Check or replace the key in "
                "Settings → Providers. Your conversation is saved."
            )
        super().__init__(text, provider=provider, status=status)
        self.missing = missing


class PermissionDenied(ProviderError):
    """The key works but may not use this model or resource (HTTP 403)."""

    def __init__(self, provider: str, detail: str = "") -> None:
        super().__init__(
            f"{_start(provider)} refused the request: this API key is not allowed to use it"
            f"{_detail(detail)}. Check the key's permissions or pick another model. "
            "Your conversation is saved.",
            provider=provider,
            status=403,
        )


class RateLimited(ProviderError):
    """Too many requests or tokens for the account (HTTP 429).

    Attributes:
        retry_after_s: seconds the provider asked to wait, when it said.
    """

    retryable = True

    def __init__(self, provider: str, retry_after_s: float | None = None, detail: str = "") -> None:
        wait = (
            f"Wait about {_seconds(retry_after_s)} and send again"
            if retry_after_s
            else "Wait a moment and send again"
        )
        super().__init__(
            f"{_start(provider)} is rate-limiting this account{_detail(detail)}. {wait}. "
            "Your conversation is saved.",
            provider=provider,
            status=429,
        )
        self.retry_after_s = retry_after_s


class Overloaded(ProviderError):
    """The provider is temporarily overloaded (Anthropic 529 / ``overloaded_error``, 503)."""

    retryable = True

    def __init__(self, provider: str, status: int | None = 529) -> None:
        super().__init__(
            f"{_start(provider)} is overloaded right now. Try again in a minute; "
            "your conversation is saved.",
            provider=provider,
            status=status,
        )


class ServerError(ProviderError):
    """The provider failed on its side (HTTP 5xx)."""

    retryable = True

    def __init__(self, provider: str, status: int | None = 500, detail: str = "") -> None:
        super().__init__(
            f"{_start(provider)} had an internal error{_detail(detail)}. Try again; "
            "your conversation is saved.",
            provider=provider,
            status=status,
        )


class NetworkError(ProviderError):
    """The provider could not be reached, or did not answer in time.

    Attributes:
        timed_out: True for a timeout, False for a refused or broken connection.
    """

    retryable = True

    def __init__(self, provider: str, url: str | None = None, *, timed_out: bool = False) -> None:
        named = provider
        where = f" at {url}" if url else ""
        if url and _names_address(provider, url):  # "the server at 127.0.0.1:8000", once
            provider, where = f"the server at {url}", ""
        if timed_out:
            text = (
                f"{_start(provider)}{where} did not answer in time. Check your connection "
                "and try again; your conversation is saved."
            )
        else:
            text = (
                f"Parley could not reach {provider}{where}. Check your internet "
                "connection (or that the local server is running) and try again; "
                "your conversation is saved."
            )
        super().__init__(text, provider=named)
        self.timed_out = timed_out


class ContextOverflow(ProviderError):
    """The conversation is longer than the model's context window.

    Attributes:
        tokens: the prompt size the provider reported, when it said.
        maximum: the model's context window, when it said.
    """

    def __init__(
        self, provider: str, tokens: int | None = None, maximum: int | None = None
    ) -> None:
        size = ""
        if tokens and maximum:
            size = f" ({tokens:,} tokens; the model takes at most {maximum:,})"
        elif maximum:
            size = f" (the model takes at most {maximum:,} tokens)"
        super().__init__(
            f"This conversation is too long for the model{size}. Compact it, start a new "
            f"chat, or pick a model with a larger context window. Nothing was lost. "
            f"({provider})",
            provider=provider,
            status=400,
        )
        self.tokens = tokens
        self.maximum = maximum


class StreamInterrupted(ProviderError):
    """The reply stream broke off before the provider finished it.

    Attributes:
        nothing_arrived: True when the stream ended before any part of the reply
            (the message then does not speak of a kept part).
        cause: why, in one word (one of :data:`STREAM_CAUSES`): ``connection`` the
            connection broke, ``timeout`` no data arrived in time, ``unreadable`` the
            server sent data Parley could not read, ``ended`` the server closed the
            stream before the reply was complete, ``process`` Parley's provider
            process stopped (and starts again), ``error`` the server sent an error
            inside the stream. Kept with the part that arrived
            (``parley.core.chat.reply.failed_stop_reason``), so its mark says why.
    """

    retryable = True

    def __init__(self, provider: str, detail: str = "", *, nothing_arrived: bool = False,
                 cause: str = "connection") -> None:
        if nothing_arrived:
            text = (
                f"{_start(provider)} ended the reply before sending any of it{_detail(detail)}. "
                "Nothing arrived, and your conversation is saved; send again to retry, or "
                "check the server's own log for the reason."
            )
        else:
            text = (
                f"The connection to {provider} broke off in the middle of the reply"
                f"{_detail(detail)}. What arrived is kept; send again to get a full answer."
            )
        super().__init__(text, provider=provider)
        self.nothing_arrived = nothing_arrived
        self.cause = cause


#: The values of ``StreamInterrupted.cause``.
STREAM_CAUSES = ("connection", "timeout", "unreadable", "ended", "process", "error")


class ProviderProcessStopped(ProviderError):
    """Parley's provider process (which sends the requests: ``parley.core.providers.process``)
    ended before the request was answered, or could not be started."""

    retryable = True

    def __init__(self, provider: str, detail: str = "", *, hung: bool = False) -> None:
        super().__init__(
            f"Parley's connection to {provider} stopped unexpectedly before the answer "
            f"came{_detail(detail)}. It starts again by itself: send again to retry. "
            "Your conversation is saved.",
            provider=provider,
        )
        #: it stopped answering and was ended (not ended by itself)
        self.hung = hung


class BadRequest(ProviderError):
    """The provider rejected the request as invalid (HTTP 400/422 and the like)."""

    def __init__(self, provider: str, detail: str = "", status: int | None = 400) -> None:
        super().__init__(
            f"{_start(provider)} rejected the request{_detail(detail)}. Your conversation is "
            "saved; changing the model or settings may help.",
            provider=provider,
            status=status,
        )


class ModelNotFound(ProviderError):
    """The provider does not know the model (HTTP 404)."""

    def __init__(self, provider: str, model: str | None = None) -> None:
        name = f"the model '{model}'" if model else "this model"
        super().__init__(
            f"{_start(provider)} does not offer {name}. Pick another model in the model picker "
            "(or pull it first, for a local server). Your conversation is saved.",
            provider=provider,
            status=404,
        )
        self.model = model


def _detail(detail: str) -> str:
    detail = detail.strip().rstrip(".")
    return f" ({detail})" if detail else ""


def _seconds(s: float | None) -> str:
    if s is None:
        return ""
    if s < 90:
        return f"{max(1, round(s))} s"
    return f"{round(s / 60)} min"
