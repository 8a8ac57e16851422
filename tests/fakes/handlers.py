"""What the fake provider answers: request handlers for both APIs.

:class:`FakeApi` holds the Starlette endpoints; :class:`~tests.fakes.server.FakeProviderServer`
adds the scripting, the recorded requests and the uvicorn thread around them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from tests.fakes import anthropic_api as anth
from tests.fakes import openai_api as oai
from tests.fakes import tool_phrase
from tests.fakes.anthropic_api import Unit
from tests.fakes.cache import PromptCache, count_anthropic_tokens, estimate_tokens, openai_elements
from tests.fakes.limits import (
    WindowSettings,
    llamacpp_error,
    llamacpp_python_error,
    llamacpp_stream_error,
)
from tests.fakes.script import CHATTY, LOREM, Failure, Item, Reply, SummaryAnswers, ToolCall
from tests.fakes.summaries import SUMMARY_ASK, summary_text
from tests.fakes.validation import validate_anthropic, validate_openai

#: Where the fake also serves its OpenAI routes, playing OpenAI's own API (that address
#: is listed in ``PARLEY_OPENAI_URLS`` by the ``fake_provider`` fixture); at ``/v1`` it
#: is what every other OpenAI-compatible server is to Parley.
OPENAI_OWN_PREFIX = "/openai"
AUTH_HEADERS = frozenset({"x-api-key", "authorization", "api-key"})

DEFAULT_ANTHROPIC_MODELS: list[dict[str, Any]] = [
    {"id": m, "display_name": name, "max_input_tokens": ctx, "max_tokens": out}
    for m, name, ctx, out in [
        ("claude-sonnet-4-6", "Claude Sonnet 4.6", 1_000_000, 128_000),
        ("claude-opus-4-6", "Claude Opus 4.6", 1_000_000, 128_000),
        ("claude-haiku-4-5", "Claude Haiku 4.5", 200_000, 64_000),
        ("claude-opus-4-1", "Claude Opus 4.1", 200_000, 32_000),
    ]
]
DEFAULT_OPENAI_MODELS: list[dict[str, Any]] = [
    {"id": "gpt-5"},
    {"id": "gpt-5-mini"},
    {"id": "gpt-4.1"},
    {"id": "llama3.2:3b"},
]


class _CutConnection(Exception):
    """Raised inside a streaming body to drop the connection mid-way."""


class QuietCut(logging.Filter):
    """Keeps uvicorn from logging the deliberate connection drops as crashes."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not _is_cut(exc)


def _is_cut(exc: BaseException | None, seen: set[int] | None = None) -> bool:
    seen = set() if seen is None else seen
    if exc is None or id(exc) in seen:
        return False
    seen.add(id(exc))
    if isinstance(exc, _CutConnection):
        return True
    if isinstance(exc, BaseExceptionGroup) and any(_is_cut(e, seen) for e in exc.exceptions):
        return True
    return _is_cut(exc.__cause__, seen) or _is_cut(exc.__context__, seen)


@dataclass
class RecordedRequest:
    """One request the server received.

    Attributes:
        method: HTTP method.
        path: URL path, e.g. ``/v1/messages``.
        query: query parameters.
        headers: lower-cased headers without credentials (x-api-key,
            authorization, api-key).
        body: the parsed JSON body (None when empty or not JSON).
        raw: the body bytes as received.
        has_auth: whether a credential header was present.
        at: time.monotonic() when it arrived.
    """

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw: bytes
    has_auth: bool
    at: float = field(default_factory=time.monotonic)

    @property
    def route(self) -> str:
        """The path without :data:`OPENAI_OWN_PREFIX` (the fake playing OpenAI's own API)."""
        return self.path.removeprefix(OPENAI_OWN_PREFIX)

    @property
    def api(self) -> str:
        """``anthropic``, ``openai`` or ``other`` by path."""
        if self.route.startswith("/v1/messages"):
            return "anthropic"
        if self.route.startswith("/v1/chat"):
            return "openai"
        return "other"


def tool_calls_of(calls: Iterable[ToolCall | Mapping[str, Any]] | None) -> list[ToolCall]:
    out = []
    for c in calls or []:
        if isinstance(c, ToolCall):
            out.append(c)
        else:
            out.append(ToolCall(name=c["name"], input=dict(c.get("input", {})), id=c.get("id")))
    return out


