"""One request of a run: built, compacted if it must be, streamed, journalled.

The request is built once (``to_messages`` once; files checked against the provider's
limits before anything is sent), then streamed into a ``ReplyBuilder``, journalled as it
arrives (``parley.core.chat.journal``) and announced as ``ReplyUpdated`` at most every
``emit_interval_s``; a provider's retry waits are announced as ``RetryWaiting``, a
provider process that stops answering the request as ``ProviderProcessSilent``. The last
accepted request of each session is remembered for a cache-friendly summary.

Compaction (``parley.core.compaction.compact``, ``parley.core.compaction.run``):

* before a request whose context (``parley.core.compaction.wire.context_tokens``)
  reaches ``compaction.threshold`` of the model's context window, and with
  ``compaction.auto`` on, the session is compacted (strategy ``summary``) or
  its older tool output is hidden on the wire (strategy ``tail``); the
  compaction's :class:`~parley.core.compaction.compact.CompactEvent` values reach listeners
  like the run's own events. A failed auto-compaction is logged and the
  request is sent as it is;
* a request still over the window after auto-compaction is stubbed, compacted
  keeping fewer turns, or refused before it is sent: ``HistoryTooLong``
  (``parley.core.compaction.run``);
* a context overflow before any output: older tool output and files are
  stubbed and the request sent once more; then the session is compacted and
  sent again; then the run fails with ``CompactPromptTooLongError`` (or, with
  nothing compacted, ``SentMessageTooLong`` / ``HistoryTooLong`` with the numbers).

Tools (``parley.core.tools``; only for a runner given a ``ToolExecutor``):

* the request carries the tools (memory, skills, session search) when they are
  on for the session's space and model, and the session's frozen system prompt
  with its memory and skills blocks (``parley.core.tools.system_prompt``); the output
  of unloaded skills is stubbed on the wire (the rounds between replies:
  ``parley.core.chat.steps``);
* a server that rejects tools gets the request again without them, and the
  user a ``ToolsUnavailable`` notice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from parley.core.attachments.limits import check_turns, limits_for
from parley.core.chat.events import (
    Listener,
    OlderTurnsUnseen,
    ProviderProcessSilent,
    ReplyUpdated,
    RetryWaiting,
)
from parley.core.chat.journal import Journal
from parley.core.chat.reply import ReplyBuilder
from parley.core.compaction.compact import CompactPromptTooLongError, SentRequest
from parley.core.compaction.run import HistoryTooLong, RunCompaction, RunState
from parley.core.content import Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.context.too_long import SentMessageTooLong, WindowTooSmall, model_name
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest
from parley.core.providers.errors import ContextOverflow, ProviderError
from parley.core.providers.local_traffic import traffic_for
from parley.core.providers.process.silence import process_silences
from parley.core.providers.retry import RetryWait, retry_waits
from parley.core.tools.loop import RunTools
from parley.core.wire import to_messages

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

log = logging.getLogger(__name__)

#: Sessions whose last request is kept for a cache-friendly summary.
MAX_REMEMBERED_REQUESTS = 16


class RequestStream:
    """Sends a run's requests and streams their replies (one per runner).

    Args:
        store: the ``AsyncStore`` (the journal writes through it).
        hub: the ``ProviderHub`` resolving ``provider:model`` references.
        tools: what the run asks of the tools (``RunTools``).
        compaction: the run's compaction policy (``RunCompaction``).
        sent: the runner's last accepted request per session, updated here (the
            compactor reads it for a cache-friendly summary).
        clock: monotonic clock in seconds.
        journal_interval_s: seconds between journal writes of a streaming reply.
        emit_interval_s: seconds between ``ReplyUpdated`` events.
    """

    def __init__(
        self,
        store: AsyncStore,
        hub: ProviderHub,
        *,
        tools: RunTools,
        compaction: RunCompaction,
        sent: dict[str, SentRequest],
        clock: Callable[[], float],
        journal_interval_s: float,
        emit_interval_s: float,
    ) -> None:
        self.store = store
        self.hub = hub
        self._tools = tools
        self._compaction = compaction
        self.sent = sent
        self.clock = clock
        self.journal_interval_s = journal_interval_s
        self.emit_interval_s = emit_interval_s

    async def stream(
        self,
        session: Session,
        model_ref: str,
        stored: list[Turn],
        builder: ReplyBuilder,
        emit: Listener,
        state: RunState,
        *,
        tools_on: bool = False,
        own: bool = False,
        mcp: bool = False,
    ) -> bool:
        """Send one request and stream its reply into ``builder``.

        ``session``: the session as the run read it; ``stored``: its turns; ``state``: the
        run's compaction state; ``tools_on``: tools go at all; ``own`` / ``mcp``: which
        (``RunTools.request``).

        Returns:
            Whether the request carried tools (False once a server rejected them).
        """
        provider, model_id = self.hub.resolve(model_ref)
        # Files over the provider's limits fail here, in words, before anything is sent.
        # (Only what is sent counts: aborted and compacted turns are left out.)
        messages = to_messages(stored, provider.caps)
        check_turns(messages, limits_for(provider.caps.kind))
        session_id = session.id
        window = self._window(model_ref)  # the space's documents: sent or searched
        request = await self._tools.request(session, model_id, stored, tools_on,
                                            own=own, mcp=mcp, window=window)
        request.keep_messages(stored, provider.caps, messages)  # converted once per request
        summaries = state.summaries
        stored, request = await self._compaction.prepare(
            state, session_id, model_ref, provider, request, emit,
            on_unseen=lambda unseen: emit(OlderTurnsUnseen(session_id, unseen)),
        )
        compacted = state.summaries != summaries  # the frozen prompt is rendered again
        request = await self._tools.finish(request, session, stored, tools_on,
                                           compacted=compacted, own=own, mcp=mcp,
                                           window=window)
        attempt = 0
        while True:
            try:
                await self._stream_once(
                    session_id, model_ref, provider, stored, request, builder, emit
                )
                return tools_on
            except ContextOverflow as exc:
                if builder.has_content:
                    raise
                attempt += 1
                retry = await self._compaction.recover(
                    state, attempt, session_id, model_ref, stored, request, emit, error=exc
                )
                if retry is None:
                    error = self._too_long(model_ref, stored, request, exc,
                                           compacted=state.summaries != summaries)
                    too_small = isinstance(state.too_long, WindowTooSmall)
                    if state.too_long is not None and (
                            too_small or not isinstance(error, SentMessageTooLong)):
                        error = state.too_long  # the newest message alone does not fit
                    raise error from exc
                stored, request = retry
                compacted = state.summaries != summaries
                request = await self._tools.finish(
                    request, session, stored, tools_on, compacted=compacted, own=own, mcp=mcp,
                    window=window,
                )
            except ProviderError as exc:
                if builder.has_content:
                    raise
                fewer = await self._tools.without_images(request, session, model_ref, exc)
                if fewer is not None:  # a model without vision: the space's images in words
                    request = fewer
                    continue
                if not self._tools.rejected(exc, request, provider):
                    raise
                tools_on = False
                request = await self._tools.without_tools(
                    request, session, stored, model_ref, exc, emit
                )

    def _window(self, model_ref: str) -> int | None:
        """The model's context window (tokens), or None when the hub's catalog lacks the
        model (``ParleyError``): its documents are then sent, as to an unknown window."""
        try:
            return int(self.hub.model_info(model_ref).context_window)
        except ParleyError:
            return None

    def _too_long(self, model_ref: str, stored: list[Turn], request: ChatRequest,
                  error: ContextOverflow, *, compacted: bool) -> ParleyError:
        """Why a refused request was given up, with the numbers: the new message alone
        too long for the window (nothing earlier to compact, or it fills the window by
        itself), the history too long with nothing compacted, or still too long after a
        compaction."""
        if compacted:
            return CompactPromptTooLongError(model_ref, during="run")
        info = self.hub.model_info(model_ref)
        window = error.maximum or info.context_window
        tokens = error.tokens or estimate_tokens(request.turns, system=request.system)
        name = model_name(info, model_ref)
        last = stored[-1] if stored and stored[-1].role == "user" else None
        alone = estimate_tokens([last]) if last is not None else 0
        if last is not None and (len(stored) == 1 or alone * 2 >= window):
            return SentMessageTooLong(tokens, window, model_ref, name=name)
        return HistoryTooLong(tokens, window, model_ref, name=name, compacted=False)

    async def _stream_once(
        self,
        session_id: str,
        model_ref: str,
        provider: Provider,
        stored: list[Turn],
        request: ChatRequest,
        builder: ReplyBuilder,
        emit: Listener,
    ) -> None:
        last_emit = self.clock()
        journal = Journal(self.store, session_id, builder, self.journal_interval_s, self.clock)
        accepted = False

        def waiting(wait: RetryWait) -> None:
            log.info("session %s: retry %d in %.1f s (%s)", session_id, wait.attempt,
                     wait.seconds, wait.error.message)
            emit(RetryWaiting(session_id, wait.seconds, wait.rate_limited,
                              wait.error.message, wait.attempt, dropped=wait.dropped))

        def silent(silent: bool) -> None:
            emit(ProviderProcessSilent(session_id, silent))

        try:
            with retry_waits(waiting), process_silences(silent):
                async with traffic_for(self.hub).foreground(provider):  # titles wait (local)
                    async for event in provider.stream(request):
                        if not accepted:  # the provider took the request: its prefix is cached
                            accepted = True
                            self._remember_request(session_id, SentRequest(
                                model_ref, tuple(stored), request, self.clock()))
                        builder.feed(event)
                        now = self.clock()
                        if builder.has_content and now - last_emit >= self.emit_interval_s:
                            last_emit = now
                            emit(ReplyUpdated(session_id, builder.turn(aborted=False)))
                        if builder.has_content:
                            journal.changed()
        finally:
            journal.stop()
        await journal.wait()
        if builder.has_content:
            emit(ReplyUpdated(session_id, builder.turn(aborted=False)))

    def _remember_request(self, session_id: str, sent: SentRequest) -> None:
        """Keep the session's last accepted request (for the cache-friendly summary)."""
        self.sent.pop(session_id, None)
        self.sent[session_id] = sent
        while len(self.sent) > MAX_REMEMBERED_REQUESTS:  # the least recently used go first
            del self.sent[next(iter(self.sent))]
