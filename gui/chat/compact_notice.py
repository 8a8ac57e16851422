"""A compaction that failed, in one line with Details; "Compact now" that did nothing.

A failed compaction (automatic or "Compact now") is told in one line of the status
bar (``parley.gui.notices.status_line``): "Couldn't summarize this chat — the model
now sees the newest 6 turns" when the chat goes on without its oldest turns
(``parley.core.compaction.unseen``), else the cause in a few words. Its "Details"
open a dialog (``parley.gui.dialogs.details``) with the rest: why, each way the
summary was asked for, what was kept and what to do — every model by the display
name the window gives it (the model picker's), never a ``provider:model`` id.
The words are made here; the window passes a function naming models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from parley.gui.chat.models import name_models
from parley.gui.dialogs.details import Details

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.core.content import Turn

#: ``provider:model`` -> the name the window shows for it.
Namer = Callable[[str], str]

FAILED = "Couldn't summarize this chat"
#: After :data:`FAILED`, when the chat goes on with its newest turns (the card shows where).
NOW_SEES = "the model now sees the newest {n} turns"
#: The same for one turn.
NOW_SEES_ONE = "the model now sees only the newest turn"
#: The same, when the turns it sees are not all read (a very long chat): counted the other way.
NO_LONGER_SEES = "the model no longer sees the {n} earliest turns"
#: The same for one turn.
NO_LONGER_SEES_ONE = "the model no longer sees the earliest turn"
#: "Compact now" when compacting would not make the context smaller (``CompactResult.reason``).
WOULD_NOT_REDUCE = "Compacting would not make this chat smaller — nothing changed."
#: Why no summary was kept (``CompactNoSummaryError.reason``), after the model's name.
WHY = {
    "no-summary": "did not answer with a summary",
    "too-short": "answered with a summary far too short for what it would replace",
    "cut-off": "was cut off at its output limit while writing the summary",
}
KEPT = "Nothing was lost: every turn of the chat is still saved and shown."
#: When the chat goes on without its oldest turns.
KEPT_UNSEEN = ("The chat goes on: the model now sees the newest turns that fit its window. "
               "{earlier} in the chat; a note above the newest ones says "
               "where the model's view begins.")
TO_DO = ("What you can do: Try compacting again (the link in the chat, or Compact now in the "
         "Chat menu), or pick another summary model in Settings → Compaction.")
#: After a refused automatic compaction (``parley.core.compaction.backoff``).
WAITS = ("Parley will not try again on its own in this chat until it has grown (two more "
         "messages) or you choose Compact now.")


def seen_turns(turns: Sequence[Turn], unseen: Unseen) -> int | None:
    """How many turns the model sees from the record's first one on (aborted replies
    aside), counted in ``turns`` (the open chat's turns read); None when that turn is
    not among them."""
    for i, turn in enumerate(turns):
        if turn.id == unseen.first_seen_turn_id:
            return sum(1 for t in turns[i:] if not t.aborted)
    return None


def one_line(error: Any, unseen: Unseen | None, seen: int | None, name: Namer,
             provider_ids: Iterable[str] = ()) -> str:
    """The failure in one line.

    Args:
        error: the compaction's error (a ``ParleyError``), or None when only the
            record is known.
        unseen: the chat's record when it goes on without its oldest turns.
        seen: turns the model sees (:func:`seen_turns`), when known.
        name: names a ``provider:model``; ``provider_ids``: the set-up providers.
    """
    if unseen is not None:
        if seen:
            return f"{FAILED} — " + (NOW_SEES_ONE if seen == 1
                                     else NOW_SEES.format(n=f"{seen:,}"))
        n = unseen.hidden_turns
        return f"{FAILED} — " + (NO_LONGER_SEES_ONE if n == 1
                                 else NO_LONGER_SEES.format(n=f"{n:,}"))
    model = getattr(error, "model", None)
    reason = getattr(error, "reason", None)
    if isinstance(model, str) and reason in WHY:
        return f"{FAILED} — {name(model)} {WHY[reason]}"
    message = getattr(error, "message", "") or str(error or "")
    return f"{FAILED} — {_first_sentence(name_models(message, provider_ids, name))}"


def details(error: Any, unseen: Unseen | None, name: Namer, provider_ids: Iterable[str] = (),
            *, auto: bool = False) -> Details:
    """What "Details" shows: the cause, each attempt, what was kept, what to do.

    Args:
        error: the compaction's error, or None when only the record is known.
        unseen: the chat's record, if any (its ``detail`` and ``attempts`` are shown
            when the error says less).
        name: names a ``provider:model``; ``provider_ids``: the set-up providers.
        auto: an automatic compaction (it waits before trying again).
    """
    ids = list(provider_ids)

    def named(text: str) -> str:
        return name_models(text, ids, name)

    lines: list[str] = []
    model = getattr(error, "model", None)
    reason = getattr(error, "reason", None)
    if isinstance(model, str) and reason in WHY:
        lines.append(f"Summary model: {name(model)}. It {WHY[reason]}.")
    elif error is not None:
        lines.append(named(getattr(error, "message", "") or str(error)))
    if unseen is not None and unseen.detail and not lines:
        lines.append(named(unseen.detail))
    attempts = tuple(getattr(error, "attempts", ()) or ()) or (
        unseen.attempts if unseen is not None else ())
    for i, attempt in enumerate(attempts, 1):
        lines.append(f"Attempt {i}: {named(str(attempt))}")
    if unseen is not None:
        n = unseen.hidden_turns
        earlier = "The earlier turn stays" if n == 1 else f"The {n:,} earlier turns stay"
        lines.append(KEPT_UNSEEN.format(earlier=earlier))
    else:
        lines.append(KEPT)
    if auto:
        lines.append(WAITS)
    lines.append(TO_DO)
    return Details(FAILED, tuple(lines))


def _first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to its first ". "), without its full stop."""
    text = " ".join(text.split())
    cut = text.find(". ")
    first = text[:cut] if cut > 0 else text
    return first.rstrip(".")
