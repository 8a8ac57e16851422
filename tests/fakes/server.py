"""A fake model provider on 127.0.0.1 speaking the Anthropic and OpenAI wire formats.

Starlette app served by uvicorn in a background thread on an ephemeral port.
Routes:

- ``POST /v1/messages`` — Anthropic Messages, streaming (SSE) or not;
- ``POST /v1/messages/count_tokens`` — ``{"input_tokens": n}``;
- ``POST /v1/chat/completions`` — OpenAI Chat Completions, streaming or not;
- ``GET /v1/models`` (and ``/v1/models/{id}``) — Anthropic's shape when the
  request carries ``anthropic-version``, else OpenAI's (OpenAI entries carry
  any extra fields given, e.g. vLLM's ``max_model_len``);
- the same OpenAI routes under ``/openai/v1`` (:attr:`FakeProviderServer.openai_own_url`,
  playing OpenAI's own API);
- ``GET /props`` (llama.cpp), ``GET /api/v0/models`` (LM Studio) and
  ``POST /api/show`` (Ollama), see
  :mod:`tests.fakes.limits`, which also holds the token scale and the
  context-window refusals (``server.windows``).

Every request is recorded (headers without credentials, parsed JSON, raw
bytes). Model requests take the next scripted :class:`Reply` or
:class:`Failure`; tool pairing is checked by ``tests.fakes.validation`` and a
broken history gets the real APIs' 400. Usage reports a simulated prompt
cache (:mod:`tests.fakes.cache`).

Run by hand: ``python -m tests.fakes.server --port 8765`` and point the app's
Anthropic base URL at ``http://127.0.0.1:8765`` or an OpenAI-compatible
provider at ``http://127.0.0.1:8765/v1``; replies echo the last message, and a message
``/tool NAME {"arg": "value"}`` makes the model call that tool, then answer with its
result (:mod:`tests.fakes.tool_phrase`).
"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, get_args

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from tests.fakes.cache import PromptCache
from tests.fakes.handlers import (
    DEFAULT_ANTHROPIC_MODELS,
    DEFAULT_OPENAI_MODELS,
    OPENAI_OWN_PREFIX,
    FakeApi,
    QuietCut,
    RecordedRequest,
    tool_calls_of,
)
from tests.fakes.limits import WindowSettings
from tests.fakes.script import FAILURE_KINDS, Failure, Item, Reply, SummaryAnswers, ToolCall


class FakeProviderServer(FakeApi):
    """The fake provider: a scriptable server plus what it recorded.

    Args:
        host: address to bind (loopback only).
        port: TCP port; 0 picks a free one.

    Attributes:
        cache: the simulated prompt cache (``cache.clear()`` to cool it).
        anthropic_models / openai_models: what ``GET /v1/models`` lists.
        models_delay_s: seconds ``GET /v1/models`` waits before answering.
        valid_keys: when set, requests whose key is not in it get a 401.
        default_delay_ms: token delay of unscripted replies (the CLI's
            ``--token-delay-ms``).
        windows: token scale, context-window refusals and local servers'
            endpoints (:class:`tests.fakes.limits.WindowSettings`).
        summary_point_chars: characters of each user message an unscripted
            summary quotes (longer summaries for long messages).
        summary_answers: how unscripted summary requests are answered
            (:data:`tests.fakes.script.SummaryAnswers`: a summary, or one of the ways a
            model or server fails to give one).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.port: int = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._queue: deque[Item] = deque()
        self._by_model: dict[str, deque[Item]] = {}
        self._requests: list[RecordedRequest] = []
        self._generation = 0
        self._stopping = False
        self.cache = PromptCache()
        self.anthropic_models = list(DEFAULT_ANTHROPIC_MODELS)
        self.openai_models = list(DEFAULT_OPENAI_MODELS)
        self.valid_keys: set[str] | None = None
        self.default_delay_ms = 0.0
        self.models_delay_s = 0.0
        self.windows = WindowSettings()
        self.summary_point_chars = 120
        self.summary_answers: SummaryAnswers = "summary"
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._anthropic_messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self._anthropic_count, methods=["POST"]),
                Route("/v1/chat/completions", self._openai_chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/models/{model_id:path}", self._model, methods=["GET"]),
                Route("/props", self._props, methods=["GET"]),
                Route("/api/show", self._ollama_show, methods=["POST"]),
                Route("/api/v0/models", self._lmstudio_models, methods=["GET"]),
                Mount(OPENAI_OWN_PREFIX + "/v1", routes=[
                    Route("/chat/completions", self._openai_chat, methods=["POST"]),
                    Route("/models", self._models, methods=["GET"]),
                    Route("/models/{model_id:path}", self._model, methods=["GET"]),
                ]),
            ]
        )
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # --- addresses -------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for ``AsyncAnthropic`` (the SDK adds ``/v1/messages``)."""
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        """Base URL for ``AsyncOpenAI`` (includes ``/v1``): to Parley, an OpenAI-compatible
        server (llama.cpp, Ollama, vLLM…), whatever kind a provider at it is saved with."""
        return self.base_url + "/v1"

    @property
    def openai_own_url(self) -> str:
        """The same OpenAI routes at an address playing OpenAI's own API: a provider of
        kind ``openai`` there is OpenAI to Parley while the ``fake_provider`` fixture
        lists it in ``PARLEY_OPENAI_URLS`` (``parley.core.providers.registry.is_openai_url``)."""
        return self.base_url + OPENAI_OWN_PREFIX + "/v1"

    # --- scripting -------------------------------------------------------

    def script(
        self,
        reply: str | None = None,
        *,
        thinking: str | None = None,
        signature: str | None = None,
        tool_calls: Iterable[ToolCall | Mapping[str, Any]] | None = None,
        usage: dict[str, int] | None = None,
        token_delay_ms: float = 0.0,
        chunk_size: int = 8,
        stop_reason: str | None = None,
        times: int = 1,
        model: str | None = None,
    ) -> FakeProviderServer:
        """Queue a reply for the next model request(s).

        Args:
            reply: the answer text (None: echo the last user message).
            thinking: extended thinking streamed first.
            signature: the thinking signature (generated when None).
            tool_calls: ``ToolCall``s or dicts ``{"name", "input", "id"?}``.
            usage: usage overrides, Anthropic names (``input_tokens``,
                ``output_tokens``, ``cache_read_input_tokens``,
                ``cache_creation_input_tokens``).
            token_delay_ms: pause after each streamed chunk, milliseconds.
            chunk_size: characters per delta.
            stop_reason: Anthropic stop reason (mapped for OpenAI).
            times: queue it this many times.
            model: only for requests to this model id (e.g. ``claude-opus-4-6``): its
                own queue, used before the shared one (several models asked at once).

        Returns:
            self, so calls chain.
        """
        item = Reply(
            reply,
            thinking,
            signature,
            tool_calls_of(tool_calls),
            usage,
            token_delay_ms,
            chunk_size,
            stop_reason,
        )
        self._enqueue(item, times, model)
        return self

    def _enqueue(self, item: Item, times: int, model: str | None) -> None:
        with self._lock:
            queue = self._queue if model is None else self._by_model.setdefault(model, deque())
            queue.extend(replace(item) for _ in range(times))

    def fail(
        self, kind: str, *, times: int = 1, reply: str | None = None, model: str | None = None,
        **options: Any,
    ) -> FakeProviderServer:
        """Queue a failure for the next model request(s).

        Args:
            kind: one of ``auth``, ``permission``, ``not_found``, ``rate_limit``,
                ``overloaded``, ``server_error``, ``prompt_too_long``,
                ``bad_request``, ``mid_stream_error``, ``cut``, ``hang``.
            times: queue it this many times.
            model: only for requests to this model id (as for :meth:`script`).
            reply: for mid_stream_error / cut, the text streamed before it.
            options: :class:`Failure` fields (``retry_after`` s, ``tokens``,
                ``maximum``, ``flavor``, ``message``, ``after_chars``,
                ``seconds``, ``error_type``; ``token_delay_ms`` and
                ``chunk_size`` shape the partial reply).

        Raises:
            ValueError: unknown kind.
        """
        if kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}; one of {FAILURE_KINDS}")
        delay = options.pop("token_delay_ms", 0.0)
        chunk_size = options.pop("chunk_size", 8)
        failure = Failure(kind, **options)  # type: ignore[arg-type]
        if reply is not None:
            failure.reply = Reply(reply)
        failure.reply.token_delay_ms = delay
        failure.reply.chunk_size = chunk_size
        self._enqueue(failure, times, model)
        return self

    @property
    def pending(self) -> int:
        """How many scripted items are still queued."""
        with self._lock:
            return len(self._queue) + sum(len(q) for q in self._by_model.values())

    def reset(self) -> None:
        """Forget the script, the recorded requests, the cache and the key check."""
        with self._lock:
            self._queue.clear()
            self._by_model.clear()
            self._requests.clear()
            self._generation += 1
        self.cache.clear()
        self.valid_keys = None
        self.default_delay_ms = 0.0
        self.models_delay_s = 0.0
        self.anthropic_models = list(DEFAULT_ANTHROPIC_MODELS)
        self.openai_models = list(DEFAULT_OPENAI_MODELS)
        self.windows = WindowSettings()
        self.summary_point_chars = 120
        self.summary_answers: SummaryAnswers = "summary"

    # --- what was received ---------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received since the last reset, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Only the model requests (messages / chat completions)."""
        return [r for r in self.requests if r.route in ("/v1/messages", "/v1/chat/completions")]

    @property
    def last_request(self) -> RecordedRequest | None:
        """The most recent request, or None."""
        with self._lock:
            return self._requests[-1] if self._requests else None

    # --- lifecycle -------------------------------------------------------

    def start(self) -> FakeProviderServer:
        """Serve in a daemon thread; returns once the port accepts connections."""
        logging.getLogger("uvicorn.error").addFilter(QuietCut())
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name="fake-provider",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake provider server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (at most a few seconds)."""
        self._stopping = True
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._sock.close()


#: The model ``--window`` adds (its window is the flag's value).
SMALL_MODEL = "claude-small-window"


def configure(server: FakeProviderServer, *, window: int | None = None,
              token_scale: float = 1.0, summary_answers: SummaryAnswers = "summary") -> None:
    """Apply the command line's compaction knobs to a server.

    Args:
        server: the fake server.
        window: add :data:`SMALL_MODEL` (an Anthropic model) with this many tokens of
            context window and enforce every listed model's window (None: neither).
        token_scale: input tokens reported per token of Parley's estimate (>= 1).
        summary_answers: how unscripted summary requests are answered.
    """
    if window is not None:
        server.anthropic_models = [*server.anthropic_models, {
            "id": SMALL_MODEL, "display_name": f"Claude Small Window ({window:,} tokens)",
            "max_input_tokens": window, "max_tokens": 4_096}]
        server.windows.enforce_windows = True
    server.windows.token_scale = token_scale
    server.summary_answers = summary_answers


def main(argv: list[str] | None = None) -> None:
    """Command line: serve until Ctrl+C, printing the base URLs to use."""
    parser = argparse.ArgumentParser(description="Parley's fake model provider (127.0.0.1 only).")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--token-delay-ms",
        type=float,
        default=20.0,
        help="pause between streamed chunks (default 20)",
    )
    parser.add_argument(
        "--key",
        action="append",
        metavar="KEY",
        help="accept only this API key (repeatable); others get 401, as a real "
        "provider answers a wrong key (default: any key)",
    )
    parser.add_argument(
        "--window",
        type=int,
        metavar="N",
        help=f"add the model {SMALL_MODEL} with an N-token context window and refuse "
        "prompts over any model's window (\"prompt is too long\"), as a real provider "
        "does: try automatic compaction in a short chat",
    )
    parser.add_argument(
        "--token-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="report F input tokens for each one Parley estimates (default 1): a "
        "provider whose tokenizer counts more",
    )
    parser.add_argument(
        "--summary-answers",
        choices=get_args(SummaryAnswers),
        default="summary",
        help="how summary requests are answered: a summary (default), the same without "
        "<summary> tags, a chatty non-summary, one cut off, an empty answer, or HTTP 500 "
        "(try the fallback when no summary can be made)",
    )
    args = parser.parse_args(argv)
    if args.window is not None and args.window < 1_000:
        parser.error("--window must be at least 1000 tokens")
    if args.token_scale < 1.0:
        parser.error("--token-scale must be at least 1")
    try:
        server = FakeProviderServer(port=args.port)
    except OSError as exc:
        parser.exit(2, f"Cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}): "
                       f"another program uses that port. Choose another with --port, "
                       f"e.g. --port {args.port + 10000 if args.port < 55535 else 18765}.\n")
    server.default_delay_ms = args.token_delay_ms
    configure(server, window=args.window, token_scale=args.token_scale,
              summary_answers=args.summary_answers)
    if args.key:
        server.valid_keys = set(args.key)
    print(f"Anthropic base URL:         {server.anthropic_base_url}")
    print(f"OpenAI-compatible base URL: {server.openai_base_url}")
    keys = "only the key(s) given with --key" if args.key else "any key"
    print(f"Replies echo your last message; {keys} is accepted. Ctrl+C stops.")
    if args.window is not None:
        print(f"Model {SMALL_MODEL} has a {args.window:,}-token context window; prompts over "
              "a model's window are refused.")
    if args.token_scale != 1.0 or args.summary_answers != "summary":
        print(f"Input tokens counted x{args.token_scale:g}; summary requests answered: "
              f"{args.summary_answers}.")
    print('A message "/tool NAME {\"arg\": \"value\"}" makes the model call that tool.',
          flush=True)
    config = uvicorn.Config(server.app, log_level="info", lifespan="off")
    uvicorn.Server(config).run(sockets=[server._sock])


if __name__ == "__main__":
    main()
