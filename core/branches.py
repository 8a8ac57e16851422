"""Branch points of a conversation: ‹ n/m › on a message, read from the session's tree.

A session's turns form a tree (``parley.core.store.tree``): each turn has a parent
(None for a first message), Edit and Regenerate add a sibling of the turn they
replace, and the chat shows one *path* from a first message to a *leaf*. A turn
of the path whose parent has other children (or, for a first message, a
session with other first messages) is a *branch point*: the chat shows ‹ n/m ›
under it, and choosing another sibling shows the path through that sibling,
continuing below it with the choices made there last time.

A path may also end at a turn that has children (a regeneration whose new
answer failed before anything was saved: the path ends at the prompt, the
earlier answers are its children). That leaf is a branch point of its own: its
children, then the path ending there (the newest, listed last).

This module holds the records only; the store computes them
(``Store.branches``) and switches the path (``Store.show_branch``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """A turn of the path shown that has alternatives.

    Attributes:
        turn_id: the turn of the path shown the ‹ n/m › is drawn under.
        index: which alternative the path shows, 1-based.
        total: how many alternatives there are (2 or more).
        turn_ids: each alternative's turn, oldest first (siblings in the order they
            were saved); for the path that ends at ``turn_id`` (see the module
            doc), ``turn_id`` itself.
        exact: for each alternative, True when the path must end at that turn
            (the path that ended there) rather than continue below it.
    """

    turn_id: str
    index: int
    total: int
    turn_ids: tuple[str, ...]
    exact: tuple[bool, ...]

    def target(self, step: int) -> tuple[str, bool] | None:
        """``(turn id, exact)`` of the alternative ``step`` away (-1: previous,
        +1: next), for ``Store.show_branch``; None past the first or the last."""
        i = self.index - 1 + step
        if not 0 <= i < self.total:
            return None
        return self.turn_ids[i], self.exact[i]


@dataclass(frozen=True, slots=True)
class Branches:
    """The branch points of a session's path shown.

    Attributes:
        session_id: the session.
        points: the path's turns that have alternatives, by turn id.
    """

    session_id: str
    points: dict[str, BranchPoint] = field(default_factory=dict)