def _last_user_text(messages: Any) -> str:
    for msg in reversed(messages if isinstance(messages, list) else []):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                b.get("text", "")
                for b in content
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            if texts:
                return "\n".join(texts)
    return ""


_TITLE_ASK = "Write a title for this conversation."
#: Words a title model leaves out when it names the subject of a request (a title from
#: the request's first words would be an echo, which parley.core.chat.titles refuses).
_NOT_TOPIC = frozenset(re.findall(r"\w+", """
    a an the i me my you your we our to of in on for and or is are do does can could
    would will please how what why when where which who tell give show write explain
    about with this that it"""))
_USER_MESSAGE = re.compile(r"<user_message>\s*(.*?)\s*</user_message>", re.S)


def _parley_task_reply(said: str, messages: Any = None, point_chars: int = 120) -> str | None:
    """A plausible answer to Parley's own side requests, so the app reads sensibly
    against the fake server: a title from the subject words of the user's first
    message (at most five; question and filler words left out), or a summary of what
    the user said and shared (``tests.fakes.summaries.summary_text``);
    None for anything else."""
    if said.startswith(_TITLE_ASK):
        match = _USER_MESSAGE.search(said)
        first = (match.group(1) if match else "").strip().split("\n")[0]
        words = re.findall(r"[\w'’-]+", first)
        topic = [w for w in words if w.lower() not in _NOT_TOPIC] or words
        title = " ".join(topic[:5])
        return title[:1].upper() + title[1:] if title else None
    if SUMMARY_ASK not in said:
        return None
    return summary_text(said, messages, point_chars)


