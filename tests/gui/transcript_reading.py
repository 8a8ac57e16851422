"""What a transcript view shows, read from its widgets and model (for tests and benchmarks).

The view itself keeps none of these readers: each reads state the view already exposes
(its footer bar, its list's layouts and row specs, its model's rows), so a test asserts
what is on the screen rather than a copy kept for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.content import Turn
from parley.gui.transcript.source import TurnList


def _bar_text(view: Any, name: str) -> str | None:
    """The whole message of the bar under the last message when it shows as ``name``
    ("Error" or "Note"); None when no such bar is shown."""
    bar = view.error_bar
    if view.list_view.footer() is not bar or bar.accessibleName() != name:
        return None
    return str(bar.message)


def error_text(view: Any) -> str | None:
    """The inline error's whole message, or None when none is shown (a note is no error)."""
    return _bar_text(view, "Error")


def notice_text(view: Any) -> str | None:
    """The neutral note's message (``show_notice``), or None when none is shown."""
    return _bar_text(view, "Note")


def text_of_last(view: Any) -> str:
    """Plain text of the last row as shown (fold lines and marks included)."""
    n = view.model.rowCount()
    if n == 0:
        return ""
    return str(view.list_view.layout_of(n - 1, fresh=True).plain_text())


def save_mark(view: Any, turn_id: str) -> str | None:
    """The mark shown on a message not saved yet (``set_save_mark``); None when saved."""
    marks: Mapping[str, str] = view.list_view.delegate.builder.specs.save_marks
    return marks.get(turn_id)


def unseen_row(view: Any) -> int | None:
    """The row of the note of turns the model no longer sees (None: not shown)."""
    node = view.model.transcript.unseen_node
    return view.model.row_of(node.key) if node is not None else None


def show_turns(view: Any, turns: Sequence[Turn], *, seqs: Mapping[str, int] | None = None,
               spans: Mapping[str, Any] | None = None, more_above: int = 0) -> None:
    """Show these turns in a view that follows no chat (its own :class:`TurnList`) and
    scroll to the end, as the view does for a chat's turns.

    Args:
        view: a ``TranscriptView`` that follows no chat.
        turns: the turns, in stored order.
        seqs: their stored positions; ``spans`` the compaction spans by summary id.
        more_above: top-level rows of the session before the first one given.

    Raises:
        AssertionError: the view follows a chat (change its turns there).
    """
    own = view.model.source
    assert isinstance(own, TurnList), "this view follows a chat: change its turns there"
    own.replace(turns, seqs, spans, more_above)
    view.show_reset()
