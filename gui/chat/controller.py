"""What a person does with chats: open, switch, send, stop, retry.

The controller connects the window's widgets to the core: the store
(``AsyncStore``), the providers (``ProviderHub``) and the run loop
(``ChatRunner``). It keeps the little state the screen needs: the open
session, drafts per session (saved in ``app_state`` as ``draft:<id>``, so
they survive a restart) and the growing reply of each running session.
Editing, forking and compacting are in :class:`parley.gui.chat.edit.ChatEditor`;
spaces, pin, archive, move and delete in :class:`parley.gui.chat.organize.Organizer`.

A "new chat" has no session row until its first message is sent, so Ctrl+N
never leaves empty chats behind. It belongs to the space of the chat open
before (or the one it was started in) and takes that space's default model.

A chat opens with its last :data:`~parley.gui.chat.paging.OPEN_TURNS` top-level
items; :class:`~parley.gui.chat.paging.TranscriptPaging` reads more when wanted.
The turns read are held once, in :class:`~parley.gui.chat.state.OpenChatState`,
which the transcript shows; the context meter is
:class:`~parley.gui.chat.meter.ChatMeter`.

Start-up comes in two steps so the chats show before the provider SDKs are
imported (they take seconds on a cold start): the controller is given the window's
:class:`~parley.core.workspace.Workspace` with only its store open and works with it
alone first (sidebar, last chat, drafts); :meth:`attach` takes the workspace's
providers and run loop once they are open. A message sent before
that is saved at once and waits for its provider (``ChatRuns``). The first
chat shown keeps what was typed before it appeared: its saved draft, if any,
comes first, then the new text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QDesktopServices

from parley.core.app_state import LAST_SESSION
from parley.core.content import Turn
from parley.core.store.errors import SessionNotFound
from parley.core.workspace import Stage
from parley.gui.chat.attach import ChatAttachments
from parley.gui.chat.box_switch import BoxSwitch, after
from parley.gui.chat.edit import ChatEditor
from parley.gui.chat.list_reveal import list_up_to
from parley.gui.chat.meter import ChatMeter
from parley.gui.chat.models import ChatModels
from parley.gui.chat.opening import ChatOpener
from parley.gui.chat.organize import Organizer
from parley.gui.chat.paging import TranscriptPaging
from parley.gui.chat.regenerate import ChatRegenerate
from parley.gui.chat.run import ChatRuns
from parley.gui.chat.state import OpenChatState
from parley.gui.chat.unseen import ChatUnseen
from parley.gui.composer.draft_timer import DraftTimer
from parley.gui.composer.drafts import Drafts
from parley.gui.database.save_status import SaveStatus
from parley.gui.sidebar.folds import KeptFolds

if TYPE_CHECKING:
    from parley.core.chat.run import ChatRunner
    from parley.core.chat.titles import TitleService
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.models import Session
    from parley.core.store.outline import Span
    from parley.core.workspace import Workspace
    from parley.gui.chat.parts import ChatParts, WindowCalls

log = logging.getLogger(__name__)

PAGE = 50  # sessions per space loaded at a time ("Show more" loads the next page)


class ChatController:
    """Drives chats for one :class:`~parley.gui.main_window.MainWindow` (after ``start``).

    Args:
        parts: the window's widgets the chat fills, and its tasks.
        calls: what the chat asks of the window.
        workspace: the window's workspace, its store open (stage ``STORE``); its
            providers and run loop are used once open and taken (:meth:`attach`).

    Attributes:
        attached: True once :meth:`attach` took the workspace's providers and run loop.
    """

    def __init__(self, parts: ChatParts, calls: WindowCalls, workspace: Workspace) -> None:
        self.parts, self.calls, self.workspace = parts, calls, workspace
        self.store = workspace.store
        self.attached = False
        self.titles: TitleService | None = None
        #: The open chat's turns (the one copy; the transcript reads them from it).
        self.state = OpenChatState(parts.parent)
        self.space_id: str | None = None
        self.sessions: dict[str, Any] = {}
        self.drafts = Drafts(self.store)
        #: writes the draft a moment after typing stops and at least twice a second during it
        self._draft_timer = DraftTimer(parts.parent, self._save_draft_soon)
        self._loading_draft = False
        #: the chat the box belongs to from the switch key on (not once that chat shows)
        self.box = BoxSwitch(text=parts.composer.text, set_text=self._set_box,
                             open_chat=lambda: (self.session_id, self.adopting),
                             drafts=self.drafts, tasks=parts.tasks, keep_draft=self.keep_draft)
        p = parts
        self.save_status = SaveStatus(p.parent, p.chat_layout, store=self.store, tasks=p.tasks,
                                      transcript=p.transcript, status=p.status,
                                      drafts=self.drafts)
        #: True until the first chat is shown: it takes over the text typed before then.
        self.adopting = True
        #: Set whenever the providers change (attached, set up): queued messages look again.
        self.providers_changed = asyncio.Event()
        self.models = ChatModels(self, p.model_picker, p.tasks, set_title=calls.set_title,
                                 heading=p.heading, greeting=p.greeting)
        self.meter = ChatMeter(self, p.context_meter, p.tasks, ready=calls.ready,
                               cache_timer=calls.cache_timer)
        self.paging = TranscriptPaging(p.transcript, p.tasks, self.state, self.store)
        self.opener = ChatOpener(self, p.sidebar, p.transcript, p.status, p.tasks,
                                 show_chat=calls.show_chat, new_chat_asked=calls.new_chat_asked)
        self.runs = ChatRuns(self, p, calls)
        self.attachments = ChatAttachments(self, p, calls)
        self.editor = ChatEditor(self, p.transcript, p.composer, p.composer_bar, p.status,
                                 p.undo, p.tasks)
        self.organizer = Organizer(self, p.sidebar, p.model_picker, p.undo, p.tasks, p.parent,
                                   show_problem=calls.show_problem)
        self.regen = ChatRegenerate(self, p.transcript, p.model_picker, p.status, p.tasks,
                                    p.parent, workspace.home)
        from parley.gui.chat.several import ChatSeveral  # Ask several models (issue 34)

        self.several = ChatSeveral(self, self.runs, p, self.regen)
        p.transcript.follow(self.state)
        self.state.reset.connect(p.transcript.show_reset)
        self.state.grown.connect(p.transcript.show_grown)
        self.state.turn_changed.connect(p.transcript.show_changed)
        # the note of turns the model no longer sees
        self.unseen = ChatUnseen(self, p.transcript, p.model_picker, p.status)
        p.composer.textChanged.connect(self._composer_changed)
        p.composer.text_refused.connect(self._paste_refused)
        # Enter (and Send) goes straight to the runs: before the chat is made, the window's
        # command keeps it for the first chat (parley.gui.composer.early_input); the runs
        # do that themselves while the chats are still being opened.
        p.commands.handle("composer.send", self.runs.send_from_composer, replace=True)
        # The window is whole now: the message box's keys run their commands directly.
        p.composer.on_action = p.commands.run_action
        p.composer_bar.send_clicked.connect(self.runs.send_from_composer)
        p.composer_bar.stop_clicked.connect(self.runs.stop)
        p.sidebar.load_more_requested.connect(
            lambda space: p.tasks.spawn(self._load_page(space), name="load-more"))
        p.heading.renamed.connect(self.organizer.rename_open)  # renamed in place in the header
        p.transcript.retryRequested.connect(self.runs.retry)
        # Continue on a stopped reply: the model goes on from what it wrote (like
        # Continue under a reply cut at the length limit), not a fresh answer.
        p.transcript.resumeRequested.connect(lambda _turn_id: self.runs.continue_reply())
        p.transcript.continueRequested.connect(lambda _turn_id: self.runs.continue_reply())
        p.transcript.linkActivated.connect(QDesktopServices.openUrl)

    @property
    def hub(self) -> ProviderHub | None:
        """The workspace's providers (None until :meth:`attach`, and once it closed)."""
        return self.workspace.hub if self._providers_open() else None

    @property
    def runner(self) -> ChatRunner | None:
        """The workspace's run loop (None until :meth:`attach`, and once it closed)."""
        return self.workspace.runner if self._providers_open() else None

    def _providers_open(self) -> bool:
        return self.attached and self.workspace.stage is Stage.READY

    # -- the open chat (held by self.state) ---------------------------------------
    @property
    def session_id(self) -> str | None:
        """The open chat's session (None: a new chat): :attr:`OpenChatState.session_id`."""
        return self.state.session_id

    @session_id.setter
    def session_id(self, sid: str | None) -> None:
        self.state.session_id = sid

    @property
    def turns(self) -> Sequence[Turn]:
        """:attr:`OpenChatState.turns`."""
        return self.state.turns

    @property
    def older(self) -> int:
        """:attr:`OpenChatState.older`."""
        return self.state.older

    @property
    def spans(self) -> Mapping[str, Span]:
        """:attr:`OpenChatState.spans`."""
        return self.state.spans

    @property
    def partial(self) -> dict[str, Turn]:
        """:attr:`OpenChatState.partial`."""
        return self.state.partial

    # -- start ------------------------------------------------------------
    async def load_sidebar(self) -> None:
        """Show every space and the first page of its sessions (read at once; put in the
        list a space at a time, keys taken in between; the list painted once after), folded
        as the person left them (``parley.gui.sidebar.folds``)."""
        await KeptFolds(self.parts.sidebar, self.store, self.parts.tasks).load()  # before rows
        spaces = await self.organizer.load_spaces()
        self.parts.sidebar.model.set_spaces(spaces)
        if self.space_id not in self.organizer.spaces:
            self.space_id = self.organizer.default_space_id
        sidebar = self.parts.sidebar
        pages = await self.store.first_pages([space.id for space in spaces], limit=PAGE + 1,
                                             include_archived=sidebar.show_archived)
        with sidebar.painted_after():
            for i, space in enumerate(spaces):
                if i:
                    await asyncio.sleep(0)
                self._add_page(space.id, pages.get(space.id, []))
            sidebar.select(self.session_id, self.space_id)

    async def _load_page(self, space_id: str) -> None:
        model = self.parts.sidebar.model
        offset = model.loaded_count(space_id)
        page = await self.store.list_sessions(space_id=space_id, limit=PAGE + 1, offset=offset,
                                              include_archived=self.parts.sidebar.show_archived)
        self._add_page(space_id, page)

    def _add_page(self, space_id: str, page: list[Session]) -> None:
        """List a page read of ``space_id``'s sessions (:data:`PAGE`, one more if there
        are more) after those listed."""
        self._add_read(space_id, page[:PAGE], len(page) > PAGE)

    def _add_read(self, space_id: str, read: Sequence[Session], more: bool) -> None:
        """List sessions read of ``space_id`` after those listed (``more``: "Show more")."""
        shown = [s for s in read if s.id not in self.organizer.deleting]
        for s in shown:
            self.sessions[s.id] = s
        self.parts.sidebar.model.add_sessions(space_id, shown, has_more=more)
        if any(s.forked_from_turn_id for s in shown):
            self.parts.tasks.spawn(self.organizer.describe_forks(shown), name="fork-points")

    async def _list_open(self, sid: str) -> None:
        """The open chat, beyond the pages listed (opened from the palette or search):
        its space's pages up to it are listed, and it is selected there."""
        session = self.sessions.get(sid)
        if session is None:
            return
        try:
            listed = await list_up_to(self.store, self.parts.sidebar, sid, session.space_id,
                                      PAGE, self._add_read)
        except SessionNotFound:
            return
        if listed and sid == self.session_id:
            self.parts.sidebar.select(sid, self.space_id)

    def attach(self) -> None:
        """Take the workspace's providers and run loop, open now (the second step of
        start-up): the chat's titles, edits, saves, models and meter use them, and the
        messages waiting for them go. The meter shows them at the next :meth:`enter` or
        ``meter.update()``."""
        from parley.core.chat.titles import TitleService

        hub, runner = self.workspace.hub, self.workspace.runner
        self.attached = True
        self.titles = TitleService(self.store, hub, on_titled=self._titled)
        self.editor.attach(runner)
        self.save_status.attach(runner.saves)
        self.models.attach()
        self.wake_waiting()
        if self.session_id is not None and not self.runs.running(self.session_id):
            self.runs.unanswered.offer(self.session_id)  # now it can say why, if it knows

    async def enter(self) -> None:
        """Show the chat page (after set-up, or at start) and list the models; show the
        last chat (or a new one) if no chat was shown yet."""
        self.calls.show_chat()
        self.wake_waiting()  # set-up done: a message waiting for it goes
        self.parts.tasks.spawn(self.models.refresh_models(), name="models")
        if self.adopting:
            await self.show_first()
        # Set-up chose one: named as the connection test listed it (the list kept then),
        # not by its id until the models listed now come.
        self.models.attach()
        self.meter.update()

    def wake_waiting(self) -> None:
        """The providers changed: runs waiting for theirs look again (``ChatRuns``)."""
        changed, self.providers_changed = self.providers_changed, asyncio.Event()
        changed.set()

    # -- sessions -----------------------------------------------------------
    async def create_session(self, model: str | None = None) -> str:
        """Create a chat's session row in the current space (a new chat's first message
        is being sent) and list it; returns its id."""
        session = await self.store.create_session(space_id=self.space_id, model=model)
        self.sessions[session.id] = session
        self.parts.sidebar.model.upsert(session)
        return str(session.id)

    def keep_draft(self) -> None:
        """The message box's text is the open chat's draft (written in a moment)."""
        text = self.parts.composer.text()
        if text and not self.box.switching:  # (switching: the box is another chat's)
            self.drafts.typed(self.session_id, text)
            self._draft_timer.typed()

    # -- sessions known to the window -----------------------------------------
    def remember_session(self, session: Any) -> None:
        """A session changed in the store: update the sidebar row and the window title."""
        self.sessions[session.id] = session
        hidden = session.archived and not self.parts.sidebar.show_archived
        if hidden or session.id in self.organizer.deleting:
            self.parts.sidebar.model.remove(session.id)
        else:
            self.parts.sidebar.model.upsert(session)
            if session.forked_from_turn_id:
                self.parts.tasks.spawn(self.organizer.describe_forks([session]), name="fork-point")
        if session.id == self.session_id:
            self.space_id = session.space_id
            self.parts.sidebar.select(self.session_id, self.space_id)
            self.models.update_title()

    def _titled(self, sid: str, title: str) -> None:
        session = self.sessions.get(sid)
        if session is not None:
            self.sessions[sid] = replace(session, title=title, title_source="auto")
        self.parts.sidebar.model.set_title(sid, title)
        self.models.update_title()

    # -- drafts -----------------------------------------------------------
    def _composer_changed(self) -> None:
        if self._loading_draft or self.adopting or self.box.switching:
            return  # the first chat shown, or the chat switched to once shown, takes it
        self.runs.activity(self.session_id)
        self.drafts.typed(self.session_id, self.parts.composer.text())
        self._draft_timer.typed()

    def _set_box(self, text: str) -> None:
        """Put ``text`` in the box (not recorded as typed)."""
        self._loading_draft = True
        try:
            if text != self.parts.composer.text():
                self.parts.composer.set_text(text)
        finally:
            self._loading_draft = False

    def _paste_refused(self, chars: int) -> None:
        """A paste was refused: the message would be longer than any model can read."""
        from parley.core.context.text_limits import paste_refused

        self.parts.status.showMessage(paste_refused(chars).message, 15_000)

    def _save_draft_soon(self) -> None:
        self.parts.tasks.spawn(self._timed_draft_save(), name="save-draft")

    async def _timed_draft_save(self) -> None:
        """The write :class:`DraftTimer` asked for (it is told when it ends)."""
        try:
            await self.drafts.save(self.session_id)
        finally:
            self._draft_timer.saved()

    async def stash_draft(self) -> None:
        """Persist the open chat's draft now (:meth:`Drafts.save`)."""
        await self._stash_draft()

    async def _stash_draft(self) -> None:
        """Persist the open chat's draft now."""
        self._draft_timer.stop()
        await self.drafts.save(self.session_id)

    # -- opening ---------------------------------------------------------------
    def after_switch(self, draft: str) -> None:
        """Another chat (or a new one) is shown: its draft (``draft``, with what was typed
        while starting) in the box, its files, busy state, row, model, title and meter."""
        if self.adopting and self.session_id is not None and self.opener.new_chat_asked():
            return  # Ctrl+N pressed while it was read: the new chat takes the box (show_first)
        typed = self.box.typed()  # typed since the switch key: after the draft
        if self.adopting:
            typed = self.parts.composer.text()
        self.adopting = False
        text = after(draft, typed)
        self._set_box(text)
        if typed:  # typed while starting: now this chat's draft
            self.drafts.typed(self.session_id, text)
            self._draft_timer.typed()
        self.attachments.refresh()  # the tray shows this chat's pending files
        busy = self.runs.running(self.session_id)
        self.parts.composer_bar.set_busy(busy)
        self.parts.transcript.set_busy(busy)
        self.parts.sidebar.select(self.session_id, self.space_id)
        if self.session_id is not None and not self.parts.sidebar.model.has(self.session_id):
            self.parts.tasks.spawn(self._list_open(self.session_id), name="list-open-chat")
        self.parts.status.set_chat(self.session_id)  # another chat's message goes
        self.runs.retry_notice.refresh()  # this chat's retry wait, if any
        self.runs.queue.shown(self.session_id)  # and its queued messages
        self.models.show_current()
        self.models.update_title()
        self.meter.update()
        self.calls.focus_composer()
        if self.box.send_asked:  # Enter pressed before this chat showed: sent here, once
            self.box.send_asked = False  # its edit mode is back too (ChatOpener._open_now)
            QTimer.singleShot(0, self.runs.send_from_composer)

    # -- shorthands (scripts, benchmarks and the window's commands drive the controller) ---
    def current_model(self) -> str | None:
        """:meth:`ChatModels.current_model`."""
        return self.models.current_model()

    def open_session(self, session_id: str) -> None:
        """:meth:`ChatOpener.open_session`."""
        self.opener.open_session(session_id)

    def new_session(self, space_id: str | None = None) -> None:
        """:meth:`ChatOpener.new_session`; refused, and said, when sessions.db was opened
        read-only (a new chat could never be saved: its first message would be lost)."""
        refused = self.store.write_refused()
        if refused is not None:
            self.save_status.absorb(refused)
            return
        self.opener.new_session(space_id)

    def open_at(self, session_id: str, turn_id: str | None, highlight: str | None) -> None:
        """:meth:`ChatOpener.open_at`."""
        self.opener.open_at(session_id, turn_id, highlight)

    async def show_first(self, kept: str | None = None) -> None:
        """:meth:`ChatOpener.show_first`."""
        await self.opener.show_first(kept)
        # Messages queued before Parley closed, in chats not shown: said once.
        self.parts.tasks.spawn(self.runs.queue.tell_restored(), name="queued-elsewhere")

    def step_session(self, delta: int) -> None:
        """:meth:`ChatOpener.step_session`."""
        self.opener.step_session(delta)

    def goto_session(self, n: int) -> None:
        """:meth:`ChatOpener.goto_session`."""
        self.opener.goto_session(n)

    def send_from_composer(self) -> bool:
        """:meth:`ChatRuns.send_from_composer`."""
        return self.runs.send_from_composer()

    def retry(self) -> bool:
        """:meth:`ChatRuns.retry`."""
        return self.runs.retry()

    def stop(self) -> bool:
        """:meth:`ChatRuns.stop`."""
        return self.runs.stop()

    # -- title ----------------------------------------------------------------
    # -- shutdown ---------------------------------------------------------
    async def shutdown(self) -> None:
        """Stop every run (partials are kept as aborted turns), make a pending delete
        final, save draft and session."""
        self.runs.queue.closing = True  # runs stopped now leave the queues as saved
        runs = list(self.runs.active.items())
        for sid, task in runs:
            if self.runner is None or self.runs.waiting(sid):
                task.cancel()  # waiting for its provider: the saved message stays, not sent
            else:
                self.runner.cancel(sid)
        if runs:
            await asyncio.wait([t for _s, t in runs], timeout=5)
        self.editor.detach()
        await self.organizer.undo_flush()
        if self.runner is not None:
            await self.runner.saves.aclose()  # what is still kept was asked about (quit)
        await self._stash_draft()
        if self.session_id:
            await LAST_SESSION.set(self.store, self.session_id)
