"""Reading more of the open chat: the transcript's window on a long chat grows on demand.

A chat opens with its last :data:`OPEN_TURNS` top-level items (reading 10,000 turns
would miss the first-paint budget): turns outside compacted ranges and compaction
cards, which the store places where their range began
(``Store.transcript_window``). :class:`TranscriptPaging` reads the rest when it is
wanted: older items when the transcript is scrolled to the top, all of them on Home
or to show a search result further back (and the cards around it), a card's own
items a page at a time when it is opened or its "Show more" is clicked
(``Store.card_page``: never the turns of the cards nested in it).
What it reads goes into the open chat's state (``OpenChatState.take``), which the
transcript shows in place.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.chat.state import OpenChatState
    from parley.gui.transcript import TranscriptView

OPEN_TURNS = 200  # top-level items read when a chat opens; older ones load on scrolling up
OLDER_SETTLE_S = 0.5  # scroll events this soon after showing a chat are not the person's


class TranscriptPaging:
    """Reads older items and compacted ranges of one window's open chat.

    Args:
        transcript: the window's transcript (scrolled, asking for more).
        tasks: the window's background tasks (the reads).
        state: the open chat's turns, where what is read goes.
        store: the store it is read from.
    """

    def __init__(self, transcript: TranscriptView, tasks: TaskSet, state: OpenChatState,
                 store: AsyncStore) -> None:
        self.transcript, self.tasks = transcript, tasks
        self.state = state
        self.store = store
        self._shown_at = 0.0
        self._loading_older = False
        self._older_lock = asyncio.Lock()
        self._card_lock = asyncio.Lock()
        transcript.list_view.verticalScrollBar().valueChanged.connect(self._scrolled)
        transcript.startWanted.connect(
            lambda: tasks.spawn(self.load_start(), name="first-turns"))
        transcript.compactedTurnsWanted.connect(
            lambda summary_id: tasks.spawn(self.load_compacted(summary_id),
                                           name="compacted-turns"))

    def shown(self) -> None:
        """The open chat was just shown afresh: scrolling at once is not the person's."""
        self._shown_at = time.monotonic()

    async def reveal(self, sid: str, turn_id: str, highlight: str | None) -> None:
        """Show a search hit of the open chat that is not loaded: older items up to it
        (all of them), and the compacted range it is in."""
        async with self._older_lock:
            if sid != self.state.session_id:
                return
            win = await self.store.transcript_window(sid, before=self.state.first_key,
                                                     reveal=turn_id)
            if sid != self.state.session_id:
                return
            self.state.take(win, older=True)
        self.transcript.scroll_to_turn(turn_id, highlight)

    def _scrolled(self, value: int) -> None:
        """Scrolled to the top (by the person, not as the chat was shown): read older items."""
        bar = self.transcript.list_view.verticalScrollBar()
        if value == bar.minimum() < bar.maximum() and self.state.older > 0 and \
                not self._loading_older and time.monotonic() - self._shown_at > OLDER_SETTLE_S:
            self._loading_older = True
            self.tasks.spawn(self.load_older(), name="older-turns")

    async def load_older(self, *, everything: bool = False) -> int:
        """Load up to :data:`OPEN_TURNS` older top-level items of the open chat (all
        of them with ``everything``); returns how many turns were added."""
        sid = self.state.session_id
        try:
            async with self._older_lock:
                if sid is None or self.state.older <= 0 or sid != self.state.session_id:
                    return 0
                shown = self.transcript.model.rows
                first = shown[0].key if shown else None  # stays in view (maybe a card)
                win = await self.store.transcript_window(
                    sid, last=None if everything else OPEN_TURNS, before=self.state.first_key)
                if sid != self.state.session_id:
                    return 0
                self.state.take(win, older=True)
                if first is not None and not everything:
                    self.transcript.scroll_to_turn(first)
                return len(win.turns)
        finally:
            self._loading_older = False

    async def load_start(self) -> None:
        """Home: load every older item of the open chat, then show its first row."""
        sid = self.state.session_id
        if sid is not None and self.state.older > 0:
            await self.load_older(everything=True)
        if sid == self.state.session_id:
            self.transcript.go_first()

    async def load_compacted(self, summary_turn_id: str) -> None:
        """A card was opened, or its "Show more" clicked: load the next page of its own
        items (turns its compaction replaced, and the cards nested one level in), newest
        first."""
        sid = self.state.session_id
        if sid is None:
            return
        async with self._card_lock:  # one page after another, not the same one twice
            if sid != self.state.session_id:
                return
            win = await self.store.card_page(sid, summary_turn_id,
                                             before=self.state.card_keys.get(summary_turn_id))
            if sid != self.state.session_id or not win.levels:
                return
            self.state.take(win, keep=summary_turn_id, card=summary_turn_id)

