"""The transcript's item model: one row per shown node of a :class:`Transcript`.

The turns are read from the model's ``source`` (``parley.gui.transcript.source``),
never copied into a list of the model's own.

Rows change in the smallest steps Qt offers, so the view keeps its measured
heights: a streamed update is one ``dataChanged``; a new turn one
``rowsInserted``; opening a compaction card inserts its replaced turns under
it (and asks for those not read yet: ``rangeWanted``); the note "the model no longer
sees the earlier turns" comes and goes as one row (:meth:`TranscriptModel.set_unseen`).
Only a change of
structure (a new compaction summary, turns read further back) resets the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from parley.core.content import Turn
from parley.gui.transcript.rows import UNSEEN_KEY, Node, Transcript, card_count, summary_block
from parley.gui.transcript.source import TurnList, TurnSource
from parley.gui.transcript.specs import CARD_FOLD, unseen_text

NODE_ROLE = Qt.ItemDataRole.UserRole + 1
TURN_ID_ROLE = Qt.ItemDataRole.UserRole + 2
ACCESSIBLE_TEXT_LIMIT = 400  # characters of a message read by DisplayRole (screen readers)

Index = QModelIndex | QPersistentModelIndex


class TranscriptModel(QAbstractListModel):
    """Rows of the transcript; ``node(row)`` gives the :class:`Node` behind a row.

    Signals:
        rangeWanted(str): a card was opened whose replaced turns are not all
            read (its summary turn id): add them to the source, then :meth:`grow`.
    """

    rangeWanted = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: Where the turns shown are read (:meth:`reset`, :meth:`grow`, :meth:`upsert`).
        self.source: TurnSource = TurnList()
        self.transcript = Transcript([])
        self.rows: list[Node] = []
        self._row_of: dict[str, int] | None = {}
        self.busy = False  # a reply is being written: the last row offers no Regenerate

    # -- Qt model interface -------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        node = self.rows[index.row()]
        if role == NODE_ROLE:
            return node
        if role == TURN_ID_ROLE:
            return node.key
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            unseen = self.transcript.unseen
            if node.kind == "unseen" and unseen is not None:
                return unseen_text(unseen)
            return accessible_text(node)
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    # -- lookups ------------------------------------------------------------
    def node(self, row: int) -> Node:
        return self.rows[row]

    def row_of(self, key: str) -> int | None:
        """Return the row showing the node with that key (turn id), or None."""
        if self._row_of is None:
            self._row_of = {n.key: i for i, n in enumerate(self.rows)}
        return self._row_of.get(key)

    def is_last(self, row: int) -> bool:
        """True for the conversation's last row: the last row, unless it is a turn inside
        an open summary card (a chat forked at a card ends with the card: its replaced
        turns are history, not the last reply to regenerate or continue)."""
        return row == len(self.rows) - 1 and self.rows[row].depth == 0

    # -- changes ------------------------------------------------------------
    def reset(self, *, keep: bool = False) -> None:
        """Rebuild every row from the source: folds and cards start closed, or with
        ``keep`` (the same chat read again) those open stay open, and the cards that
        showed their items ask for them again (``rangeWanted``: a page each)."""
        src = self.source
        previous = self.transcript if keep else None
        self._reset(Transcript(src.shown_turns(), previous=previous, seqs=src.seqs,
                               spans=src.spans, unseen=src.unseen, levels=src.levels))
        if previous is None:
            return
        nodes = self.transcript.nodes
        for key, old in previous.nodes.items():
            new = nodes.get(key)
            if old.kind == "card" and old.expanded and (old.paged or not old.missing) \
                    and new is not None and new.missing:
                self.rangeWanted.emit(key)

    def grow(self) -> None:
        """Rebuild the rows from the source after turns were added or a change moved rows
        (older turns read, a card's range, a new compaction summary): open folds and
        cards stay open."""
        src = self.source
        self._reset(Transcript(src.shown_turns(), previous=self.transcript, seqs=src.seqs,
                               spans=src.spans, unseen=src.unseen, levels=src.levels))

    def set_unseen(self) -> None:
        """Show the source's record of turns the model no longer sees (``unseen``) as it
        is now: its row is taken out and put in again before the first turn the model
        sees (no other row moves)."""
        old, new = self.transcript.set_unseen(self.source.unseen)
        if old is not None:
            row = self.row_of(old.key)
            if row is not None and self.rows[row] is old:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.rows[row]
                self._row_of = None
                self.endRemoveRows()
        if new is not None:
            target = self.row_of(new.key.removeprefix(UNSEEN_KEY))
            if target is not None:
                self.beginInsertRows(QModelIndex(), target, target)
                self.rows.insert(target, new)
                self._row_of = None
                self.endInsertRows()

    def upsert(self, turn: Turn) -> None:
        """Show a turn the source holds now: new at the end, or new content of a turn
        already shown (a change of structure rebuilds: :meth:`grow`)."""
        tr = self.transcript
        if tr.needs_rebuild(turn):
            self.grow()
            return
        changed: list[Node]
        if turn.id in tr.nodes:
            node, owners = tr.update(turn)
            changed = [node, *owners]
        else:
            previous_last = self.rows[-1] if self.rows else None
            node, owners = tr.append(turn)
            if not node.hidden:
                n = len(self.rows)
                self.beginInsertRows(QModelIndex(), n, n)
                self.rows.append(node)
                if self._row_of is not None:
                    self._row_of[node.key] = n
                self.endInsertRows()
            changed = [*owners, *([previous_last] if previous_last is not None else [])]
        for node in changed:
            self.refresh(node)

    def refresh(self, node: Node) -> None:
        """Tell the view that a node's row must be rendered again (if it is a row)."""
        row = self.row_of(node.key)
        if row is not None and self.rows[row] is node:
            index = self.index(row)
            self.dataChanged.emit(index, index)

    def refresh_many(self, nodes: Iterable[Node]) -> None:
        """:meth:`refresh` several nodes at once: one ``dataChanged`` from the first of
        their rows to the last (one a node took a 96-reply chat's GUI thread 4-8 ms, and
        up to 60 ms while the SDK's import in a worker thread held the GIL: issue 33).
        Nodes that are not rows are left out."""
        rows = [row for node in nodes
                if (row := self.row_of(node.key)) is not None and self.rows[row] is node]
        if rows:
            self.dataChanged.emit(self.index(min(rows)), self.index(max(rows)))

    def set_busy(self, busy: bool) -> None:
        """Say whether a reply is being written in this chat (the last row changes)."""
        if busy != self.busy:
            self.busy = busy
            if self.rows:
                self.refresh(self.rows[-1])

    def toggle_fold(self, row: int, key: str) -> None:
        """Open or close a fold of a row (a tool call, thinking, or the card itself)."""
        node = self.rows[row]
        if key == CARD_FOLD:
            self.set_expanded(row, not node.expanded)
            return
        node.open_folds = node.open_folds ^ {key}
        node.touch()
        self.refresh(node)

    def set_folds(self, row: int, keys: set[str]) -> None:
        """Make exactly ``keys`` the open folds of a row."""
        node = self.rows[row]
        if node.open_folds != keys:
            node.open_folds = frozenset(keys)
            node.touch()
            self.refresh(node)

    def show_part(self, row: int, block: int, start: int) -> None:
        """Show the part of a huge text block starting at character ``start`` (0: its
        first part) in place of the part shown (``long_text.shown_part``)."""
        parts = dict(self.rows[row].parts or {})
        if start:
            parts[block] = start
        else:
            parts.pop(block, None)
        self.set_parts(row, parts or None)

    def set_parts(self, row: int, parts: dict[int, int] | None) -> None:
        """Make ``parts`` the parts of huge text blocks a row shows (``Node.parts``)."""
        node = self.rows[row]
        if node.parts != parts:
            node.parts = parts
            node.touch()
            self.refresh(node)

    def set_expanded(self, row: int, expanded: bool, *, fetch: bool = True) -> None:
        """Open (show the replaced turns under it) or close a compaction card; ``fetch``:
        ask for its items not read yet (``rangeWanted``)."""
        node = self.rows[row]
        if node.kind != "card" or node.expanded == expanded:
            return
        if expanded:
            node.expanded = True
            if node.missing and fetch:
                self.rangeWanted.emit(node.key)
            kids = self.transcript.rows_under(node)
            if kids:
                self.beginInsertRows(QModelIndex(), row + 1, row + len(kids))
                self.rows[row + 1 : row + 1] = kids
                self._row_of = None
                self.endInsertRows()
        else:
            count = len(self.transcript.rows_under(node))
            if count:
                self.beginRemoveRows(QModelIndex(), row + 1, row + count)
                del self.rows[row + 1 : row + 1 + count]
                self._row_of = None
                node.expanded = False
                self.endRemoveRows()
            node.expanded = False
        node.touch()
        self.refresh(node)

    def reveal(self, node: Node) -> int | None:
        """Open the cards around a node so it is a row (their items not read stay so:
        "Show more"); return its row. Several cards closed (a hit hundreds of cards
        down): the rows are made again once, not inserted card by card."""
        cards = self.transcript.ancestors(node)
        closed = [card for card in cards if not card.expanded]
        if len(closed) > 1:
            for card in closed:
                card.expanded = True
                card.touch()
            self._reset(self.transcript)
            return self.row_of(node.key)
        for card in cards:
            row = self.row_of(card.key)
            if row is not None:
                self.set_expanded(row, True, fetch=False)
        return self.row_of(node.key)

    def _reset(self, transcript: Transcript) -> None:
        self.beginResetModel()
        self.transcript = transcript
        self.rows = transcript.visible_rows()
        self._row_of = None
        self.endResetModel()


def accessible_text(node: Node) -> str:
    """What a screen reader says for a row: who wrote it and the start of its text."""
    turn = node.turn
    if node.kind == "card":
        count = card_count(node)
        block = summary_block(turn)
        kept = "not kept" if block is not None and block.legacy else "originals kept"
        return f"Summary of {count:,} earlier message{'s' if count != 1 else ''} ({kept})"
    who = "You" if turn.role == "user" else "Assistant"
    text = " ".join(turn.text()[: ACCESSIBLE_TEXT_LIMIT * 4].split())  # not all of a huge one
    if len(text) > ACCESSIBLE_TEXT_LIMIT:
        text = text[:ACCESSIBLE_TEXT_LIMIT] + "…"
    if turn.writing_elsewhere:
        text += " (still being written on another computer)"
    elif turn.aborted:
        text += " (stopped, incomplete)"
    return f"{who}: {text}" if text else who
