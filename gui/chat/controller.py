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

A chat opens with its last :data:`OPEN_TURNS` top-level items (reading 10,000
turns would miss the first-paint budget): turns outside compacted ranges and
compaction cards, which the store places where their range began
(``Store.transcript_window``). Older ones load when the transcript is scrolled
to the top, all at once on Home or to show a search result; a card's replaced
turns load when it is opened.

Start-up comes in two steps so the chats show before the provider SDKs are
imported (they take seconds on a cold start): the controller works with the
store alone first (sidebar, last chat, drafts), and :meth:`attach` hands it
the providers and the run loop when they are ready. A message sent before
that is saved at once and waits for its provider (``ChatRuns``). The first
chat shown keeps what was typed before it appeared: its saved draft, if any,
comes first, then the new text.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from parley.core.content import Turn
from parley.core.errors import ParleyError
from parley.core.store.errors import SessionNotFound
from parley.gui.chat.attach import ChatAttachments
from parley.gui.chat.edit import ChatEditor
from parley.gui.chat.organize import Organizer
from parley.gui.chat.regenerate import NO_MODEL as NO_MODEL_TEXT
from parley.gui.chat.regenerate import ChatRegenerate
from parley.gui.chat.run import LAST_SESSION_KEY, ChatRuns
from parley.gui.chat.state import OpenChatState
from parley.gui.composer.drafts import Drafts
from parley.gui.database.save_status import SaveStatus, passing
from parley.gui.header.context_meter import measure
from parley.gui.header.model_picker import cached_choices, model_choices

if TYPE_CHECKING:
    from parley.core.store.outline import Span
    from parley.gui.chat.interfaces import ChatWindow

log = logging.getLogger(__name__)

PAGE = 50  # sessions per space loaded at a time ("Show more" loads the next page)
OPEN_TURNS = 200  # top-level items read when a chat opens; older ones load on scrolling up
LAST_MODEL_KEY = "model.last"
DRAFT_SAVE_MS = 600
OLDER_SETTLE_S = 0.5  # scroll events this soon after showing a chat are not the person's


