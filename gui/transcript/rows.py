"""What the transcript shows for a list of turns: rows, tool results, compaction cards.

Qt-free. A :class:`Transcript` arranges the turns of one session as :class:`Node`
objects (each node holds its turn: no list of turns is kept beside them) and
answers three questions for the item model:

* which nodes are rows (``visible_rows``): a user turn holding only
  tool_result blocks is not a row of its own — each result is shown inside the
  fold of the tool_use it answers (``result_for``);
* where compaction summaries go: a turn holding a ``CompactSummaryBlock`` is
  shown as a *card* where its replaced range began (as ``parley.core.content.
  apply_compactions`` places it for the model); the replaced turns become the
  card's children, hidden until the card is expanded. A transcript of a long
  session holds only part of it: given the stored positions (``seqs``) of its
  turns and the session's compaction spans (``parley.core.store.outline``), a card is
  placed by its span whatever was read, and knows how many of its turns are
  not read yet (``Node.missing``: read when it is opened, its own items a page at a
  time: ``parley.core.store.card_pages``; ``levels`` gives a card's count of own
  items once a page of it was read). A legacy (v3)
  summary, or one whose range is neither read nor known, is a card with no
  children;
* where the note "the model no longer sees the earlier turns" goes: when no summary
  could be made and the model is sent only the newest turns
  (``parley.core.compaction.unseen``), one row of kind ``unseen`` stands just before the
  first turn it still sees, if that turn is read (it is a top-level row: no summary
  follows the turns left out);
* what changed when a turn is appended or updated while a reply streams.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.core.store.outline import Span

NodeKind = Literal["turn", "card", "unseen"]
#: Key prefix of the ``unseen`` row (its key is this and the first turn the model sees).
UNSEEN_KEY = "unseen-note:"

#: Revisions are unique across all nodes, so a cache entry made for one node
#: never matches another node that happens to have the same key.
_REVISIONS = itertools.count(1)


_NO_FOLDS: frozenset[str] = frozenset()
_next_rev = _REVISIONS.__next__


class Node:
    """One turn as the transcript shows it.

    Attributes:
        turn: the turn (replaced when it is updated).
        kind: ``turn`` (a message), ``card`` (a compaction summary) or ``unseen`` (the
            note before the first turn the model still sees; its turn is a stand-in
            with no blocks, never stored).
        depth: nesting level; 1 for turns inside an expanded card, and so on.
        parent: the card this node is inside, if any.
        children: a card's replaced turns (None for a card with none to show).
        expanded: a card shows its children.
        open_folds: keys of the folds (tool calls, thinking) the user opened.
        rev: a new unique number on every change of what the row shows (cache stamp).
        hidden: a user turn made only of tool results shown in their tool_use's fold.
        stats: (characters, lines, fold lines, images) for height estimates.
        missing: a card's stored turns not read yet (shown once read, on opening).
        paged: a card whose own items were read in part: ``missing`` counts those not
            read (else it is only known that some are missing).
        parts: block index -> the first character shown of a huge text block showing a
            later part ("Show more", a search hit in it: ``long_text.shown_part``);
            None while every such block shows its start.
    """

    __slots__ = ("turn", "kind", "depth", "parent", "children", "expanded", "open_folds", "rev",
                 "hidden", "stats", "missing", "paged", "parts")

    def __init__(self, turn: Turn, kind: NodeKind = "turn") -> None:
        self.turn = turn
        self.kind: NodeKind = kind
        self.depth = 0
        self.parent: Node | None = None
        self.children: list[Node] | None = None
        self.expanded = False
        self.open_folds: frozenset[str] = _NO_FOLDS
        self.rev: int = _next_rev()
        self.hidden = False
        self.stats: tuple[int, int, int, int] = (0, 0, 0, 0)
        self.missing = 0
        self.paged = False
        self.parts: dict[int, int] | None = None

    def __repr__(self) -> str:
        return f"Node({self.kind} {self.turn.role} {self.key!r}, depth={self.depth})"

    @property
    def key(self) -> str:
        """The row's identity: its turn id."""
        return self.turn.id

    def touch(self) -> None:
        """Mark the row as changed (its rendering must be redone)."""
        self.rev = _next_rev()


def summary_block(turn: Turn) -> CompactSummaryBlock | None:
    """Return the turn's compaction summary block, or None."""
    for block in turn.blocks:
        if isinstance(block, CompactSummaryBlock):
            return block
    return None


