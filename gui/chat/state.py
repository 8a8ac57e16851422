"""The open chat's turns, held once: :class:`OpenChatState`.

Everything the window knows of the open chat's conversation lives here, and
only here: the turns read from the store (the last items of a long chat, more
as they are read), their stored positions and the chat's
compaction spans, how many items are still unread above, the replies kept in
memory because sessions.db did not take them yet, messages shown before they
are saved, the reply streaming in each chat, and the chat's record of older turns
the model no longer sees (``parley.core.compaction.unseen``). The controllers change it
through its methods; the transcript reads it (it is the transcript's
``parley.gui.transcript.source.TurnSource``) and is told what changed through the
signals.

Qt is used for the signals only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from parley.core.content import Turn
from parley.gui.transcript.rows import merge_turns, summary_block

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.core.store.outline import Span, Window


class OpenChatState(QObject):
    """The turns of the chat open in one window (see the module docstring).

    Signals:
        reset(bool): show every turn afresh (another chat opened, turns dropped, the
            chat read again); True when the chat shown is the one shown before (read
            again: its open cards and folds stay open).
        grown(object): turns read later were added (older ones, an opened card's);
            the argument is a turn id to keep in place on screen, or None.
        turn_changed(object): a turn (``Turn``) of the open chat is new or changed
            (a message shown, saved, a reply streaming or finished).
        unseen_changed(): the open chat's :attr:`unseen` record changed.

    Attributes:
        session_id: the open chat's session (None: a new chat, no row yet).
        first_key: display position of the first item read (for reading further
            back: ``Store.transcript_window(before=...)``); None when nothing is read.
        partial: the reply streaming in each chat, open or not, by session id.
    """

    reset = Signal(bool)
    grown = Signal(object)
    turn_changed = Signal(object)
    unseen_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session_id: str | None = None
        self.first_key: int | None = None
        self.partial: dict[str, Turn] = {}
        self._turns: list[Turn] = []
        self._seqs: dict[str, int] = {}
        self._spans: dict[str, Span] = {}
        self._older = 0
        self._levels: dict[str, int] = {}
        #: Display position of the first item of each card's pages read (for its next
        #: page, ``Store.card_page(before=...)``), by summary turn id.
        self.card_keys: dict[str, int] = {}
        self._unsaved: list[Turn] = []  # messages shown before they are saved
        #: turn id -> when it was saved or shown being saved (:meth:`mark`), this chat.
        self._arrived: dict[str, int] = {}
        self._tick = 0
        self._unseen: Unseen | None = None
        self._shown: str | None = None  # the chat shown last (show)

    # -- reading ----------------------------------------------------------------
    @property
    def turns(self) -> Sequence[Turn]:
        """The open chat's saved turns read so far (with the kept copies of replies
        not saved yet), in stored order; neither a message still being saved nor a
        reply still streaming."""
        return self._turns

    @property
    def seqs(self) -> Mapping[str, int]:
        """Stored positions of the turns read, by turn id."""
        return self._seqs

    @property
    def spans(self) -> Mapping[str, Span]:
        """The open chat's compaction spans, by summary turn id."""
        return self._spans

    @property
    def older(self) -> int:
        """Top-level items (turns, cards) of the open chat not read yet."""
        return self._older

    @property
    def levels(self) -> Mapping[str, int]:
        """How many items the cards read in part hold themselves, by summary turn id."""
        return self._levels

    @property
    def unseen(self) -> Unseen | None:
        """The open chat's record of older turns the model no longer sees (None: it sees
        every turn, or a summary of them)."""
        return self._unseen

    def set_unseen(self, session_id: str, unseen: Unseen | None) -> None:
        """Chat ``session_id``'s record changed (written, moved forward, removed): held
        and shown if that chat is open."""
        if session_id == self.session_id and unseen != self._unseen:
            self._unseen = unseen
            self.unseen_changed.emit()

    def holds(self, turn_id: str | None) -> bool:
        """True when a turn with that id is among :attr:`turns`."""
        return any(t.id == turn_id for t in self._turns)

    def shown_turns(self) -> list[Turn]:
        """What the transcript shows: :attr:`turns`, then the messages being saved, then
        the reply streaming in the open chat (a new list)."""
        out = list(self._turns)
        if self._unsaved:
            held = {t.id for t in out}
            out += [t for t in self._unsaved if t.id not in held]
        running = self.partial.get(self.session_id or "")
        if running is not None:
            out = [t for t in out if t.id != running.id] + [running]
        return out

    # -- what is read -------------------------------------------------------------
    def load(self, session_id: str, win: Window, unseen: Unseen | None = None) -> None:
        """Make a chat read from the store the open one (shown on :meth:`show`), with its
        record of turns the model no longer sees (``unseen``)."""
        self.session_id = session_id
        self._unseen = unseen
        self._turns = list(win.turns)
        self._seqs = dict(win.seqs)
        self._spans = dict(win.spans)
        self._levels = dict(win.levels)
        self.card_keys = {}
        self._older = win.older
        self.first_key = win.first_key
        self._unsaved = []
        self._arrived = {}

    def mark(self) -> int:
        """Where the messages saved or shown while being saved have got to, for
        :meth:`load_again`."""
        return self._tick

    def _arrive(self, turn_id: str) -> None:
        self._tick += 1
        self._arrived[turn_id] = self._tick

    def load_again(self, win: Window, unseen: Unseen | None, since: int) -> None:
        """The open chat read again (a compaction saved its summary, another program
        changed the file): as :meth:`load`, but what arrived while it was read stays — a
        message saved or shown being saved after :meth:`mark` gave ``since`` and not in
        ``win`` (a message sent the moment a compaction ended) — after the turns read."""
        assert self.session_id is not None
        read = {t.id for t in win.turns}
        arrived = [t for t in self._turns
                   if self._arrived.get(t.id, 0) > since and t.id not in read]
        unsaved = [t for t in self._unsaved
                   if self._arrived.get(t.id, 0) > since and t.id not in read]
        ticks = self._arrived
        self.load(self.session_id, win, unseen)
        self._arrived = ticks  # the same chat: a read overlapping this one still sees them
        self._turns += arrived
        self._unsaved = unsaved

    def clear(self) -> None:
        """Make an empty new chat the open one (shown on :meth:`show`)."""
        self.session_id = None
        self._unseen = None
        self._turns, self._seqs, self._spans = [], {}, {}
        self._levels, self.card_keys = {}, {}
        self._older, self.first_key = 0, None
        self._unsaved = []
        self._arrived = {}

    def take(self, win: Window, *, older: bool = False, keep: str | None = None,
             card: str | None = None) -> None:
        """Add turns read later (``older``: items above the first one read; ``card``: a
        page of that card's items; else a hit's cards) and show them in place
        (``grown``; ``keep``: a turn id to hold still on screen)."""
        self._seqs.update(win.seqs)
        self._spans = dict(win.spans)
        self._levels.update(win.levels)
        if card is not None and win.first_key is not None:
            self.card_keys[card] = win.first_key
        self._turns = merge_turns(self._turns, win.turns, self._seqs)
        if older:
            self._older = win.older
            if win.first_key is not None:
                self.first_key = win.first_key
        self.grown.emit(keep)

    def keep_unsaved(self, kept: Sequence[Turn]) -> None:
        """Put the replies kept in memory (sessions.db did not take them yet; the file
        holds at most a journalled prefix) in place of what was read: what the chat
        really holds. Kept turns not read are added at the end."""
        if not kept:
            return
        by_id = {t.id: t for t in kept}
        self._turns = [by_id.pop(t.id, t) for t in self._turns] + list(by_id.values())

    def show(self) -> None:
        """Show every turn afresh (``reset``; the same chat as before: read again)."""
        same = self.session_id is not None and self.session_id == self._shown
        self._shown = self.session_id
        self.reset.emit(same)

    # -- changes while the chat is open ----------------------------------------------
    def remember(self, session_id: str, turn: Turn) -> None:
        """A turn of chat ``session_id`` was saved (new or updated): held and shown if
        that chat is open."""
        if session_id != self.session_id:
            return
        for i, t in enumerate(self._turns):
            if t.id == turn.id:
                self._turns[i] = turn
                break
        else:
            self._turns.append(turn)
            self._arrive(turn.id)
        self._unsaved = [t for t in self._unsaved if t.id != turn.id]
        self.turn_changed.emit(turn)

    def show_unsaved(self, session_id: str | None, turn: Turn) -> None:
        """A message of chat ``session_id`` is being saved: shown now if it is open."""
        if session_id != self.session_id:
            return
        self._unsaved.append(turn)
        self._arrive(turn.id)
        self.turn_changed.emit(turn)

    def unshow(self, turn_ids: Iterable[str]) -> None:
        """Messages shown while being saved were not saved: no longer held (shown so on
        the next :meth:`show`)."""
        gone = set(turn_ids)
        self._unsaved = [t for t in self._unsaved if t.id not in gone]

    def stream(self, session_id: str, turn: Turn) -> None:
        """The reply streaming in chat ``session_id`` grew: shown if that chat is open."""
        self.partial[session_id] = turn
        if session_id == self.session_id:
            self.turn_changed.emit(turn)

    def branch_at(self, session_id: str, turn_id: str, edited: Turn) -> bool:
        """An edit of ``turn_id`` was saved as ``edited`` (``Store.edit_turn``): hold the
        path it made without reading the chat again — the turns read before
        ``turn_id``, then ``edited`` (placed after every stored one, as a message just
        sent) — shown on the next :meth:`show`. Cost: the turns held.

        Returns:
            False, changing nothing, when the new path cannot be told from what is held
            (then it is read again): another chat is open, ``turn_id`` is not held, or a
            summary turn is on the part cut away (the store may have carried it onto
            the new branch: ``parley.core.store.summary_carry``).
        """
        if session_id != self.session_id:
            return False
        at = next((i for i, t in enumerate(self._turns) if t.id == turn_id), None)
        if at is None:
            return False
        cut = {t.id for t in self._turns[at:]}
        pos = self._seqs.get(turn_id)
        if any(summary_block(t) is not None for t in self._turns[at:]) or any(
                sp.summary_turn_id in cut or (pos is not None and sp.summary_seq >= pos)
                for sp in self._spans.values()):
            return False
        self._turns = [*self._turns[:at], edited]
        for gone in cut:
            self._seqs.pop(gone, None)
        self._unsaved = []
        return True

    def drop(self, turn_ids: Iterable[str]) -> None:
        """Turns left the chat (deleted, set aside): no longer held (shown so on the next
        :meth:`show`)."""
        gone = set(turn_ids)
        self._turns = [t for t in self._turns if t.id not in gone]
