"""What a person does with chats: open, switch, send, stop, retry, edit, delete.

The controller connects the window's widgets to the core: the store
(``AsyncStore``), the providers (``ProviderHub``) and the run loop
(``ChatRunner``). It keeps the little state the screen needs: the open
session, drafts per session (saved in ``app_state`` as ``draft:<id>``, so
they survive a restart), the growing reply of each running session, and
which message is being edited.

A "new chat" has no session row until its first message is sent, so Ctrl+N
never leaves empty chats behind.

Start-up comes in two steps so the chats show before the provider SDKs are
imported (they take seconds on a cold start): the controller works with the
store alone first (sidebar, last chat, drafts), and :meth:`attach` hands it
the providers and the run loop when they are ready; until then Enter keeps
the message in the composer.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QDesktopServices

from core.content import TextBlock, Turn, now_ms
from core.errors import ParleyError
from core.store.errors import SessionNotFound
from gui import dialogs
from gui.context_meter import measure
from gui.drafts import Drafts
from gui.model_picker import ModelChoice, model_label

if TYPE_CHECKING:
    from core.run import RunEvent
    from gui.main_window import MainWindow

log = logging.getLogger(__name__)

PAGE = 50  # sessions per space loaded at a time ("Show more" loads the next page)
LAST_SESSION_KEY = "session.last"
LAST_MODEL_KEY = "model.last"
DRAFT_SAVE_MS = 600


class ChatController:
    """Drives chats for one :class:`~gui.main_window.MainWindow` (after ``start``)."""

    def __init__(self, window: MainWindow) -> None:
        self.w = window
        self.store = window.store
        self.hub: Any = None
        self.runner: Any = None
        self.session_id: str | None = None
        self.space_id: str | None = None
        self.sessions: dict[str, Any] = {}
        self.turns: list[Turn] = []
        self.partial: dict[str, Turn] = {}
        self.drafts = Drafts(self.store)
        self.new_chat_model: str | None = None
        self.editing: Turn | None = None
        self._runs: dict[str, asyncio.Task[Any]] = {}
        self._open_gen = 0
        self._draft_timer = QTimer(window)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_SAVE_MS)
        self._draft_timer.timeout.connect(self._save_draft_soon)
        self._loading_draft = False
        w = window
        w.composer.textChanged.connect(self._composer_changed)
        w.composer_bar.send_clicked.connect(self.send_from_composer)
        w.composer_bar.stop_clicked.connect(self.stop)
        w.sidebar.session_activated.connect(self.open_session)
        w.sidebar.new_chat_clicked.connect(self.new_session)
        w.sidebar.rename_requested.connect(self.rename_session)
        w.sidebar.delete_requested.connect(self.delete_session)
        w.sidebar.load_more_requested.connect(
            lambda space: w.tasks.spawn(self._load_page(space), name="load-more"))
        w.model_picker.model_chosen.connect(self.choose_model)
        w.transcript.retryRequested.connect(self.retry)
        w.transcript.resumeRequested.connect(lambda _turn_id: self.retry())
        w.transcript.editRequested.connect(self.edit_message)
        w.transcript.forkRequested.connect(self.fork_at)
        w.transcript.linkActivated.connect(QDesktopServices.openUrl)

    # -- start ------------------------------------------------------------
    async def load_sidebar(self) -> None:
        """Show every space and the first page of its sessions."""
        spaces = await self.store.list_spaces()
        self.w.sidebar.model.set_spaces(spaces)
        default = await self.store.default_space()
        self.space_id = self.space_id or default.id
        for space in spaces:
            await self._load_page(space.id)
        self.w.sidebar.select(self.session_id)

    async def _load_page(self, space_id: str) -> None:
        model = self.w.sidebar.model
        offset = model.loaded_count(space_id)
        page = await self.store.list_sessions(space_id=space_id, limit=PAGE + 1, offset=offset)
        for s in page[:PAGE]:
            self.sessions[s.id] = s
        model.add_sessions(space_id, page[:PAGE], has_more=len(page) > PAGE)

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
        self.hub, self.runner = hub, runner
        self.w.model_picker.set_current(self.current_model())
        self._update_meter()

    async def enter(self) -> None:
        """Show the chat page (after set-up, or at start when no chat was open) and
        list the models."""
        self.w.show_chat()
        self.w.tasks.spawn(self.refresh_models(), name="models")
        if self.session_id is None and not await self.reopen_last():
            await self._show_new_chat()

    # -- models -----------------------------------------------------------
    async def refresh_models(self) -> None:
        """Fill the model picker from every configured provider's model list."""
        choices: list[ModelChoice] = []
        for config in self.hub.configs:
            try:
                models = await self.hub.list_models(config.id)
            except ParleyError as exc:
                log.info("cannot list models of %s: %s", config.id, exc)
                models = []
            group = getattr(config, "name", None) or config.id
            choices += [ModelChoice(f"{config.id}:{m.id}", model_label(m), group) for m in models]
        self.w.model_picker.set_choices(choices)

    def current_model(self) -> str | None:
        """The ``provider:model`` that answers the next message in the open chat."""
        session = self.sessions.get(self.session_id or "")
        if session is not None and session.model:
            return str(session.model)
        if self.new_chat_model or self.hub is None:
            return self.new_chat_model
        ref = self.hub.default_model_ref()
        return str(ref) if ref else None

    def choose_model(self, ref: str) -> None:
        """Use ``ref`` for the open chat (and as the default of new chats)."""
        self.new_chat_model = ref
        sid = self.session_id
        if sid is not None:
            self.w.tasks.spawn(self._set_session_model(sid, ref), name="set-model")
        self.w.tasks.spawn(self.store.set_state(LAST_MODEL_KEY, ref), name="save-model")
        self._update_meter()

    async def _set_session_model(self, sid: str, ref: str) -> None:
        self.sessions[sid] = await self.store.set_session_model(sid, ref)

    # -- opening chats ----------------------------------------------------
    def open_session(self, session_id: str) -> None:
        """Open a chat (no-op when it is already open)."""
        if session_id != self.session_id:
            self.w.tasks.spawn(self._open(session_id), name="open-session")

    async def _open(self, session_id: str) -> None:
        self._open_gen += 1
        gen = self._open_gen
        await self._stash_draft()
        session = await self.store.get_session(session_id)
        turns = await self.store.get_turns(session_id)
        draft = await self.drafts.load(session_id)
        if gen != self._open_gen:
            return  # another chat was opened meanwhile
        self.sessions[session_id] = session
        self.session_id = session_id
        self.turns = turns
        self._set_editing(None)
        shown = list(turns)
        running = self.partial.get(session_id)
        if running is not None:
            shown = [t for t in shown if t.id != running.id] + [running]
        self.w.transcript.set_turns(shown)
        self._after_switch(draft)
        await self.store.set_state(LAST_SESSION_KEY, session_id)

    async def _show_new_chat(self) -> None:
        self._open_gen += 1
        await self._stash_draft()
        self.session_id = None
        self.turns = []
        self._set_editing(None)
        self.w.transcript.set_turns([])
        self._after_switch(await self.drafts.load(None))

    def _after_switch(self, draft: str) -> None:
        self._loading_draft = True
        try:
            self.w.composer.set_text(draft)
        finally:
            self._loading_draft = False
        self.w.composer_bar.set_busy(self._running(self.session_id))
        self.w.sidebar.select(self.session_id)
        self.w.model_picker.set_current(self.current_model())
        self._update_title()
        self._update_meter()
        self.w.composer.setFocus()

    def new_session(self) -> None:
        """Start a new chat (its session is created when the first message is sent)."""
        self.w.show_chat()
        self.w.tasks.spawn(self._show_new_chat(), name="new-chat")

    def step_session(self, delta: int) -> None:
        """Open the chat ``delta`` rows below (negative: above) in the sidebar, wrapping."""
        ids = self.w.sidebar.model.session_ids()
        if not ids:
            return
        if self.session_id in ids:
            i = (ids.index(self.session_id) + delta) % len(ids)
        else:
            i = 0 if delta > 0 else len(ids) - 1
        self.open_session(ids[i])

    def goto_session(self, n: int) -> None:
        """Open the ``n``-th chat of the sidebar (0-based), if there is one."""
        ids = self.w.sidebar.model.session_ids()
        if 0 <= n < len(ids):
            self.open_session(ids[n])

    # -- rename / delete --------------------------------------------------
    def rename_session(self, session_id: str | None) -> None:
        """Ask for a new title for a chat (default: the open one)."""
        sid = session_id or self.session_id
        if sid is None:
            return
        old = self.sessions[sid].title if sid in self.sessions else ""
        title = dialogs.ask_text(self.w, "Rename chat", "Title:", old or "")
        if title:
            self.w.tasks.spawn(self._rename(sid, title), name="rename")

    async def _rename(self, sid: str, title: str) -> None:
        self.sessions[sid] = await self.store.rename_session(sid, title)
        self.w.sidebar.model.set_title(sid, title)
        self._update_title()

    def delete_session(self, session_id: str | None) -> None:
        """Delete a chat (default: the open one) after asking."""
        sid = session_id or self.session_id
        if sid is None:
            return
        title = (self.sessions[sid].title if sid in self.sessions else None) or "this chat"
        if dialogs.confirm(self.w, "Delete chat",
                           f"Delete “{title}”? Its messages will be gone for good.",
                           action="Delete", destructive=True):
            self.w.tasks.spawn(self._delete(sid), name="delete")

    async def _delete(self, sid: str) -> None:
        if self.runner is not None and self.runner.cancel(sid) and sid in self._runs:
            await asyncio.wait([self._runs[sid]], timeout=5)
        ids = self.w.sidebar.model.session_ids()
        await self.store.delete_session(sid)
        await self.drafts.discard(sid)
        self.sessions.pop(sid, None)
        self.w.sidebar.model.remove(sid)
        if sid == self.session_id:
            self.session_id = None  # nothing to stash: the chat is gone
            rest = [i for i in ids if i != sid]
            if rest:
                i = min(ids.index(sid), len(rest) - 1)
                await self._open(rest[i])
            else:
                await self._show_new_chat()

    # -- drafts -----------------------------------------------------------
    def _composer_changed(self) -> None:
        if self._loading_draft:
            return
        self.drafts.typed(self.session_id, self.w.composer.text())
        self._draft_timer.start()

    def _save_draft_soon(self) -> None:
        self.w.tasks.spawn(self._stash_draft(), name="save-draft")

    async def _stash_draft(self) -> None:
        """Persist the open chat's draft now."""
        self._draft_timer.stop()
        await self.drafts.save(self.session_id)

    # -- sending ----------------------------------------------------------
    def _running(self, sid: str | None) -> bool:
        return sid is not None and self.runner is not None and bool(self.runner.is_running(sid))

    def send_from_composer(self) -> bool:
        """Send the composer's text (Enter). Always consumes the key."""
        text = self.w.composer.text()
        if not text.strip() or self.runner is None or self._running(self.session_id):
            return True  # keep the text: nothing to send, or not ready / busy yet
        model = self.current_model()
        if model is None:
            self.w.show_problem(ParleyError("Choose a model first (the menu at the top)."))
            return True
        editing, self.editing = self.editing, None
        self._set_editing(None)
        self.w.composer.clear()
        self.drafts.typed(self.session_id, "")
        self.w.tasks.spawn(self._send(text, model, editing), name="send")
        return True

    async def _send(self, text: str, model: str, editing: Turn | None) -> None:
        try:
            sid = await self._session_for_send(model)
            if editing is not None:
                await self._replace_last(sid, editing, text)
        except ParleyError:
            self._give_back(text)
            raise
        if editing is None:
            await self._run(sid, "send", [TextBlock(text)], model, text)
        else:
            await self._run(sid, "retry", None, model, None)

    async def _session_for_send(self, model: str) -> str:
        """The open chat's id; a new chat gets its session row now."""
        sid = self.session_id
        if sid is not None:
            await self.drafts.discard(sid)
            return sid
        session = await self.store.create_session(space_id=self.space_id, model=model)
        self.sessions[session.id] = session
        self.session_id = session.id
        await self.drafts.discard(None)
        await self.store.set_state(LAST_SESSION_KEY, session.id)
        self.w.sidebar.model.upsert(session)
        self.w.sidebar.select(session.id)
        return str(session.id)

    async def _replace_last(self, sid: str, editing: Turn, text: str) -> None:
        """Edit in place: the user turn keeps its id with the new text; what followed goes."""
        edited = editing.with_blocks([TextBlock(text)])
        await self.store.upsert_turn(sid, edited)
        await self.store.delete_turns_after(sid, edited.id)
        cut = next((i for i, t in enumerate(self.turns) if t.id == edited.id), len(self.turns))
        self.turns = [*self.turns[:cut], edited]
        self.w.transcript.set_turns(self.turns)

    def _give_back(self, text: str) -> None:
        """Nothing was sent: put the text back in an empty composer so no word is lost."""
        if not self.w.composer.text():
            self.w.composer.set_text(text)

    def retry(self) -> bool:
        """Send the open chat's history again (after an error or a stopped reply)."""
        sid = self.session_id
        model = self.current_model()
        if sid is None or model is None or self._running(sid) or not self.turns:
            return False
        self.w.tasks.spawn(self._run(sid, "retry", None, model, None), name="retry")
        return True

    async def _run(self, sid: str, how: str, blocks: list[Any] | None, model: str,
                   text: str | None) -> None:
        self._runs[sid] = asyncio.current_task()  # type: ignore[assignment]
        self.w.transcript.clear_error()
        if sid == self.session_id:
            self.w.composer_bar.set_busy(True)
        self.w.sidebar.model.set_running(sid, True)
        started = False

        def on_event(ev: RunEvent) -> None:
            nonlocal started
            started = True
            self._on_event(ev)

        try:
            if how == "send":
                await self.runner.send(sid, blocks or [], model_ref=model, on_event=on_event)
            else:
                await self.runner.retry(sid, model_ref=model, on_event=on_event)
        except ParleyError:
            if text and not started and sid == self.session_id:
                self._give_back(text)
            raise
        finally:
            self._runs.pop(sid, None)
            self.partial.pop(sid, None)
            self.w.sidebar.model.set_running(sid, False)
            if sid == self.session_id:
                self.w.composer_bar.set_busy(False)

    def _on_event(self, ev: RunEvent) -> None:
        from core.run import (
            ReplyUpdated,
            RunCancelled,
            RunFailed,
            RunFinished,
            RunStarted,
            SessionTitled,
        )

        sid = ev.session_id
        current = sid == self.session_id
        if isinstance(ev, RunStarted):
            if ev.user_turn is not None:
                self._remember(sid, ev.user_turn)
            self._touch(sid)
        elif isinstance(ev, ReplyUpdated):
            self.partial[sid] = ev.turn
            if current:
                self.w.transcript.upsert_turn(ev.turn)
        elif isinstance(ev, RunFinished):
            self.partial.pop(sid, None)
            self._remember(sid, ev.turn)
            self._touch(sid)
            if current:
                self._update_meter()
        elif isinstance(ev, RunFailed | RunCancelled):
            self.partial.pop(sid, None)
            if ev.partial is not None:
                self._remember(sid, ev.partial)
            if current and isinstance(ev, RunFailed):
                self.w.transcript.show_error(ev.error.message)
        elif isinstance(ev, SessionTitled):
            if sid in self.sessions:
                self.sessions[sid] = replace(self.sessions[sid], title=ev.title)
            self.w.sidebar.model.set_title(sid, ev.title)
            self._update_title()

    def _remember(self, sid: str, turn: Turn) -> None:
        """Show a saved turn (new or updated) in the open chat's transcript."""
        if sid != self.session_id:
            return
        for i, t in enumerate(self.turns):
            if t.id == turn.id:
                self.turns[i] = turn
                break
        else:
            self.turns.append(turn)
        self.w.transcript.upsert_turn(turn)

    def _touch(self, sid: str) -> None:
        """Move a chat to the top of its space (it just changed)."""
        session = self.sessions.get(sid)
        if session is not None:
            self.sessions[sid] = replace(session, updated_at=now_ms())
            self.w.sidebar.model.upsert(self.sessions[sid])
            if sid == self.session_id:
                self.w.sidebar.select(sid)

    def stop(self) -> bool:
        """Stop the open chat's reply (Esc); else leave edit mode. False if nothing to do."""
        sid = self.session_id
        if sid is not None and self.runner is not None and self.runner.cancel(sid):
            return True
        if self.editing is not None:
            self._set_editing(None)
            self.w.composer.clear()
            return True
        return False

    # -- editing the last message -----------------------------------------
    def edit_last(self) -> bool:
        """Up in an empty composer: bring back the last user message to edit and resend."""
        if self.w.composer.text() or self._running(self.session_id):
            return False
        last = next((t for t in reversed(self.turns) if t.role == "user" and t.text()), None)
        if last is None:
            return False
        self._set_editing(last)
        self.w.composer.set_text(last.text())
        return True

    def edit_message(self, turn_id: str) -> None:
        """"Edit message" on a user message: only the last one is edited in place."""
        last = next((t for t in reversed(self.turns) if t.role == "user"), None)
        if last is not None and last.id == turn_id and not self._running(self.session_id):
            self.w.composer.clear()
            self.edit_last()

    def fork_at(self, turn_id: str) -> None:
        """Fork the open chat at ``turn_id`` and open the fork."""
        if self.session_id is not None:
            self.w.tasks.spawn(self._fork(self.session_id, turn_id), name="fork")

    async def _fork(self, sid: str, turn_id: str) -> None:
        fork = await self.store.fork(sid, turn_id)
        self.sessions[fork.id] = fork
        self.w.sidebar.model.upsert(fork)
        await self._open(fork.id)

    def _set_editing(self, turn: Turn | None) -> None:
        self.editing = turn
        self.w.composer_bar.set_editing(turn is not None)

    # -- meter and title --------------------------------------------------
    def _update_meter(self) -> None:
        session = self.sessions.get(self.session_id or "")
        system = session.system_prompt if session is not None else None
        self.w.context_meter.set_usage(*measure(self.turns, system, self.current_model(),
                                                self.hub))

    def _update_title(self) -> None:
        session = self.sessions.get(self.session_id or "")
        title = session.title if session is not None and session.title else "New chat"
        self.w.setWindowTitle(f"{title} — Parley")

    # -- shutdown ---------------------------------------------------------
    async def shutdown(self) -> None:
        """Stop every run (partials are kept as aborted turns), save draft and session."""
        runs = list(self._runs.items())
        for sid, _task in runs:
            self.runner.cancel(sid)  # runs exist only once the runner is attached
        if runs:
            await asyncio.wait([t for _s, t in runs], timeout=5)
        await self._stash_draft()
        if self.session_id:
            await self.store.set_state(LAST_SESSION_KEY, self.session_id)
