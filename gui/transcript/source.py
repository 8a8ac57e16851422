"""Where the transcript reads the turns it shows: one owner, read through :class:`TurnSource`.

The transcript keeps no list of turns of its own. Its item model rebuilds its rows
from a source when told to (a new chat shown, turns read further back) and shows
single changes (a streamed reply, a saved message) row by row. In the window the
source is the open chat's state (``parley.gui.chat.state.OpenChatState``), which
tells the view what changed through its signals; a transcript view used on its own
(tests, previews) holds its turns in a :class:`TurnList`.

Qt-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from parley.core.content import Turn
from parley.gui.transcript.rows import merge_turns

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.core.store.outline import Span


class TurnSource(Protocol):
    """What the transcript reads: the turns to show and where they are stored."""

    def shown_turns(self) -> Sequence[Turn]:
        """The turns to show, in stored order (turns not stored yet last)."""
        ...

    @property
    def seqs(self) -> Mapping[str, int]:
        """Stored positions of the turns by id (those not stored yet have none)."""
        ...

    @property
    def spans(self) -> Mapping[str, Span]:
        """The session's compaction spans by summary turn id."""
        ...

    @property
    def older(self) -> int:
        """Top-level items of the session before the first turn given (not read yet)."""
        ...

    @property
    def levels(self) -> Mapping[str, int]:
        """How many items the cards read in part hold themselves, by summary turn id
        (``parley.core.store.outline.Window.levels``)."""
        ...

    @property
    def unseen(self) -> Unseen | None:
        """The session's record of older turns the model no longer sees, if any."""
        ...


class TurnList:
    """The turns of a transcript view that shows turns given to it (no chat behind it).

    Args:
        turns: the turns, in stored order.
        seqs: their stored positions by id (default: none known).
        spans: compaction spans by summary turn id (default: none).
    """

    def __init__(self, turns: Sequence[Turn] = (), seqs: Mapping[str, int] | None = None,
                 spans: Mapping[str, Span] | None = None) -> None:
        self.turns: list[Turn] = list(turns)
        self.seqs: dict[str, int] = dict(seqs or {})
        self.spans: dict[str, Span] = dict(spans or {})
        self.older = 0
        self.unseen: Unseen | None = None
        self.levels: dict[str, int] = {}

    def shown_turns(self) -> Sequence[Turn]:
        """:meth:`TurnSource.shown_turns`: the list itself."""
        return self.turns

    def replace(self, turns: Sequence[Turn], seqs: Mapping[str, int] | None,
                spans: Mapping[str, Span] | None, older: int) -> None:
        """Hold these turns instead of the current ones."""
        self.turns = list(turns)
        self.seqs = dict(seqs or {})
        self.spans = dict(spans or {})
        self.older = older

    def merge(self, turns: Sequence[Turn], seqs: Mapping[str, int],
              spans: Mapping[str, Span] | None) -> None:
        """Add turns read later (placed by ``seqs``; held ones with their ids replaced);
        ``spans`` None keeps the spans known."""
        self.seqs.update(seqs)
        if spans is not None:
            self.spans = dict(spans)
        self.turns = merge_turns(self.turns, turns, self.seqs)

    def upsert(self, turn: Turn) -> None:
        """Replace the turn with the same id, or add it at the end."""
        for i in range(len(self.turns) - 1, -1, -1):
            if self.turns[i].id == turn.id:
                self.turns[i] = turn
                return
        self.turns.append(turn)
