"""How many turns "Compact now" keeps word for word when the chat is over, or near, its window.

The setting ``compaction.keep_turns`` says how many recent turns a compaction keeps
verbatim. A chat of a few long messages can be over the model's window with no more
turns than that: the plan with the setting then replaces nothing, and a person
asking to compact a chat that does not fit would be told there is nothing to
compact. The automatic compaction keeps fewer turns then
(:func:`parley.core.compaction.plan.fit_keep_turns`, down to one); "Compact now"
does the same once the chat has reached the automatic compaction's threshold
(``compaction.threshold`` of the window, "near"), by the provider's count where a
reply gave one (:func:`parley.core.context.size.measure`), else the local estimate.
What it keeps then starts with one's own message where a count that fits allows it: a
long answer is summarized with its question rather than kept below a summary that holds
the question (the automatic compaction, answering a message, keeps as many as fit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.compaction.plan import fit_keep_turns, plan_compaction, summary_block
from parley.core.compaction.summary import SUMMARY_MAX_TOKENS
from parley.core.compaction.wire import estimate_request, stub_for_overflow
from parley.core.content import ToolResultBlock, Turn
from parley.core.context.size import measure
from parley.core.providers.base import ChatRequest

if TYPE_CHECKING:
    from parley.core.providers.base import Provider

#: Room left for the summary when choosing how many turns to keep verbatim so a
#: request fits: the separate summary request's output limit, at most this share
#: of the window.
SUMMARY_ROOM_SHARE = 0.05


@dataclass(frozen=True)
class ManualKeep:
    """What "Compact now" keeps.

    Attributes:
        keep_turns: recent turns to keep verbatim (the setting, or fewer).
        tokens: the chat's context now, in the provider's tokens where known.
        over: ``tokens`` is over the window.
    """

    keep_turns: int
    tokens: int
    over: bool


def manual_keep(
    provider: Provider, stored: Sequence[Turn], keep_turns: int, *, model_ref: str,
    window: int, threshold: float, sent: Any = None,
) -> ManualKeep:
    """The turns "Compact now" keeps verbatim.

    Args:
        provider: the conversation's provider.
        stored: the session's context turns (``AsyncStore.context_turns``).
        keep_turns: the setting (>= 0).
        model_ref: the conversation's model (``provider:model``).
        window: its context window, tokens (> 0).
        threshold: ``compaction.threshold``, a fraction of ``window``.
        sent: the session's last accepted request (``SentRequest``) or None: its
            system prompt and tools are counted, its reply's usage measures.

    Returns:
        ``keep_turns`` while the chat is under ``threshold`` of the window or the
        setting's plan leaves kept turns that fit; else the largest number from
        ``keep_turns`` down to 1 whose kept turns, after a summary, fit the window
        and start with one's own message (not an answer or a tool's result), or,
        when none does, the largest that fits; else 1 (all but the newest turn
        summarized, the most a summary can do).
    """
    system = sent.request.system if sent is not None else None
    tools = list(sent.request.tools) if sent is not None else []
    request = ChatRequest(model_ref, list(stored), system, tools=tools)
    measured = measure(provider.caps, request, model_ref, sent)
    estimate = estimate_request(provider, request)
    tokens, scale = (measured.tokens, measured.scale) if measured else (estimate, 1.0)
    over = tokens > window
    if keep_turns == 0 or tokens < threshold * window:
        return ManualKeep(keep_turns, tokens, over)
    room = min(SUMMARY_MAX_TOKENS, int(window * SUMMARY_ROOM_SHARE))

    def fits(kept: list[Turn]) -> bool:
        wire = replace(request, turns=stub_for_overflow(kept))
        return estimate_request(provider, wire) * scale + room <= window

    keep = fit_keep_turns(stored, keep_turns, fits)
    if keep is None:
        return ManualKeep(1, tokens, over)
    return ManualKeep(_from_a_message(stored, keep, fits), tokens, over)


def _from_a_message(stored: Sequence[Turn], keep: int,
                    fits: Callable[[list[Turn]], bool]) -> int:
    """The largest count up to ``keep`` (which fits) whose kept turns fit and start with a
    message one wrote; ``keep`` when none does."""
    for k in range(keep, 0, -1):
        plan = plan_compaction(stored, k)
        if plan is not None and plan.kept and _written(plan.kept[0]) and fits(plan.kept):
            return k
    return keep


def _written(turn: Turn) -> bool:
    """True for a message one wrote: a user turn that is neither a summary nor a tool's
    results."""
    return turn.role == "user" and summary_block(turn) is None \
        and not any(isinstance(b, ToolResultBlock) for b in turn.blocks)