class ChatController:
    """Drives chats for one :class:`~parley.gui.main_window.MainWindow` (after ``start``)."""

    def __init__(self, window: ChatWindow) -> None:
        self.w = window
        self.store = window.store
        self.hub: Any = None
        self.runner: Any = None
        self.titles: Any = None
        #: The open chat's turns (the one copy; the transcript reads them from it).
        self.state = OpenChatState(window.window())
        self.space_id: str | None = None
        self.sessions: dict[str, Any] = {}
        # (chat, model) -> what its next request sends besides the turns, for the meter.
        self._shapes: dict[tuple[str, str], Any] = {}
        #: The open chat's versions (``parley.core.versions.Versions``; None for a new chat).
        self.versions: Any = None
        #: session id of a version -> its chat's id (the sidebar's row), as far as known.
        self.chat_ids: dict[str, str] = {}
        self.drafts = Drafts(self.store)
        self.new_chat_model: str | None = None
        self.picked_for_new: str | None = None
        self._open_gen = 0
        self._shown_at = 0.0
        self._loading_older = False
        self._older_lock = asyncio.Lock()
        self._draft_timer = QTimer(window.window())
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_SAVE_MS)
        self._draft_timer.timeout.connect(self._save_draft_soon)
        self._loading_draft = False
        self.save_status = SaveStatus(window, window._chat_layout)
        #: True until the first chat is shown: it takes over the text typed before then.
        self.adopting = True
        #: Every turn of the chat opened in part, read once while starting (_measure_all).
        self._all_turns: tuple[tuple[str, int, int, str], asyncio.Future[list[Turn]]] | None \
            = None
        #: Set whenever the providers change (attached, set up): queued messages look again.
        self.providers_changed = asyncio.Event()
        self.runs = ChatRuns(window, self)
        self.attachments = ChatAttachments(window, self)
        self.editor = ChatEditor(window, self)
        self.organizer = Organizer(window, self)
        self.regen = ChatRegenerate(window, self)
        w = window
        w.transcript.follow(self.state)
        self.state.reset.connect(w.transcript.show_reset)
        self.state.grown.connect(w.transcript.show_grown)
        self.state.turn_changed.connect(w.transcript.show_changed)
        w.composer.textChanged.connect(self._composer_changed)
        w.composer.text_refused.connect(self._paste_refused)
        w.composer_bar.send_clicked.connect(self.runs.send_from_composer)
        w.composer_bar.stop_clicked.connect(self.runs.stop)
        w.sidebar.session_activated.connect(self.open_session)
        w.sidebar.new_chat_clicked.connect(self.new_session)
        w.sidebar.load_more_requested.connect(
            lambda space: w.tasks.spawn(self._load_page(space), name="load-more"))
        w.model_picker.model_chosen.connect(self.choose_model)
        w.model_picker.set_describe(self._catalog_name)  # names before the providers load
        # The greeting names the model (a new one picked, or names listed later).
        w.model_picker.model_chosen.connect(lambda _ref: self.update_title())
        w.model_picker.choices_changed.connect(self.update_title)
        heading = getattr(w, "chat_heading", None)
        if heading is not None:  # renamed in place in the header
            heading.renamed.connect(self.organizer.rename_open)
        w.transcript.retryRequested.connect(self.runs.retry)
        w.transcript.versionRequested.connect(self.switch_version)
        # Continue on a stopped reply: the model goes on from what it wrote (like
        # Continue under a reply cut at the length limit), not a fresh answer.
        w.transcript.resumeRequested.connect(lambda _turn_id: self.runs.continue_reply())
        w.transcript.continueRequested.connect(lambda _turn_id: self.runs.continue_reply())
        w.transcript.linkActivated.connect(QDesktopServices.openUrl)
        w.transcript.list_view.verticalScrollBar().valueChanged.connect(self._scrolled)
        w.transcript.startWanted.connect(
            lambda: w.tasks.spawn(self.load_start(), name="first-turns"))
        w.transcript.compactedTurnsWanted.connect(
            lambda summary_id: w.tasks.spawn(self.load_compacted(summary_id),
                                             name="compacted-turns"))

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
        """Show every space and the first page of its sessions."""
        spaces = await self.organizer.load_spaces()
        self.w.sidebar.model.set_spaces(spaces)
        if self.space_id not in self.organizer.spaces:
            self.space_id = self.organizer.default_space_id
        for space in spaces:
            await self._load_page(space.id)
        self.w.sidebar.select(self.chat_row)

    async def _load_page(self, space_id: str) -> None:
        model = self.w.sidebar.model
        offset = model.loaded_count(space_id)
        page = await self.store.list_sessions(space_id=space_id, limit=PAGE + 1, offset=offset,
                                              include_archived=self.w.sidebar.show_archived)
        shown = [s for s in page[:PAGE] if s.id not in self.organizer.deleting]
        for s in shown:
            self.sessions[s.id] = s
        model.add_sessions(space_id, shown, has_more=len(page) > PAGE)
        if any(s.forked_from_turn_id for s in shown):
            self.w.tasks.spawn(self.organizer.describe_forks(shown), name="fork-points")

    async def show_first(self) -> None:
        """Show the first chat at start-up: the one open when Parley closed, or a new
        chat when there is none or Ctrl+N was pressed while starting (then the last
        chat does not take the message box's text: ``parley.gui.composer.early_input`` gives it what
        was typed for it)."""
        # Not when the person opened a chat meanwhile (no longer adopting).
        if (self._new_chat_asked() or not await self.reopen_last()) and self.adopting:
            await self._show_new_chat()

    def _new_chat_asked(self) -> bool:
        early = self.w.early
        return early is not None and early.new_chat_asked

    async def reopen_last(self) -> bool:
        """Open the chat that was open when Parley closed; False when there is none."""
        last = await self.store.get_state(LAST_SESSION_KEY, None)
        if not last:
            return False
        try:
            await self._open(last)
        except SessionNotFound:
            log.info("last session %s is gone", last)
            return False
        self.w.show_chat()
        return True

    def attach(self, hub: Any, runner: Any) -> None:
        """Hand over the providers and the run loop (second step of start-up)."""
        from parley.core.chat.titles import TitleService

        self.hub, self.runner = hub, runner
        self.titles = TitleService(self.store, hub, on_titled=self._titled)
        self.editor.attach(runner)
        self.save_status.attach(runner.saves)
        self.w.model_picker.set_describe(self._catalog_name)
        self.w.model_picker.set_choices(cached_choices(hub))  # no server asked yet
        self.w.model_picker.set_current(self.current_model())
        self.update_meter()
        self.wake_waiting()
        if self.session_id is not None and not self.runs.running(self.session_id):
            self.runs.offer_retry(self.session_id)  # now it can say why, if it knows

    async def enter(self) -> None:
        """Show the chat page (after set-up, or at start) and list the models; show the
        last chat (or a new one) if no chat was shown yet."""
        self.w.show_chat()
        self.wake_waiting()  # set-up done: a message waiting for it goes
        self.w.tasks.spawn(self.refresh_models(), name="models")
        if self.adopting:
            await self.show_first()
        self.w.model_picker.set_current(self.current_model())  # set-up chose one
        self.update_meter()

    def wake_waiting(self) -> None:
        """The providers changed: runs waiting for theirs look again (``ChatRuns``)."""
        changed, self.providers_changed = self.providers_changed, asyncio.Event()
        changed.set()

    # -- models -----------------------------------------------------------
    async def refresh_models(self) -> None:
        """Fill the model picker: the lists kept from last time at once, then what every
        configured provider lists now (their SDKs imported off the GUI thread)."""
        self.w.model_picker.set_choices(cached_choices(self.hub))
        self.w.model_picker.set_choices(await model_choices(self.hub))
        if self.w.model_picker.current != self.current_model():
            # A server with no default model (OPENAI_BASE_URL) has one now: its first listed.
            self.w.model_picker.set_current(self.current_model())
            self.update_meter()
        if self.session_id is None:
            self.update_title()  # the greeting names the model, or why there is none

    def _catalog_name(self, ref: str) -> str | None:
        """The catalog's name for a model the providers have not listed (yet), if it knows
        it (before the providers are loaded: for the built-in providers' models)."""
        from parley.core.providers.catalog import builtin_model

        if self.hub is None:
            info = builtin_model(ref)
            return info.display_name if info is not None and info.display_name else None
        try:
            info = self.hub.model_info(ref)
        except ParleyError:
            return None
        return info.display_name if info.known and info.display_name else None

    def current_model(self) -> str | None:
        """The ``provider:model`` that answers the next message in the open chat.

        A saved chat: its own model. A new chat: the one picked for it, else
        its space's default model, else the last one picked, else the app's default.
        """
        session = self.sessions.get(self.session_id or "")
        if session is not None and session.model:
            return str(session.model)
        if session is None:
            space = self.organizer.spaces.get(self.space_id or "")
            space_model = space.default_model if space is not None else None
            if self.picked_for_new or space_model:
                return str(self.picked_for_new or space_model)
        if self.new_chat_model or self.hub is None:
            return self.new_chat_model
        ref = self.hub.default_model_ref()
        return str(ref) if ref else None

    def no_model_reason(self) -> str:
        """Why no model answers (for a send with none): a server that cannot be reached
        is named with its address and what to do; else "choose a model"."""
        from parley.core.providers.registry import ENV_BASE_URL, env_kind, resolve_base_url

        by_group = {(c.name or c.id): c for c in (self.hub.configs if self.hub else [])}
        for choice in self.w.model_picker.problems:
            config = by_group.get(choice.group)
            if choice.ref or not choice.note.startswith("can't connect") or config is None:
                continue
            url = resolve_base_url(config, getattr(self.hub, "environ", None))
            var = ENV_BASE_URL.get(env_kind(config))
            where = url.value or choice.group
            if url.source == "environment" and var:
                where += f" (from {var})"
            return (f"Parley could not reach {where}, so no model can answer. Check the "
                    "address, and that the server is running (for a local server) or that "
                    "you are online. Your message is kept: send it again once the server "
                    "answers.")
        return NO_MODEL_TEXT

    def model_for(self, sid: str) -> str | None:
        """The model that answers the next message in saved chat ``sid`` (open or not)."""
        session = self.sessions.get(sid)
        if session is not None and session.model:
            return str(session.model)
        if sid == self.session_id:
            return self.current_model()
        ref = self.hub.default_model_ref() if self.hub is not None else None
        return str(ref) if ref else None

    def choose_model(self, ref: str) -> None:
        """Use ``ref`` for the open chat (and as the default of new chats)."""
        self.new_chat_model = ref
        sid = self.session_id
        if sid is not None:
            self.w.tasks.spawn(self._set_session_model(sid, ref), name="set-model")
        else:
            self.picked_for_new = ref
        self.w.tasks.spawn(self.store.set_state(LAST_MODEL_KEY, ref), name="save-model")
        self.update_meter()

    async def _set_session_model(self, sid: str, ref: str) -> None:
        self.sessions[sid] = await self.store.set_session_model(sid, ref)

    def space_changed(self, space_id: str) -> None:
        """A space's defaults changed: a new chat shown in it takes them."""
        if self.session_id is None and self.space_id == space_id:
            self.w.model_picker.set_current(self.current_model())
            self.update_meter()

    # -- opening chats ----------------------------------------------------
    def open_session(self, session_id: str) -> None:
        """Open a chat of the list: the version of it shown last (no-op when it is open)."""
        if session_id not in (self.session_id, self.chat_row):
            self.w.tasks.spawn(self._open_chat(session_id), name="open-session")

    async def _open_chat(self, chat_id: str) -> None:
        try:
            target = await self.store.version_to_open(chat_id)
        except ParleyError as exc:
            self._not_opened(exc)
            return
        await self._open(target)

    def _not_opened(self, error: ParleyError) -> None:
        """A chat could not be opened because the store is away for a while (a PostgreSQL
        server down, sessions.db locked…): said in the bar, the open chat (and what is
        typed in its box) stays as it was, and the list shows it again. Others: raised."""
        if not passing(error):
            raise error
        self.save_status.not_opened(error)
        self.w.sidebar.select(self.chat_row)

    def chat_of(self, session_id: str) -> str:
        """The chat (sidebar row) a session belongs to: itself, or a version's chat."""
        return self.chat_ids.get(session_id, session_id)

    @property
    def chat_row(self) -> str | None:
        """The sidebar row of the open chat (None for a new chat)."""
        return None if self.session_id is None else self.chat_of(self.session_id)

    # -- versions -----------------------------------------------------------
    def _set_versions(self, versions: Any) -> None:
        """Show ‹ n/m › under the open chat's messages that have versions."""
        self.versions = versions
        if versions is not None:
            for sid in versions.members:
                self.chat_ids[sid] = versions.chat_id
        points = versions.points if versions is not None else {}
        self.w.transcript.set_versions({k: (p.index, p.total) for k, p in points.items()})

    async def refresh_versions(self) -> None:
        """Read the open chat's versions again (a reply was written, an edit made one)."""
        sid = self.session_id
        if sid is None:
            return
        versions = await self.store.versions(sid)
        if sid == self.session_id:
            self._set_versions(versions)
            self.w.sidebar.select(self.chat_row)

    def switch_version(self, turn_id: str, step: int) -> bool:
        """Show the version ``step`` away (-1 previous, +1 next) of a message of the open
        chat, with the turns that follow it; False when there is none."""
        point = self.versions.points.get(turn_id) if self.versions is not None else None
        target = point.target(step) if point is not None else None
        if target is None:
            return False
        self.w.tasks.spawn(self._switch(*target), name="switch-version")
        return True

    async def _switch(self, sid: str, turn_id: str) -> None:
        transcript = self.w.transcript
        focus = QApplication.focusWidget()
        had_focus = focus is not None and (focus is transcript or transcript.isAncestorOf(focus))
        typed, before = self.w.composer.text(), self.session_id
        await self._open(sid, at=turn_id)
        if sid != self.session_id:
            return
        if typed and not self.w.composer.text() and before is not None:
            # What is being written goes on with the chat, whichever version is shown.
            self.drafts.typed(before, "")
            self.w.tasks.spawn(self.drafts.save(before), name="draft")
            self.w.composer.set_text(typed)
        if had_focus:
            transcript.list_view.setFocus(Qt.FocusReason.OtherFocusReason)
            transcript.scroll_to_turn(turn_id)

    def open_at(self, session_id: str, turn_id: str | None, highlight: str | None) -> None:
        """Open a chat scrolled to ``turn_id`` with ``highlight`` marked (search results):
        a message of one version only opens that version."""
        self.w.show_chat()
        if turn_id is None:
            self._open_at(session_id, turn_id, highlight)
        else:
            self.w.tasks.spawn(self._locate(session_id, turn_id, highlight), name="open-at")

    async def _locate(self, session_id: str, turn_id: str, highlight: str | None) -> None:
        self._open_at(*await self.store.locate_message(session_id, turn_id), highlight)

    def _open_at(self, session_id: str, turn_id: str | None, highlight: str | None) -> None:
        if session_id == self.session_id and turn_id is not None and self.state.holds(turn_id):
            self.w.transcript.scroll_to_turn(turn_id, highlight)
            return
        if session_id == self.session_id and turn_id is not None:
            self.w.tasks.spawn(self._reveal(session_id, turn_id, highlight), name="open-at")
            return
        self.w.tasks.spawn(self._open(session_id, at=turn_id, highlight=highlight),
                           name="open-at")

    async def _reveal(self, sid: str, turn_id: str, highlight: str | None) -> None:
        """Show a search hit of the open chat that is not loaded: older items up to it
        (all of them), and the compacted range it is in."""
        async with self._older_lock:
            if sid != self.session_id:
                return
            win = await self.store.transcript_window(sid, before=self.state.first_key,
                                                     reveal=turn_id)
            if sid != self.session_id:
                return
            self.state.take(win, older=True)
        self.w.transcript.scroll_to_turn(turn_id, highlight)

    async def _open(self, session_id: str, *, at: str | None = None,
                    highlight: str | None = None) -> None:
        try:
            await self._open_now(session_id, at=at, highlight=highlight)
        except ParleyError as exc:
            self._not_opened(exc)

    async def _open_now(self, session_id: str, *, at: str | None,
                        highlight: str | None) -> None:
        self._open_gen += 1
        gen = self._open_gen
        try:
            await self._stash_draft()
        except ParleyError as exc:  # kept in memory (Drafts), written by a later save
            if not passing(exc):
                raise
            self.save_status.problem(exc)
        session = await self.store.get_session(session_id)
        win = await self.store.transcript_window(session_id, last=OPEN_TURNS)
        if at is not None and all(t.id != at for t in win.turns):
            # a search hit further back, or under a card: every item, and its card's turns
            win = await self.store.transcript_window(session_id, reveal=at)
        draft = await self.drafts.load(session_id)
        versions = await self.store.versions(session_id)
        if gen != self._open_gen:
            return  # another chat was opened meanwhile
        self.sessions[session_id] = session
        self.state.load(session_id, win)
        self.space_id = session.space_id
        self._set_versions(versions)
        if len(versions.members) > 1:  # the version shown is kept for the next time
            self.w.tasks.spawn(self.store.show_version(session_id), name="show-version")
        self.editor.set_editing(None)
        self.show_turns()
        self.runs.offer_retry(session_id)
        self._after_switch(draft)
        if at is not None:
            self.w.transcript.scroll_to_turn(at, highlight)
        await self.store.set_state(LAST_SESSION_KEY, session_id)

    def show_turns(self) -> None:
        """Show the open chat's turns afresh (with a reply still streaming, and the
        replies kept in memory until sessions.db takes them) in the transcript."""
        self.state.keep_unsaved(self.save_status.kept(self.session_id or ""))
        self._shown_at = time.monotonic()
        self.state.show()
        self.save_status.mark_shown(self.session_id)

    async def reload(self) -> None:
        """Read the open chat's turns again (a compaction wrote its summary); the
        composer, the draft and edit mode are left as they are."""
        sid = self.session_id
        if sid is None:
            return
        session = await self.store.get_session(sid)
        win = await self.store.transcript_window(sid, last=max(OPEN_TURNS, len(self.turns) + 1))
        if sid != self.session_id:
            return
        self.sessions[sid] = session
        self.state.load(sid, win)
        self.show_turns()
        self.update_meter()

    def _scrolled(self, value: int) -> None:
        bar = self.w.transcript.list_view.verticalScrollBar()
        if value == bar.minimum() < bar.maximum() and self.older > 0 and \
                not self._loading_older and time.monotonic() - self._shown_at > OLDER_SETTLE_S:
            self._loading_older = True
            self.w.tasks.spawn(self.load_older(), name="older-turns")

    async def load_older(self, *, everything: bool = False) -> int:
        """Load up to :data:`OPEN_TURNS` older top-level items of the open chat (all
        of them with ``everything``); returns how many turns were added."""
        sid = self.session_id
        try:
            async with self._older_lock:
                if sid is None or self.older <= 0 or sid != self.session_id:
                    return 0
                shown = self.w.transcript.model.rows
                first = shown[0].key if shown else None  # stays in view (maybe a card)
                win = await self.store.transcript_window(
                    sid, last=None if everything else OPEN_TURNS, before=self.state.first_key)
                if sid != self.session_id:
                    return 0
                self.state.take(win, older=True)
                if first is not None and not everything:
                    self.w.transcript.scroll_to_turn(first)
                return len(win.turns)
        finally:
            self._loading_older = False

    async def load_start(self) -> None:
        """Home: load every older item of the open chat, then show its first row."""
        sid = self.session_id
        if sid is not None and self.older > 0:
            await self.load_older(everything=True)
        if sid == self.session_id:
            self.w.transcript.go_first()

    async def load_compacted(self, summary_turn_id: str) -> None:
        """A card was opened: load the turns its compaction replaced (they are kept)."""
        sid = self.session_id
        if sid is None:
            return
        win = await self.store.compacted_turns(sid, summary_turn_id)
        if sid != self.session_id or not win.turns:
            return
        self.state.take(win, keep=summary_turn_id)

    async def _show_new_chat(self) -> None:
        self._open_gen += 1
        await self._stash_draft()
        self.state.clear()
        self.picked_for_new = None
        self.editor.set_editing(None)
        self._set_versions(None)
        self.show_turns()
        self._after_switch(await self.drafts.load(None))

    async def show_new_chat(self, space_id: str | None = None) -> None:
        """Show an empty new chat (in ``space_id``, default: the current space)."""
        if space_id is not None:
            self.space_id = space_id
        await self._show_new_chat()

    def _after_switch(self, draft: str) -> None:
        if self.adopting and self.session_id is not None and self._new_chat_asked():
            return  # Ctrl+N pressed while it was read: the new chat takes the box (show_first)
        typed = self.w.composer.text() if self.adopting else ""
        self.adopting = False
        text = f"{draft.rstrip()}\n\n{typed}" if draft.strip() and typed else (typed or draft)
        self._loading_draft = True
        try:
            if text != self.w.composer.text():
                self.w.composer.set_text(text)
        finally:
            self._loading_draft = False
        if typed:  # typed while starting: now this chat's draft
            self.drafts.typed(self.session_id, text)
            self._draft_timer.start()
        self.attachments.refresh()  # the tray shows this chat's pending files
        busy = self.runs.running(self.session_id)
        self.w.composer_bar.set_busy(busy)
        self.w.transcript.set_busy(busy)
        self.w.sidebar.select(self.chat_row)
        status = self.w.statusBar()
        if hasattr(status, "set_chat"):  # the window's WrappingStatusBar
            status.set_chat(self.chat_row)  # another chat's message goes (not a version's)
        self.runs.retry_notice.refresh()  # this chat's retry wait, if any
        self.w.model_picker.set_current(self.current_model())
        self.update_title()
        self.update_meter()
        self.w.focus_composer_unless_moved()

    async def create_session(self, model: str | None = None) -> str:
        """Create a chat's session row in the current space (a new chat's first message
        is being sent) and list it; returns its id."""
        session = await self.store.create_session(space_id=self.space_id, model=model)
        self.sessions[session.id] = session
        self.w.sidebar.model.upsert(session)
        return str(session.id)

    def keep_draft(self) -> None:
        """The message box's text is the open chat's draft (written in a moment)."""
        text = self.w.composer.text()
        if text:
            self.drafts.typed(self.session_id, text)
            self._draft_timer.start()

    def new_session(self, space_id: str | None = None) -> None:
        """Start a new chat (its session is created when the first message is sent)."""
        self.w.show_chat()
        self.w.tasks.spawn(self.show_new_chat(space_id or None), name="new-chat")

    def step_session(self, delta: int) -> None:
        """Open the chat ``delta`` rows below (negative: above) in the sidebar, wrapping."""
        ids = self.w.sidebar.model.session_ids()
        if not ids:
            return
        if self.chat_row in ids:
            i = (ids.index(self.chat_row) + delta) % len(ids)
        else:
            i = 0 if delta > 0 else len(ids) - 1
        self.open_session(ids[i])

    def goto_session(self, n: int) -> None:
        """Open the ``n``-th chat of the sidebar (0-based), if there is one."""
        ids = self.w.sidebar.model.session_ids()
        if 0 <= n < len(ids):
            self.open_session(ids[n])

    async def leave(self, sid: str, ids: list[str]) -> None:
        """The open chat ``sid`` left the list: open its neighbour in ``ids`` (the
        sidebar's order before), or a new chat."""
        if sid != self.chat_row:
            return
        self.session_id = None  # nothing to stash: the chat is gone from view
        rest = [i for i in ids if i != sid and self.w.sidebar.model.has(i)]
        if rest:
            i = min(ids.index(sid), len(rest) - 1) if sid in ids else 0
            await self._open_chat(rest[i])
        else:
            await self._show_new_chat()

    # -- sessions known to the window -----------------------------------------
    def remember_session(self, session: Any) -> None:
        """A session changed in the store: update the sidebar row and the window title."""
        self.sessions[session.id] = session
        hidden = session.archived and not self.w.sidebar.show_archived
        if getattr(session, "is_version", False) and session.parent_exists:
            pass  # a version shows on its chat's messages, not as a row
        elif hidden or session.id in self.organizer.deleting:
            self.w.sidebar.model.remove(session.id)
        else:
            self.w.sidebar.model.upsert(session)
            if session.forked_from_turn_id:
                self.w.tasks.spawn(self.organizer.describe_forks([session]), name="fork-point")
        if session.id in (self.session_id, self.chat_row):  # the chat open, or its row
            self.space_id = session.space_id
            self.w.sidebar.select(self.chat_row)
            self.update_title()

    async def show_fork(self, fork: Any) -> None:
        """A fork was made: list it under its parent (a version: its chat's row stays)
        and open it."""
        if getattr(fork, "is_version", False) and fork.parent_session_id:
            self.chat_ids[fork.id] = self.chat_of(fork.parent_session_id)
        self.remember_session(fork)
        await self._open(fork.id)

    def _titled(self, sid: str, title: str) -> None:
        session = self.sessions.get(sid)
        if session is not None:
            self.sessions[sid] = replace(session, title=title, title_source="auto")
        self.w.sidebar.model.set_title(sid, title)
        self.update_title()

    # -- drafts -----------------------------------------------------------
    def _composer_changed(self) -> None:
        if self._loading_draft or self.adopting:  # adopting: the first chat shown takes it
            return
        self.runs.activity(self.session_id)
        self.drafts.typed(self.session_id, self.w.composer.text())
        self._draft_timer.start()

    def _paste_refused(self, chars: int) -> None:
        """A paste was refused: the message would be longer than any model can read."""
        from parley.core.context.text_limits import TextTooLong, max_text_chars

        error = TextTooLong("With this paste, the message", chars, max_text_chars(),
                            "The paste was not taken (nor kept as a draft); attach the text "
                            "as a file instead, or paste the part you need.")
        self.w.statusBar().showMessage(error.message, 15_000)

    def _save_draft_soon(self) -> None:
        self.w.tasks.spawn(self._stash_draft(), name="save-draft")

    async def stash_draft(self) -> None:
        """Persist the open chat's draft now (:meth:`Drafts.save`)."""
        await self._stash_draft()

    async def _stash_draft(self) -> None:
        """Persist the open chat's draft now."""
        self._draft_timer.stop()
        await self.drafts.save(self.session_id)

    # -- shorthands (scripts and benchmarks drive the controller) ---------------
    def send_from_composer(self) -> bool:
        """:meth:`ChatRuns.send_from_composer`."""
        return self.runs.send_from_composer()

    def retry(self) -> bool:
        """:meth:`ChatRuns.retry`."""
        return self.runs.retry()

    def stop(self) -> bool:
        """:meth:`ChatRuns.stop`."""
        return self.runs.stop()

    # -- meter and title --------------------------------------------------
    def update_meter(self) -> None:
        if self.older > 0 and self.session_id is not None:
            self.w.tasks.spawn(self._measure_all(self.session_id), name="measure")
            return
        self._show_meter(self.turns)

    async def _measure_all(self, sid: str) -> None:
        """The meter of a chat opened in part counts every turn; reading and counting
        them (~0.3 s for 10,000 turns) happen off the GUI thread. While the window
        starts (the meter is asked again when the providers load) the turns are read
        once: the same chat with the same turns shown reuses them."""
        key = (sid, self.older, len(self.turns), self.turns[-1].id if self.turns else "")
        kept = self._all_turns
        if self.w.ready:
            self._all_turns = None
            turns = await self.store.get_turns(sid)
        elif kept is not None and kept[0] == key:
            turns = await asyncio.shield(kept[1])  # read (or being read) already
        else:
            reading = asyncio.ensure_future(self.store.get_turns(sid))
            self._all_turns = (key, reading)
            turns = await asyncio.shield(reading)
        system = self._system_prompt(sid)
        figures = await asyncio.to_thread(measure, turns, system, self.current_model(), self.hub,
                                          self.next_request_shape(sid))
        if sid == self.session_id:
            self.w.context_meter.set_usage(*figures)
            self.show_cache_expiry()

    def _show_meter(self, turns: Sequence[Turn]) -> None:
        system = self._system_prompt(self.session_id)
        self.w.context_meter.set_usage(*measure(turns, system, self.current_model(), self.hub,
                                                self.next_request_shape(self.session_id)))
        self.show_cache_expiry()

    def next_request_shape(self, sid: str | None) -> Any:
        """The chat's last request as the run loop sent it, else the system prompt and
        tools its next request will send as far as known (both count in the meter), or
        None; a missing one is worked out in the background (:meth:`_learn_shape`)."""
        sent = getattr(self.runner, "sent", None)
        found = sent.get(sid or "") if isinstance(sent, dict) else None
        if found is not None or sid is None:
            return found
        model = self.current_model()
        key = (sid, model or "")
        if key not in self._shapes and getattr(self.runner, "tools", None) is not None:
            self._shapes[key] = None  # asked once
            self.w.tasks.spawn(self._learn_shape(sid, model), name="meter-shape")
        return self._shapes.get(key)

    async def _learn_shape(self, sid: str, model: str | None) -> None:
        """Find the frozen system prompt and the tools a chat's next request sends (when
        no request was sent since Parley started), then show the meter again."""
        from parley.core.errors import ParleyError
        from parley.core.providers.base import ChatRequest

        tools = self.runner.tools
        session = self.sessions.get(sid)
        if session is None or model is None or self.hub is None:
            return
        try:
            kind = self.hub.config(model.split(":", 1)[0]).kind
            proven = self.hub.model_info(model).tools is True  # the server said so
            on = await tools.enabled(session.space_id, kind, model, proven=proven)
            system = await tools.prompts.frozen(sid) or session.system_prompt
        except ParleyError:
            return
        request = ChatRequest("", [], system, tools=tools.specs() if on else [])
        self._shapes[(sid, model)] = _Shape(request)
        if sid == self.session_id:
            self.update_meter()

    def _system_prompt(self, sid: str | None) -> str | None:
        """The system prompt a chat's next request sends: its own, or for a new chat not
        saved yet, its space's (the store gives it to the chat when it is created)."""
        session = self.sessions.get(sid or "")
        if session is not None:
            return session.system_prompt
        space = self.organizer.spaces.get(self.space_id or "")
        return space.system_prompt if space is not None else None

    def show_cache_expiry(self) -> None:
        """Show when the open chat's prompt cache expires (from the cache timer)."""
        timer = getattr(self.w, "cache_timer", None)
        sid = self.session_id
        if timer is None or sid is None:
            self.w.context_meter.set_cache_expiry(None)
            return
        self.w.context_meter.set_cache_expiry(timer.expiry(sid), timer.armed(sid))

    def update_title(self) -> None:
        """The window title and the header's heading (title, space) of the open chat."""
        session = self.sessions.get(self.chat_row or "") or self.sessions.get(self.session_id or "")
        title = session.title if session is not None and session.title else "New chat"
        self.w.setWindowTitle(f"{title} — Parley")
        heading = getattr(self.w, "chat_heading", None)
        if heading is not None:
            space = self.organizer.spaces.get(
                (session.space_id if session is not None else None) or self.space_id or "")
            heading.set_chat(title, getattr(space, "name", None), editable=session is not None)
        greeting = getattr(self.w, "greeting", None)
        if greeting is not None:  # shown while the conversation is empty (a new chat)
            space = self.organizer.spaces.get(self.space_id or "")
            model = self.current_model()
            greeting.set_chat(getattr(space, "name", None),
                              self.w.model_picker.label_of(model) if model else None,
                              problem=None if model else self.no_model_reason())

    # -- shutdown ---------------------------------------------------------
    async def shutdown(self) -> None:
        """Stop every run (partials are kept as aborted turns), make a pending delete
        final, save draft and session."""
        runs = list(self.runs.active.items())
        for sid, task in runs:
            if self.runner is None or self.runs.waiting(sid):
                task.cancel()  # waiting for its provider: the saved message stays, not sent
            else:
                self.runner.cancel(sid)
        if runs:
            await asyncio.wait([t for _s, t in runs], timeout=5)
        if self.titles is not None:
            await self.titles.aclose()
        self.editor.detach()
        await self.organizer.undo_flush()
        if self.runner is not None:
            await self.runner.saves.aclose()  # what is still kept was asked about (quit)
        await self._stash_draft()
        if self.session_id:
            await self.store.set_state(LAST_SESSION_KEY, self.session_id)


class _Shape:
    """A request's system prompt and tools, for
    :func:`parley.gui.header.context_meter.measure` (which reads ``request``; it answered
    no reply, so it has no ``stored_turns``)."""

    stored_turns: tuple[Any, ...] = ()

    def __init__(self, request: Any) -> None:
        self.request = request
        self.model_ref = None