class FakeApi:
    """The endpoints and the state they read (set up by FakeProviderServer)."""

    _lock: threading.Lock
    _queue: deque[Item]
    _by_model: dict[str, deque[Item]]
    _requests: list[RecordedRequest]
    _generation: int
    _stopping: bool
    cache: PromptCache
    anthropic_models: list[dict[str, Any]]
    openai_models: list[dict[str, Any]]
    valid_keys: set[str] | None
    default_delay_ms: float
    models_delay_s: float
    windows: WindowSettings
    summary_point_chars: int
    summary_answers: SummaryAnswers

    # --- request plumbing ----------------------------------------------

    async def _record(self, request: Request) -> tuple[RecordedRequest, str | None]:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        key = request.headers.get("x-api-key") or request.headers.get("api-key")
        auth = request.headers.get("authorization", "")
        if not key and auth.lower().startswith("bearer "):
            key = auth[7:]
        rec = RecordedRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.query_params),
            headers={k: v for k, v in request.headers.items() if k.lower() not in AUTH_HEADERS},
            body=body,
            raw=raw,
            has_auth=bool(key),
        )
        with self._lock:
            self._requests.append(rec)
        return rec, key or None

    def _next(self, model: str | None = None) -> Item | None:
        """The next scripted item: one scripted for ``model`` first, else the shared queue's."""
        with self._lock:
            own = self._by_model.get(model or "")
            if own:
                return own.popleft()
            return self._queue.popleft() if self._queue else None

    def _key_rejected(self, key: str | None) -> bool:
        return self.valid_keys is not None and key not in self.valid_keys

    async def _hang(self, seconds: float) -> None:
        generation, end = self._generation, time.monotonic() + seconds
        while time.monotonic() < end and generation == self._generation and not self._stopping:
            await asyncio.sleep(0.02)

    async def _drive(
        self, units: list[Unit], failure: Failure | None, error: bytes, delay_ms: float,
        epoch: int | None = None,
    ) -> AsyncIterator[bytes]:
        """Stream ``units``; ``epoch``: cut when a later request starts a new one
        (``windows.interrupt_streams``)."""
        emitted = 0
        last_content = max((i for i, u in enumerate(units) if u.chars), default=len(units) - 3)
        for i, unit in enumerate(units):
            if failure is not None and (
                (unit.chars and emitted >= failure.after_chars) or i > last_content
            ):
                if failure.kind == "cut":
                    raise _CutConnection("fake provider: connection dropped on purpose")
                yield error
                return
            if epoch is not None and epoch != self.windows.stream_epoch:
                self.windows.interrupted += 1
                raise _CutConnection("fake provider: interrupted by a newer request")
            yield unit.data
            emitted += unit.chars
            if unit.chars and delay_ms > 0:
                await asyncio.sleep(delay_ms / 1000)

    def _unscripted(self, body: dict[str, Any]) -> Item:
        """What an unscripted request gets: a model's answer (``_text_of``), except that a
        message starting with ``/tool NAME {args}`` calls that tool and a tool's result is
        answered by quoting it (``tests.fakes.tool_phrase``), and a summary request is
        answered as ``summary_answers`` says (a model that does not follow the summary
        format, or a server that fails)."""
        said = _last_user_text(body.get("messages"))
        style = self.summary_answers
        if SUMMARY_ASK not in said:  # a "/tool NAME {args}" message, or a tool's result
            phrase = tool_phrase.reply_to(said, body, self.default_delay_ms)
            if phrase is not None:
                return phrase
        if style == "summary" or SUMMARY_ASK not in said:
            return Reply(token_delay_ms=self.default_delay_ms)
        if style == "error":
            return Failure("server_error")
        tagged = _parley_task_reply(said, body.get("messages"), self.summary_point_chars) or ""
        if style == "untagged":
            return Reply(text=tagged.replace("<summary>", "").replace("</summary>", "").strip())
        if style == "chatty":
            return Reply(text=CHATTY)
        if style == "cut":
            return Reply(text=tagged[: len(tagged) // 2], stop_reason="max_tokens")
        return Reply(text="")

    def _text_of(self, reply: Reply, body: dict[str, Any]) -> str:
        if reply.text is not None:
            return reply.text
        said = _last_user_text(body.get("messages"))
        messages = body.get("messages")
        reply = _parley_task_reply(said, messages, self.summary_point_chars)
        return reply or (f"You said: {said}" if said else LOREM)

    @staticmethod
    def _with_ids(reply: Reply, prefix: str) -> Reply:
        calls = [replace(c, id=c.id or prefix + uuid.uuid4().hex[:24]) for c in reply.tool_calls]
        return replace(reply, tool_calls=calls)

    @staticmethod
    def _output_tokens(reply: Reply, text: str) -> int:
        pieces = [text, reply.thinking or ""] + [json.dumps(c.input) for c in reply.tool_calls]
        return max(1, estimate_tokens("".join(pieces)))

    # --- Anthropic -------------------------------------------------------

    def _anthropic_error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> JSONResponse:
        return JSONResponse(
            anth.error_body(error_type, message),
            status_code=status,
            headers={"request-id": anth.request_id(), **(headers or {})},
        )

    def _anthropic_precheck(self, body: Any, key: str | None) -> JSONResponse | None:
        if self._key_rejected(key):
            return self._anthropic_error(401, "authentication_error", "invalid x-api-key")
        if not isinstance(body, dict):
            return self._anthropic_error(
                400, "invalid_request_error", "There was an error parsing the body of your request"
            )
        if not body.get("model"):
            return self._anthropic_error(400, "invalid_request_error", "model: Field required")
        if not body.get("messages"):
            return self._anthropic_error(
                400, "invalid_request_error", "messages: at least one message is required"
            )
        if (msg := validate_anthropic(body)):
            return self._anthropic_error(400, "invalid_request_error", msg)
        return None

    async def _anthropic_count(self, request: Request) -> Response:
        _, key = await self._record(request)
        body = await _json(request)
        if (err := self._anthropic_precheck(body, key)) is not None:
            return err
        return JSONResponse({"input_tokens": self.windows.scaled(count_anthropic_tokens(body))})

    async def _anthropic_messages(self, request: Request) -> Response:
        _, key = await self._record(request)
        body = await _json(request)
        if (err := self._anthropic_precheck(body, key)) is not None:
            return err
        if "max_tokens" not in body:
            return self._anthropic_error(400, "invalid_request_error", "max_tokens: Field required")
        model = str(body["model"])
        prompt = self.windows.scaled(count_anthropic_tokens(body))
        window = self.windows.anthropic_window(self.anthropic_models, model)
        if window is not None and prompt > window:  # refused before any script is used
            self.windows.refused += 1
            message = f"prompt is too long: {prompt} tokens > {window} maximum"
            return self._anthropic_error(400, "invalid_request_error", message)
        item = self._next(model) or self._unscripted(body)
        failure: Failure | None = None
        if isinstance(item, Failure):
            if item.kind == "hang":
                await self._hang(item.seconds)
                item = Reply()
            elif item.kind not in ("mid_stream_error", "cut"):
                status, payload = anth.failure_body(item, model, count_anthropic_tokens(body))
                headers = {"request-id": anth.request_id()}
                if item.retry_after is not None:
                    headers["retry-after"] = _fmt_seconds(item.retry_after)
                return JSONResponse(payload, status_code=status, headers=headers)
            elif not body.get("stream"):
                return self._anthropic_error(529, "overloaded_error", "Overloaded")
            else:
                failure, item = item, item.reply
        assert isinstance(item, Reply)
        reply = self._with_ids(item, "toolu_")
        text = self._text_of(reply, body)
        split = self.windows.scaled_usage(self.cache.anthropic(body))
        usage = anth.usage_json(split, self._output_tokens(reply, text), reply.usage)
        headers = {"request-id": anth.request_id()}
        if not body.get("stream"):
            return JSONResponse(anth.message_json(reply, text, model, usage), headers=headers)
        units = anth.stream_units(reply, text, model, usage)
        error = anth.error_event(
            failure.error_type if failure else "overloaded_error",
            failure.message or "Overloaded" if failure else "Overloaded",
        )
        return StreamingResponse(
            self._drive(units, failure, error, reply.token_delay_ms),
            media_type="text/event-stream",
            headers={**headers, "cache-control": "no-cache"},
        )

    # --- OpenAI ----------------------------------------------------------

    @staticmethod
    def _openai_error(
        status: int, message: str, type_: str, code: str | None = None, param: str | None = None
    ) -> JSONResponse:
        return JSONResponse(
            oai.error_body(message, type_, code, param),
            status_code=status,
            headers={"x-request-id": anth.request_id()},
        )

    async def _openai_chat(self, request: Request) -> Response:
        _, key = await self._record(request)
        body = await _json(request)
        if self._key_rejected(key):
            return self._openai_error(
                401,
                oai.STATUS_ERRORS["auth"][3].format(masked=oai.mask_key(key)),
                "invalid_request_error",
                "invalid_api_key",
            )
        if not isinstance(body, dict) or not body.get("model"):
            return self._openai_error(
                400, "you must provide a model parameter", "invalid_request_error"
            )
        if not body.get("messages"):
            return self._openai_error(
                400, "[] is too short - 'messages'", "invalid_request_error", None, "messages"
            )
        if (msg := validate_openai(body)):
            return self._openai_error(400, msg, "invalid_request_error", None, "messages")
        model = str(body["model"])
        prompt_tokens = self.windows.scaled(sum(estimate_tokens(e) for e in openai_elements(body)))
        epoch = None
        if self.windows.interrupt_streams:  # this request interrupts the ones in flight
            self.windows.stream_epoch += 1
            epoch = self.windows.stream_epoch
        if body.get("stream") and self.windows.empty_streams > 0:
            self.windows.empty_streams -= 1
            return StreamingResponse(_nothing(), media_type="text/event-stream")
        if self.windows.over_openai_window(prompt_tokens):  # before any script is used
            self.windows.refused += 1
            return self._openai_overflow(body, prompt_tokens)
        item = self._next(model) or self._unscripted(body)
        failure: Failure | None = None
        if isinstance(item, Failure):
            if item.kind == "hang":
                await self._hang(item.seconds)
                item = Reply()
            elif item.kind not in ("mid_stream_error", "cut"):
                status, payload = oai.failure_body(item, model, prompt_tokens, key)
                headers = {"x-request-id": anth.request_id()}
                if item.retry_after is not None:
                    headers["retry-after"] = _fmt_seconds(item.retry_after)
                return JSONResponse(payload, status_code=status, headers=headers)
            elif not body.get("stream"):
                return self._openai_error(503, oai.STATUS_ERRORS["overloaded"][3], "server_error")
            else:
                failure, item = item, item.reply
        assert isinstance(item, Reply)
        reply = self._with_ids(item, "call_")
        text = self._text_of(reply, body)
        split = self.windows.scaled_usage(self.cache.openai(body))
        usage = oai.usage_json(split, self._output_tokens(reply, text), reply.usage)
        headers = {"x-request-id": anth.request_id()}
        if not body.get("stream"):
            return JSONResponse(oai.completion_json(reply, text, model, usage), headers=headers)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage")
                             and self.windows.usage_chunk)
        units = oai.stream_units(reply, text, model, usage, include_usage)
        error = oai.error_chunk(
            (failure.message if failure else None) or "The server is overloaded. Please retry."
        )
        return StreamingResponse(
            self._drive(units, failure, error, reply.token_delay_ms, epoch),
            media_type="text/event-stream",
            headers=headers,
        )

    def _openai_overflow(self, body: dict[str, Any], prompt_tokens: int) -> Response:
        """The refusal of a prompt over ``windows.openai_window``, as ``openai_overflow`` says."""
        window = self.windows.openai_window or 0
        style = self.windows.openai_overflow
        if style == "openai":
            failure = Failure("prompt_too_long", tokens=prompt_tokens, maximum=window)
            return JSONResponse(oai.context_overflow(failure, prompt_tokens), status_code=400)
        if style == "llamacpp_python":
            if body.get("stream"):  # HTTP 200 and nothing at all: the reason is in its log
                return StreamingResponse(_nothing(), media_type="text/event-stream")
            max_tokens = body.get("max_tokens")
            error = llamacpp_python_error(
                prompt_tokens, window, max_tokens if isinstance(max_tokens, int) else 0)
            return JSONResponse(error, status_code=400)
        if style == "llamacpp_400" or not body.get("stream"):
            return JSONResponse({"error": llamacpp_error(prompt_tokens, window)}, status_code=400)
        data = llamacpp_stream_error(prompt_tokens, window, as_data=style == "llamacpp_data")

        async def one() -> AsyncIterator[bytes]:
            yield data

        return StreamingResponse(one(), media_type="text/event-stream")

    async def _props(self, request: Request) -> Response:
        """llama.cpp's ``GET /props`` (404 unless ``windows.props`` is set)."""
        await self._record(request)
        if self.windows.props is None:
            return JSONResponse({"error": {"code": 404, "message": "File Not Found"}},
                                status_code=404)
        return JSONResponse(self.windows.props)

    async def _lmstudio_models(self, request: Request) -> Response:
        """LM Studio's ``GET /api/v0/models`` (404 unless ``windows.lmstudio_models`` is set)."""
        await self._record(request)
        if self.windows.lmstudio_models is None:
            return JSONResponse({"error": "Unexpected endpoint or method."}, status_code=404)
        return JSONResponse({"object": "list", "data": self.windows.lmstudio_models})

    async def _ollama_show(self, request: Request) -> Response:
        """Ollama's ``POST /api/show`` (404 for a model not in ``windows.ollama_show``)."""
        await self._record(request)
        body = await _json(request)
        name = body.get("model") or body.get("name") if isinstance(body, dict) else None
        shown = self.windows.ollama_show.get(str(name))
        if shown is None:
            return JSONResponse({"error": f"model '{name}' not found"}, status_code=404)
        return JSONResponse(shown)

    # --- models ----------------------------------------------------------

    async def _models(self, request: Request) -> Response:
        _, key = await self._record(request)
        if self.models_delay_s:
            await asyncio.sleep(self.models_delay_s)
        anthropic = "anthropic-version" in request.headers
        if self._key_rejected(key):
            if anthropic:
                return self._anthropic_error(401, "authentication_error", "invalid x-api-key")
            return self._openai_error(
                401,
                oai.STATUS_ERRORS["auth"][3].format(masked=oai.mask_key(key)),
                "invalid_request_error",
                "invalid_api_key",
            )
        if anthropic:
            return JSONResponse(anth.models_page(self.anthropic_models))
        return JSONResponse(oai.models_page(self.openai_models))

    async def _model(self, request: Request) -> Response:
        await self._record(request)
        model_id = request.path_params["model_id"]
        anthropic = "anthropic-version" in request.headers
        models = self.anthropic_models if anthropic else self.openai_models
        for m in models:
            if m["id"] == model_id:
                page = anth.models_page([m]) if anthropic else oai.models_page([m])
                return JSONResponse(page["data"][0])
        if anthropic:
            return self._anthropic_error(404, "not_found_error", f"model: {model_id}")
        return self._openai_error(
            404,
            f"The model `{model_id}` does not exist",
            "invalid_request_error",
            "model_not_found",
        )


async def _nothing() -> AsyncIterator[bytes]:
    """An empty response body (a stream that ends before its first event)."""
    return
    yield b""  # pragma: no cover - makes this an async generator


async def _json(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"