def merge_turns(old: Sequence[Turn], new: Sequence[Turn], seqs: Mapping[str, int]) -> list[Turn]:
    """Turns read before and turns read now, as one list in stored order.

    Args:
        old: turns already held, in order (the last may have no stored position yet:
            a message or reply being written).
        new: turns read from the store; they replace held turns with the same id.
        seqs: stored positions by id (of both); turns without one keep their order
            after every stored turn.

    Returns:
        A new list, each turn once.
    """
    fresh = {t.id: t for t in new}
    held = [fresh.pop(t.id, t) for t in old]
    base = max(seqs.values(), default=-1) + 1
    unplaced = {t.id: base + i for i, t in enumerate(held) if t.id not in seqs}
    return sorted([*held, *fresh.values()],
                  key=lambda t: seqs[t.id] if t.id in seqs else unplaced[t.id])


def card_count(node: Node) -> int:
    """How many turns a card's summary stands for (as recorded; else the turns under it)."""
    block = summary_block(node.turn)
    count = block.replaced_count if block is not None else 0
    if not count and node.children is not None:
        count = sum(1 for c in node.children if not c.hidden) + node.missing
    return count


class Transcript:
    """The turns of one session arranged as rows.

    Args:
        turns: the session's turns in order, summary turns and the turns they
            replaced included.
        previous: a transcript whose open folds and expanded cards are kept
            (matched by turn id), e.g. when rebuilding after a compaction.
        seqs: stored positions of the turns by id (``parley.core.store.outline.Window``);
            turns without one (appended since) come after every stored one.
            Without seqs the list positions are used.
        spans: the session's compaction spans by summary turn id: a summary with
            a span is placed by it; others by the ids in their block.
        unseen: the session's record of turns left off the wire, if any: its row
            stands before ``first_seen_turn_id`` (:meth:`set_unseen`).
        levels: how many items cards read in part hold themselves (their own turns and
            the cards nested one level in), by summary turn id.
    """

    def __init__(
        self,
        turns: Sequence[Turn],
        previous: Transcript | None = None,
        *,
        seqs: Mapping[str, int] | None = None,
        spans: Mapping[str, Span] | None = None,
        unseen: Unseen | None = None,
        levels: Mapping[str, int] | None = None,
    ) -> None:
        self.seqs: Mapping[str, int] = seqs if seqs is not None else {}
        self.levels: Mapping[str, int] = levels if levels is not None else {}
        self.spans: Mapping[str, Span] = spans if spans is not None else {}
        self.nodes: dict[str, Node] = {}
        #: Every node in the order of the turns given (appended ones last).
        self.order: list[Node] = []
        self._index_of: dict[str, int] | None = None  # turn id -> place in ``order``
        self._results: dict[str, ToolResultBlock] = {}
        self._owner: dict[str, Node] = {}
        self._place: list[int] = []  # conversation position of each turn (see _build)
        self.roots: list[Node] = self._build(turns, previous)
        self.unseen: Unseen | None = None
        #: The ``unseen`` row, when its turn is read (a root, never in :attr:`order`).
        self.unseen_node: Node | None = None
        if unseen is not None:
            self.set_unseen(unseen)

    @property
    def turns(self) -> list[Turn]:
        """The turns shown, in the order given (a new list, read from the nodes)."""
        return [n.turn for n in self.order]

    def after(self, turn_id: str) -> Turn | None:
        """The turn given after the one with that id (None: it is the last, or unknown)."""
        if self._index_of is None:
            self._index_of = {n.key: i for i, n in enumerate(self.order)}
        i = self._index_of.get(turn_id)
        return self.order[i + 1].turn if i is not None and i + 1 < len(self.order) else None

    # -- building ---------------------------------------------------------
    def _build(self, turns: Sequence[Turn], previous: Transcript | None) -> list[Node]:
        nodes = self.order
        summaries: list[int] = []
        old_nodes = previous.nodes if previous is not None else {}
        index, by_id = self._index, self.nodes
        for i, turn in enumerate(turns):
            node = Node(turn)
            if index(node):
                summaries.append(i)
            if old_nodes and (old := old_nodes.get(turn.id)) is not None:
                node.open_folds = old.open_folds
                node.expanded = old.expanded
                node.parts = old.parts
            by_id[turn.id] = node
            nodes.append(node)
        if not summaries:
            return list(nodes)
        seqs = self.seqs
        base = max(seqs.values(), default=-1) + 1
        keys = [seqs.get(t.id, base + i) for i, t in enumerate(turns)]
        # Where each item stands in the conversation: a summary where its range began
        # (it is stored later, possibly after turns a later compaction replaced too).
        self._place = list(keys)
        where = {t.id: i for i, t in enumerate(turns)}
        for k in summaries:
            found = self._range(k, keys, where)
            if found is not None:
                self._place[k] = found[0]
        roots = self._nest(list(nodes), list(range(len(nodes))), summaries, keys, -1, 1 << 62)
        self._set_depth(roots, 0, None)
        return roots

    def _index(self, node: Node) -> bool:
        """Read a node's blocks once: kind, tool_use owners, results, ``hidden``, ``stats``.

        Returns:
            True when the turn holds a compaction summary (the node is a card).
        """
        turn = node.turn
        owner, results = self._owner, self._results
        chars = lines = folds = media = owned = 0
        card = False
        for block in turn.blocks:
            kind = type(block)
            if kind is TextBlock:
                text = block.text  # type: ignore[union-attr]
                chars += len(text)
                lines += text.count("\n") + 1
            elif kind is ToolUseBlock:
                owner[block.id] = node  # type: ignore[union-attr]
                folds += 1
            elif kind is ToolResultBlock:
                results[block.tool_use_id] = block  # type: ignore[union-attr,assignment]
                if block.tool_use_id in owner:  # type: ignore[union-attr]
                    owned += 1
                else:
                    folds += 1
            elif kind is ImageBlock:
                media += 1
            elif kind is CompactSummaryBlock:
                card = True
            else:
                folds += 1
        if card:
            node.kind = "card"
            node.stats = (0, 0, 2, 0)
            return True
        node.kind = "turn"
        node.hidden = turn.role == "user" and owned > 0 and owned == len(turn.blocks)
        node.stats = (chars, lines, folds + (1 if turn.aborted else 0), media)
        return False

    def _range(self, k: int, keys: list[int], where: dict[str, int]) -> tuple[int, int] | None:
        """The replaced range of summary turn ``k`` as keys: by its span, else by the
        ids in its block when both turns are read; None for a legacy summary."""
        turn = self.order[k].turn
        span = self.spans.get(turn.id)
        if span is not None:
            return span.first_seq, span.last_seq
        block = summary_block(turn)
        if block is None or block.legacy:
            return None
        start, end = where.get(block.first_turn_id or ""), where.get(block.last_turn_id or "")
        if start is None or end is None or keys[end] < keys[start]:
            return None
        return keys[start], keys[end]

    def _nest(self, nodes: list[Node], idxs: list[int], summaries: list[int], keys: list[int],
              lo: int, hi: int) -> list[Node]:
        """Arrange nodes[idxs] (placed in [lo, hi]) with the latest summary whose range
        lies in [lo, hi] as a card."""
        pos = set(idxs)
        where = {self.order[i].key: i for i in idxs}
        for k in reversed(summaries):
            if k not in pos:
                continue
            found = self._range(k, keys, where)
            if found is None or not lo <= found[0] <= found[1] <= hi:
                continue
            a, b = found
            card = nodes[k]
            place = self._place
            inside = [i for i in idxs if a <= place[i] <= b and i != k]
            card.children = self._nest(nodes, inside, summaries, keys, a, b)
            span = self.spans.get(card.key)
            own = self.levels.get(card.key)
            card.paged = own is not None
            if own is not None:
                card.missing = max(0, own - len(card.children))
            else:
                card.missing = max(0, span.stored_count - len(inside)) if span is not None else 0
            before = [i for i in idxs if place[i] < a and i != k]
            after = [i for i in idxs if place[i] > b and i != k]
            return (
                self._nest(nodes, before, summaries, keys, lo, a - 1) + [card]
                + self._nest(nodes, after, summaries, keys, b + 1, hi)
            )
        return [nodes[i] for i in idxs]

    def _set_depth(self, nodes: list[Node], depth: int, parent: Node | None) -> None:
        for node in nodes:
            node.depth, node.parent = depth, parent
            if node.children:
                self._set_depth(node.children, depth + 1, node)

    def set_unseen(self, unseen: Unseen | None) -> tuple[Node | None, Node | None]:
        """Show the note before the first turn the model still sees (None: no note).

        Returns:
            The ``unseen`` row taken out (None: there was none) and the one put in
            (None: none, or its turn is not read or not a top-level row).
        """
        old = self.unseen_node
        if old is not None:
            self.roots.remove(old)
        self.unseen, self.unseen_node = unseen, None
        target = self.nodes.get(unseen.first_seen_turn_id) if unseen is not None else None
        if unseen is None or target is None or target.parent is not None \
                or target not in self.roots:
            return old, None
        node = Node(Turn("assistant", [], id=UNSEEN_KEY + unseen.first_seen_turn_id,
                         created_at=target.turn.created_at), "unseen")
        node.stats = (0, 0, 3, 0)  # about three lines
        self.roots.insert(self.roots.index(target), node)
        self.unseen_node = node
        return old, node

    # -- queries ----------------------------------------------------------
    def visible_rows(self) -> list[Node]:
        """Return the rows, in order: nodes not hidden, children of expanded cards included."""
        if all(n.kind == "turn" and not n.hidden for n in self.roots):
            return list(self.roots)
        return list(self._walk(self.roots))

    def _walk(self, nodes: list[Node]) -> Iterator[Node]:
        for node in nodes:
            if node.hidden:
                continue
            yield node
            if node.kind == "card" and node.expanded and node.children:
                yield from self._walk(node.children)

    def rows_under(self, card: Node) -> list[Node]:
        """Return the rows an expanded card shows below itself (its visible descendants)."""
        return list(self._walk(card.children or [])) if card.expanded else []

    def result_for(self, tool_use_id: str) -> ToolResultBlock | None:
        """Return the tool_result answering a tool_use, if one is in the transcript."""
        return self._results.get(tool_use_id)

    def owns(self, tool_use_id: str) -> bool:
        """True when the tool_use with that id is in an assistant turn of the transcript."""
        return tool_use_id in self._owner

    def row_node(self, turn_id: str) -> Node | None:
        """Return the node that shows a turn: itself, or the owner of a hidden result turn."""
        node = self.nodes.get(turn_id)
        if node is None or not node.hidden:
            return node
        for block in node.turn.blocks:
            if isinstance(block, ToolResultBlock) and block.tool_use_id in self._owner:
                return self._owner[block.tool_use_id]
        return node

    def ancestors(self, node: Node) -> list[Node]:
        """Return the cards containing a node, outermost first."""
        out: list[Node] = []
        parent = node.parent
        while parent is not None:
            out.append(parent)
            parent = parent.parent
        return out[::-1]

    # -- changes ----------------------------------------------------------
    def needs_rebuild(self, turn: Turn) -> bool:
        """True when showing ``turn`` (new or updated) changes more than its own row.

        That is the case for compaction summaries (rows move into a card) and
        for a changed kind or visibility of an existing row.
        """
        if summary_block(turn) is not None:
            return True
        old = self.nodes.get(turn.id)
        if old is None:
            return False
        if old.kind == "card" or old.turn.role != turn.role:
            return True
        return self._would_hide(turn) != old.hidden

    def _would_hide(self, turn: Turn) -> bool:
        if turn.role != "user" or not turn.blocks:
            return False
        return all(
            isinstance(b, ToolResultBlock) and b.tool_use_id in self._owner for b in turn.blocks
        )

    def append(self, turn: Turn) -> tuple[Node, list[Node]]:
        """Add a turn at the end (the caller checked :meth:`needs_rebuild`).

        Returns:
            The new node and the rows whose content changed because of it
            (tool_use owners of results it carries).
        """
        node = Node(turn)
        if self._index_of is not None:
            self._index_of[turn.id] = len(self.order)
        self.order.append(node)
        self.nodes[turn.id] = node
        self._index(node)
        self.roots.append(node)
        return node, self._owners_of(turn)

    def update(self, turn: Turn) -> tuple[Node, list[Node]]:
        """Replace a turn already present (same id; the caller checked :meth:`needs_rebuild`).

        Returns:
            Its node and the other rows whose content changed (tool_use owners).
        """
        node = self.nodes[turn.id]
        node.turn = turn
        node.touch()
        self._index(node)
        return node, self._owners_of(turn)

    def _owners_of(self, turn: Turn) -> list[Node]:
        out: list[Node] = []
        for block in turn.blocks:
            if isinstance(block, ToolResultBlock):
                owner = self._owner.get(block.tool_use_id)
                if owner is not None and owner not in out:
                    owner.touch()
                    out.append(owner)
        return out
