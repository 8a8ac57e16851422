"""Opening chats in a window: which chat, and which of its branches, the window shows.

:class:`ChatOpener` opens a chat of the list (on the path it showed last), a
search result (scrolled to the message, reading what is needed to show it; a
message in another branch makes the path pass through it first,
``Store.show_branch``), a fork just made, a new chat (no session row until its
first message is sent, so Ctrl+N never leaves empty chats behind: it belongs to
the space of the chat open before and takes that space's default model), the
chat open when Parley closed, and the neighbour of a chat that left the list.
It reads the chat's last items (:data:`~parley.gui.chat.paging.OPEN_TURNS`) into
the open chat's state and shows them, with ‹ n/m › under the messages that have
siblings (``Store.branches``, ``parley.core.branches``): ‹ › shows the path
through the sibling and reads the same chat's window again (the draft, the box
and edit mode stay). A chat that cannot be opened because the store is away for
a while is said in the bar; the chat shown stays.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.core.app_state import LAST_SESSION
from parley.core.branches import Branches, BranchPoint
from parley.core.errors import ParleyError
from parley.core.store.errors import SessionNotFound, StoreError
from parley.gui.chat.paging import OPEN_TURNS
from parley.gui.database.save_status import passing

if TYPE_CHECKING:
    from collections.abc import Callable

    from parley.core.content import Turn
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.sidebar import Sidebar
    from parley.gui.transcript import TranscriptView

log = logging.getLogger(__name__)

#: Said when showing another version takes a while (near the start of a long chat the
#: path below it is rewritten: ~2 s at 100,000 turns), until it shows.
SWITCHING = "Showing the other version…"
#: Seconds a switch runs before :data:`SWITCHING` is said.
SWITCHING_AFTER_S = 0.4
#: Said when ‹ › is pressed while a reply is being written in the chat.
BUSY_SWITCHING = ("A reply is being written at the end of this branch: wait for it (or press "
                  "Esc), then switch branches.")


class ChatOpener:
    """Opens chats in one window (see the module docstring).

    Args:
        chat: the open chat's controller.
        sidebar, transcript, status, tasks: the window's list of chats, transcript,
            status bar and background tasks.
        show_chat: shows the window's chat page.
        new_chat_asked: True when Ctrl+N was pressed before the first chat showed.
    """

    def __init__(self, chat: OpenChat, sidebar: Sidebar, transcript: TranscriptView,
                 status: OneLineStatusBar, tasks: TaskSet, *, show_chat: Callable[[], None],
                 new_chat_asked: Callable[[], bool]) -> None:
        self.sidebar, self.transcript, self.status, self.tasks = sidebar, transcript, status, tasks
        self.show_chat, self._new_chat_asked = show_chat, new_chat_asked
        self.chat = chat
        #: The branch points of the open chat's path (None for a new chat).
        self.branches: Branches | None = None
        self._open_gen = 0
        sidebar.session_activated.connect(self.open_session)
        # Through the chat (not :meth:`new_session`): refused and said on a read-only file.
        sidebar.new_chat_clicked.connect(lambda: self.chat.new_session())
        transcript.branchRequested.connect(self.switch_branch)

    async def show_first(self, kept: str | None = None) -> None:
        """Show the first chat at start-up: the one open when Parley closed, or a new
        chat when there is none or Ctrl+N was pressed while starting (then the last
        chat does not take the message box's text: ``parley.gui.startup.state.replay`` gives it what
        was typed for it).

        Args:
            kept: the chat whose message box text was kept when sessions.db was found
                damaged (``parley.gui.database.queued_kept.kept_chat``: its id, '' for a
                new chat): shown instead of the last one, as that text comes back into
                its box; a new chat when the recovered file does not hold it.
        """
        # Not when the person opened a chat meanwhile (no longer adopting).
        if self.new_chat_asked():
            opened = False
        elif kept is not None:
            opened = bool(kept) and await self._reopen(kept)
        else:
            opened = await self.reopen_last()
        if not opened and self.chat.adopting:
            await self._show_new_chat()

    def new_chat_asked(self) -> bool:
        return self._new_chat_asked()

    async def reopen_last(self) -> bool:
        """Open the chat that was open when Parley closed; False when there is none."""
        last = await LAST_SESSION.get(self.chat.store)
        return bool(last) and await self._reopen(last)

    async def _reopen(self, session_id: str) -> bool:
        """Open the chat ``session_id`` at start-up; False when the file does not hold it."""
        try:
            await self.open(session_id)
        except SessionNotFound:
            log.info("session %s is gone", session_id)
            return False
        self.show_chat()
        return True

    def open_session(self, session_id: str) -> None:
        """Open a chat of the list, on the path it showed last (no-op when it is open)."""
        if session_id != self.chat.session_id:
            self.chat.box.begin(session_id)  # at once: the box is that chat's (BoxSwitch)
            self.chat.meter.opening(session_id)  # at once: not the figures of the chat left
            self.tasks.spawn(self.open(session_id), name="open-session")

    def _not_opened(self, error: ParleyError) -> None:
        """A chat could not be opened because the store is away for a while (a PostgreSQL
        server down, sessions.db locked…): said in the bar, the open chat (and what is
        typed in its box) stays as it was, and the list shows it again. Others: raised."""
        if not passing(error):
            raise error
        self.chat.save_status.not_opened(error)
        self.sidebar.select(self.chat.session_id, self.chat.space_id)

    def _set_branches(self, branches: Branches | None, *, reset: bool = False) -> None:
        """Show ‹ n/m › under the open chat's messages that have siblings (``reset``:
        held for :meth:`show_turns`, which comes next and builds every row afresh)."""
        self.branches = branches
        points = branches.points if branches is not None else {}
        self.transcript.set_branches({k: (p.index, p.total) for k, p in points.items()},
                                     refresh=not reset)

    async def refresh_branches(self) -> None:
        """Read the open chat's branch points again (a reply was written, an edit or a
        regeneration made a sibling)."""
        sid = self.chat.session_id
        if sid is None:
            return
        branches = await self.chat.store.branches(sid)
        if sid == self.chat.session_id:
            self._set_branches(branches)

    def edited(self, sid: str, turn_id: str, edited: Turn) -> bool:
        """An edit of ``turn_id``, on the path shown, was saved as ``edited``: show the
        path it made from what is held (``OpenChatState.branch_at``), with ‹ n/m › on
        ``edited`` told from the original's (its siblings, then it: the newest), without
        reading the chat or its branch points again (the branch points are read again
        when the reply ends: ``RunFinished``). Cost: the turns held, whatever the
        chat's length.

        Returns:
            False when the new path cannot be told so (another chat open, the turn not
            held, a summary cut away, the original a path's end with answers below):
            then :meth:`reread` it.
        """
        branches = self.branches
        point = branches.points.get(turn_id) if branches is not None else None
        if branches is None or branches.session_id != sid \
                or (point is not None and any(point.exact)):
            return False
        held = [t.id for t in self.chat.state.turns]
        cut = set(held[held.index(turn_id):]) if turn_id in held else set()
        if not self.chat.state.branch_at(sid, turn_id, edited):
            return False
        ids, exact = (point.turn_ids, point.exact) if point is not None else ((turn_id,), (False,))
        total = len(ids) + 1
        # The points above the original stay (the turns held before it, and those not read).
        kept = {k: p for k, p in branches.points.items() if k not in cut}
        kept[edited.id] = BranchPoint(edited.id, total, total, (*ids, edited.id), (*exact, False))
        self._set_branches(Branches(sid, kept), reset=True)
        self.show_turns()
        self.chat.meter.update()
        return True

    def switch_branch(self, turn_id: str, step: int) -> bool:
        """Show the sibling ``step`` away (-1 previous, +1 next) of a message of the open
        chat, with the turns below it chosen last time; False when there is none, or
        while a reply is being written in the chat (it goes below the path's end)."""
        point = self.branches.points.get(turn_id) if self.branches is not None else None
        target = point.target(step) if point is not None else None
        sid = self.chat.session_id
        if target is None or sid is None:
            return False
        if self.chat.runs.running(sid):
            self.status.showMessage(BUSY_SWITCHING, 8_000)
            return False
        self.tasks.spawn(self._switch(sid, *target), name="switch-branch")
        return True

    async def _switch(self, sid: str, turn_id: str, exact: bool) -> None:
        transcript = self.transcript
        focus = QApplication.focusWidget()
        had_focus = focus is not None and (focus is transcript or transcript.isAncestorOf(focus))
        said = asyncio.get_running_loop().call_later(
            SWITCHING_AFTER_S, lambda: self.status.showMessage(SWITCHING, 60_000))
        try:
            await self.chat.store.show_branch(sid, turn_id, exact=exact)
            shown = await self.reread(sid, at=turn_id)
        except ParleyError as exc:
            self._not_opened(exc)
            return
        finally:
            said.cancel()
            if self.status.currentMessage() == SWITCHING:
                self.status.clearMessage()
        if shown and had_focus:
            transcript.list_view.setFocus(Qt.FocusReason.OtherFocusReason)
        if shown:
            transcript.scroll_to_turn(turn_id)

    def open_at(self, session_id: str, turn_id: str | None, highlight: str | None) -> None:
        """Open a chat scrolled to ``turn_id`` with ``highlight`` marked (search results,
        the command palette): a message in another branch is shown on its path."""
        self.show_chat()
        if turn_id is not None and session_id == self.chat.session_id \
                and self.chat.state.holds(turn_id):
            self.transcript.scroll_to_turn(turn_id, highlight)  # on the path shown
        elif turn_id is None:
            self.chat.box.begin(session_id)
            self.tasks.spawn(self.open(session_id), name="open-at")
        else:
            if session_id != self.chat.session_id:
                self.chat.box.begin(session_id)
            self.tasks.spawn(self._open_at(session_id, turn_id, highlight), name="open-at")

    async def _open_at(self, session_id: str, turn_id: str, highlight: str | None) -> None:
        if session_id != self.chat.session_id:
            try:
                await self.chat.store.show_branch(session_id, turn_id)
            except ParleyError as exc:
                self._not_opened(exc)
                return
            await self.open(session_id, at=turn_id, highlight=highlight)
            return
        try:
            if self.chat.runs.running(session_id):  # the path stays while a reply is written
                await self.chat.paging.reveal(session_id, turn_id, highlight)
                return
            before = await self.chat.store.get_turns(session_id, last=1, hydrate=False)
            leaf = await self.chat.store.show_branch(session_id, turn_id)
            if before and before[-1].id == leaf:  # on the path shown, further back
                await self.chat.paging.reveal(session_id, turn_id, highlight)
            elif await self.reread(session_id, at=turn_id):
                self.transcript.scroll_to_turn(turn_id, highlight)
        except ParleyError as exc:
            self._not_opened(exc)

    async def reread(self, sid: str, *, at: str | None = None, offer: bool = True) -> bool:
        """Read the open chat's path again after it changed (``Store.show_branch``, an
        edit): its last items (and up to ``at``, a turn of the new path), its branch
        points; the draft and the box stay, edit mode too while its message is still
        shown. ``offer``: say "Not sent" under an unanswered last message (not when
        its reply is about to be asked for). False when another chat was opened
        meanwhile.

        Raises:
            ParleyError: the store could not be read (nothing shown changed).
        """
        gen = self._open_gen
        win = await self.chat.store.transcript_window(sid, last=OPEN_TURNS)
        if at is not None and all(t.id != at for t in win.turns):
            win = await self.chat.store.transcript_window(sid, reveal=at)
        branches = await self.chat.store.branches(sid)
        if offer:
            await self.chat.runs.unanswered.read(sid, win.turns)
        session = await self.chat.store.get_session(sid)
        if gen != self._open_gen or sid != self.chat.session_id:
            return False
        self.chat.sessions[sid] = session
        self.chat.state.load(sid, win, self.chat.state.unseen)
        self._set_branches(branches, reset=True)
        editing = self.chat.editor.editing
        if editing is not None and not self.chat.state.holds(editing.id):
            self.chat.editor.set_editing(None)  # its message is in the branch left
            self.chat.keep_draft()  # the box's text: now a plain draft
        self.show_turns()
        if offer:
            self.chat.runs.unanswered.offer(sid)
        # Another path: its context turns are read again, not worked out from the path
        # left's (a summary on one branch only may stand before the turns shown).
        self.chat.meter.reread()
        self.chat.meter.update()
        return True

    async def open(self, session_id: str, *, at: str | None = None,
                    highlight: str | None = None) -> None:
        if session_id != self.chat.session_id:
            self.chat.meter.opening(session_id)
        gen = self._open_gen + 1  # this opening's (_open_now counts it)
        try:
            await self._open_now(session_id, at=at, highlight=highlight)
        except ParleyError as exc:
            self._not_opened(exc)
        finally:
            self.chat.meter.opened(session_id)  # not shown: the chat before's figures again
            if gen == self._open_gen:  # not shown: the box is the open chat's again
                self.chat.box.ended()

    async def _open_now(self, session_id: str, *, at: str | None,
                        highlight: str | None) -> None:
        self._open_gen += 1
        gen = self._open_gen
        try:
            await self.chat.stash_draft()
        except ParleyError as exc:  # kept in memory (Drafts), written by a later save
            if not passing(exc):
                raise
            self.chat.save_status.problem(exc)
        win = await self.chat.store.transcript_window(session_id, last=OPEN_TURNS)
        if at is not None and all(t.id != at for t in win.turns):
            # a search hit further back, or under a card: every item, and its card's turns
            win = await self.chat.store.transcript_window(session_id, reveal=at)
        draft = await self.chat.drafts.load(session_id)
        edits = self.chat.drafts.edit_of(session_id)  # a sent message being edited
        if draft and edits is not None and at is None and all(t.id != edits for t in win.turns):
            # under a card (or further back): read as a search hit is, so edit mode comes back
            win = await self.chat.store.transcript_window(session_id, reveal=edits)
        branches = await self.chat.store.branches(session_id)
        unseen = await self.chat.unseen.read(session_id)  # one app-state row
        await self.chat.runs.unanswered.read(session_id, win.turns)  # at most one more
        tools = self.chat.runner.tools if self.chat.runner is not None else None
        mcp = tools.mcp if tools is not None else None
        if mcp is not None:  # its MCP tools' names as configured, for the tool-call lines
            await mcp.load_names(session_id)  # (one app-state row, once per chat)
        # Read last: a title saved while the turns were read (SessionTitled) is in it.
        session = await self.chat.store.get_session(session_id)
        if gen != self._open_gen:
            return  # another chat was opened meanwhile
        self.chat.sessions[session_id] = session
        self.chat.state.load(session_id, win, unseen)
        self.chat.space_id = session.space_id
        self._set_branches(branches, reset=True)
        self.chat.editor.set_editing(None)
        self.show_turns()
        self.chat.runs.unanswered.offer(session_id)
        self.chat.after_switch(draft)
        if not self.chat.adopting:  # else the box is a new chat's (after_switch)
            self.chat.editor.resume(edits if draft else None)
        if at is not None:
            self.transcript.scroll_to_turn(at, highlight)
        await LAST_SESSION.set(self.chat.store, session_id)

    def show_turns(self) -> None:
        """Show the open chat's turns afresh (with a reply still streaming, and the
        replies kept in memory until sessions.db takes them) in the transcript."""
        self.chat.state.keep_unsaved(self.chat.save_status.kept(self.chat.session_id or ""))
        self.chat.paging.shown()
        self.chat.state.show()
        self.chat.save_status.mark_shown(self.chat.session_id)

    async def reload(self, *, read_unseen: bool = True) -> None:
        """Read the open chat's turns again (a compaction wrote its summary, another
        program changed the file); the composer, the draft and edit mode are left as
        they are. ``read_unseen``: read its record of turns the model no longer sees
        too (else the one held stays: after a compaction, which removed it)."""
        sid = self.chat.session_id
        if sid is None:
            return
        last = max(OPEN_TURNS, len(self.chat.turns) + 1)
        since = self.chat.state.mark()
        win = await self.chat.store.transcript_window(sid, last=last)
        branches = await self.chat.store.branches(sid)  # another program may have switched
        unseen = await self.chat.unseen.read(sid) if read_unseen else self.chat.state.unseen
        # Read last: a title saved meanwhile (SessionTitled, already shown) is in it.
        session = await self.chat.store.get_session(sid)
        if sid != self.chat.session_id:
            return
        self.chat.sessions[sid] = session
        self.chat.state.load_again(win, unseen, since)
        self._set_branches(branches, reset=True)
        self.show_turns()
        self.chat.meter.reread()  # (a summary saved: what is sent changed)
        self.chat.meter.update()

    async def _show_new_chat(self) -> None:
        gen = self._open_gen + 1
        try:
            await self._show_new_chat_now()
        finally:
            if gen == self._open_gen:  # not shown: the box is the open chat's again
                self.chat.box.ended()

    async def _show_new_chat_now(self) -> None:
        self._open_gen += 1
        try:
            await self.chat.stash_draft()
        except StoreError as exc:
            if not passing(exc):
                raise
            # The server away or not answering: the draft stays in memory (Drafts.unsaved,
            # written later or asked about on quitting), and the new chat opens anyway.
            self.chat.save_status.problem(exc)
        # Read before anything changes, so the switch is one step: no moment where the
        # new chat shows with the last chat's box, bar message or busy state.
        try:
            draft = await self.chat.drafts.load(None)
        except StoreError as exc:
            if not passing(exc):
                raise
            draft = ""  # the new chat's stored draft cannot be read now: an empty box
        self.chat.state.clear()
        self.chat.models.picked_for_new = None
        self.chat.editor.set_editing(None)
        self._set_branches(None, reset=True)
        self.show_turns()
        self.chat.after_switch(draft)

    async def show_new_chat(self, space_id: str | None = None) -> None:
        """Show an empty new chat (in ``space_id``, default: the current space)."""
        if space_id is not None:
            self.chat.space_id = space_id
        await self._show_new_chat()

    def new_session(self, space_id: str | None = None) -> None:
        """Start a new chat (its session is created when the first message is sent)."""
        self.show_chat()
        self.chat.box.begin(None)  # at once: the box is the new chat's (BoxSwitch)
        self.tasks.spawn(self.show_new_chat(space_id or None), name="new-chat")

    def step_session(self, delta: int) -> None:
        """Open the chat ``delta`` rows below (negative: above) in the sidebar, wrapping."""
        ids = self.sidebar.model.session_ids()
        if not ids:
            return
        if self.chat.session_id in ids:
            i = (ids.index(self.chat.session_id) + delta) % len(ids)
        else:
            i = 0 if delta > 0 else len(ids) - 1
        self.open_session(ids[i])

    def goto_session(self, n: int) -> None:
        """Open the ``n``-th chat of the sidebar (0-based), if there is one."""
        ids = self.sidebar.model.session_ids()
        if 0 <= n < len(ids):
            self.open_session(ids[n])

    async def leave(self, sid: str, ids: list[str]) -> None:
        """The open chat ``sid`` left the list: open its neighbour in ``ids`` (the
        sidebar's order before), or a new chat."""
        if sid != self.chat.session_id:
            return
        self.chat.session_id = None  # nothing to stash: the chat is gone from view
        rest = [i for i in ids if i != sid and self.sidebar.model.has(i)]
        if rest:
            i = min(ids.index(sid), len(rest) - 1) if sid in ids else 0
            await self.open(rest[i])
        else:
            await self._show_new_chat()

    async def show_fork(self, fork: Any) -> None:
        """A fork was made: list it under its parent and open it."""
        self.chat.remember_session(fork)
        await self.open(fork.id)
