"""What one run's compaction steps share: the run's state and the model a request goes to.

:class:`RunState` is what compaction did during one run (``parley.core.compaction.run``);
:class:`Target` measures a request in the provider's tokens — the last reply's reported
input plus what was added since, scaled by the ratio that reply showed
(``parley.core.context.size.measure``), else the provider's count, else the local
estimate — and scales local estimates the same way (:func:`token_scale`), so every
comparison of the run's steps is in one unit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.compaction.settings import CompactionSettings, load_settings
from parley.core.compaction.unseen import Unseen
from parley.core.compaction.window import newest_turns
from parley.core.compaction.wire import context_tokens, estimate_request, stub_for_overflow
from parley.core.context.size import measure
from parley.core.context.too_long import HistoryTooLong, WindowTooSmall, model_name
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest, ModelInfo

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.store.async_store import AsyncStore

#: Told the session's record of turns left off the wire when a run writes, moves or
#: removes it (``parley.core.compaction.unseen``; None: removed).
UnseenListener = Callable[[Unseen | None], None]


@dataclass
class RunState:
    """What compaction did during one run.

    Attributes:
        summaries: summary turns saved during the run.
        compaction_failed: an auto-compaction failed (not tried again in this run).
        overflow_compacted: the run compacted after a context overflow (once per run).
        backed_off: automatic compaction waits after a refused summary
            (``parley.core.compaction.backoff``): none is tried in this run.
        tokens: the request's context tokens counted before it was sent (0: not counted).
        window: the model's context window (0: not known yet).
        summary_model: the ``compaction.model`` setting (None: the default).
        settings: the compaction settings of the run's settings snapshot (None: read
            them when needed).
        failure: the error of the run's failed auto-compaction (None: none failed).
        unseen: the session's record of turns left off the wire
            (``parley.core.compaction.unseen``) as the run last knew it.
        narrowed: a request of this run went out with its oldest turns left off.
        too_long: why a refused request was given up when the reason is known (the
            newest message alone does not fit the window the refusal named).
        on_unseen: told when the run writes, moves or removes that record.
    """

    summaries: int = 0
    compaction_failed: bool = False
    overflow_compacted: bool = False
    backed_off: bool = False
    tokens: int = 0
    window: int = 0
    summary_model: str | None = None
    settings: CompactionSettings | None = None
    failure: ParleyError | None = None
    unseen: Unseen | None = None
    narrowed: bool = False
    too_long: HistoryTooLong | None = None
    on_unseen: UnseenListener | None = None

    def unseen_removed(self) -> None:
        """A saved summary removed the session's record: say so once."""
        if self.unseen is not None:
            self.unseen = None
            if self.on_unseen is not None:
                self.on_unseen(None)

    async def compaction_settings(self, store: AsyncStore) -> CompactionSettings:
        """The run's compaction settings: :attr:`settings` when the run read them with
        its other settings, else read now (``load_settings``)."""
        return self.settings if self.settings is not None else await load_settings(store)


@dataclass(frozen=True)
class Target:
    """The model a request goes to, for the context-window steps: its window, the
    compaction trigger, and the provider's tokens per estimated token (``scale``)."""

    provider: Provider
    model_ref: str
    info: ModelInfo
    trigger: int
    # the session's last accepted request (parley.core.compaction.compact.SentRequest)
    sent: Any = None
    scale: float = 1.0  # provider tokens per estimated token, when a reply said (>= 1)

    @property
    def window(self) -> int:
        return int(self.info.context_window)

    async def tokens(self, request: ChatRequest) -> int:
        """The request's input tokens (:meth:`measure`)."""
        return (await self.measure(request))[0]

    async def measure(self, request: ChatRequest) -> tuple[int, float]:
        """(the request's input tokens, provider tokens per estimated token): the last
        reply's reported input plus what was added since, scaled by the ratio that reply
        showed (``parley.core.context.size.measure``); without such a reply, the
        provider's count near the trigger against the estimate, else the estimate
        (system prompt and tools included everywhere)."""
        measured = measure(self.provider.caps, request, self.model_ref, self.sent)
        if measured is not None:
            return measured.tokens, measured.scale
        tokens = await context_tokens(self.provider, request, self.trigger)
        return tokens, token_scale(tokens, estimate_request(self.provider, request))

    def estimate(self, request: ChatRequest) -> int:
        """The local estimate, scaled by what the provider's counts showed of it."""
        return int(estimate_request(self.provider, request) * self.scale)

    def too_long(self, tokens: int, compacted: bool, newest: bool = False) -> HistoryTooLong:
        name = model_name(self.info, self.model_ref)
        return HistoryTooLong(tokens, self.window, self.model_ref, name=name,
                              compacted=compacted, newest=newest)

    def newest_too_small(self, request: ChatRequest, sent: bool = False) -> WindowTooSmall | None:
        """:class:`WindowTooSmall` when even the newest message, with what it answers, the
        system prompt and the tools (older tool output stubbed), is over the window by
        the scaled estimate (:meth:`estimate`); else None. The error names the share of
        the system prompt, the tools and the message, in the provider's tokens; ``sent``:
        the provider refused the request."""
        newest = replace(request, turns=stub_for_overflow(newest_turns(request.turns)))
        total = self.estimate(newest)
        if total <= self.window:
            return None
        system = self.estimate(replace(newest, turns=[], tools=[])) if newest.system else 0
        tools = self.estimate(replace(newest, turns=[], system=None)) if newest.tools else 0
        return WindowTooSmall(
            total, self.window, self.model_ref, name=model_name(self.info, self.model_ref),
            system_tokens=system, tool_tokens=tools,
            message_tokens=max(0, total - system - tools), sent=sent,
        )

    def fits(self, request: ChatRequest, share: float = 1.0) -> bool:
        """The request takes at most ``share`` of the window (scaled estimate)."""
        return self.estimate(request) <= self.window * share




def token_scale(counted: int, estimated: int) -> float:
    """Provider tokens per estimated token (at least 1: the estimate is never scaled down)."""
    if counted <= 0 or estimated <= 0:
        return 1.0
    return max(1.0, counted / estimated)
