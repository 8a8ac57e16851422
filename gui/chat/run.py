"""Sending and runs: what happens between Enter and the saved reply.

:class:`ChatRuns` sends the composer's text (or an edit, through
:class:`parley.gui.chat.edit.ChatEditor`), runs ``ChatRunner.send`` / ``retry`` and
shows their events: the user's turn, the reply growing, the saved reply, an
inline error, the placeholder title. After a chat's first reply it asks
``parley.core.chat.titles.TitleService`` for a title in the background. It keeps no
state of its own beyond the running tasks; the open chat is the controller's.

A message sent while Parley is still starting is never refused: its user turn
is saved at once (the durability rule: saved before any request), the chat
shows it with a quiet "connecting…", and it is sent, once, as soon as its
provider is ready (``ProviderHub.prepare``: its SDK imported off the GUI
thread). Retry, Resume and Regenerate wait the same way. Esc takes such a
message back (its turn deleted, its text back in the box). A message with
files, or an edit, waits in the box instead, and is sent once the provider
is ready (the files are checked against that model's limits then).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer

from parley.core.content import Block, TextBlock, Turn, new_id, now_ms
from parley.core.context.text_limits import check_blocks
from parley.core.errors import ParleyError
from parley.gui.chat.attach import Taken
from parley.gui.chat.regenerate import ANSWER_KEPT_HINT
from parley.gui.transcript.specs import CONTINUE_MESSAGE

if TYPE_CHECKING:
    from parley.core.chat.regenerate import ReplySetAside
    from parley.core.chat.run import RunEvent
    from parley.gui.chat.interfaces import ChatWindow, OpenChat

LAST_SESSION_KEY = "session.last"
STILL_REPLYING = ("A reply is still coming: press Esc to stop it, or wait — your message "
                  "stays here.")
COMPACTING = ("This chat is being compacted: your message stays here; send it when that is "
              "done.")
#: A message whose save takes longer than this (another program holds the file
#: locked) is marked "Saving…" under it (ms).
SAVING_MARK_MS = 300
WAITING = ("Your message before this one is still waiting to be sent: this one stays here; "
           "send it once the reply has started.")
CONNECTING = "Connecting to {name}…"
#: "Connecting to …" is said once a message has waited this long (ms): a provider
#: ready a moment later (or a first run, with no provider to connect to) says nothing.
CONNECTING_AFTER_MS = 250
#: Seconds between two tries of a message waiting for another program's lock.
LOCK_RETRY_S = 1.0
#: The set-up page's note when a message was typed while reading chats before set-up.
KEPT_FOR_SETUP = ("Your message is kept in the chat's box: set up a provider here, then send "
                  "it.")
CALLED_OFF = ("Not sent: your message is kept in the chat. Retry sends it when you want.")
#: Under a fork made at one's own message (nothing failed: it was never sent from here).
FORKED_AT_MESSAGE = "This fork ends with your message. Send it to get a new answer here."
EMPTY_EDIT = ("An edited message cannot be empty: type its new text, or press Esc to "
              "leave the edit (the message stays as it was).")
IMPORTED_AT_MESSAGE = ("This chat was imported and ends with your message. Send it to get an "
                       "answer here.")


class ChatRuns:
    """Runs of one window's chats (see the module docstring)."""

    def __init__(self, window: ChatWindow, chat: OpenChat) -> None:
        self.w = window
        self.chat = chat
        self._runs: dict[str, asyncio.Task[Any]] = {}
        self._doing: dict[str, tuple[str, str]] = {}  # sid -> (how, model) of its run
        self._lock_waits: set[str] = set()  # chats whose sent message waits for a lock
        self._new_chat_wait: asyncio.Task[Any] | None = None  # a new chat's row waits for one
        #: sid -> the model Retry / Resume asks: a failed or stopped regeneration's own
        #: (Retry answers what was asked of that model, not the chat's).
        self._retry_with: dict[str, str] = {}
        self._saving: set[str] = set()  # ids of messages shown but not saved yet
        #: Sessions whose run waits for its provider ("connecting…"); None: a new chat
        #: whose message (with files, or an edit) waits in the box (:meth:`_send_when_ready`).
        self._waiting: set[str | None] = set()
        #: The message with files (or the edit) waiting in the box for its provider.
        self._held: asyncio.Task[Any] | None = None
        #: Sessions whose waiting message Esc takes back (:meth:`stop`).
        self._taking_back: set[str] = set()
        #: sid -> the model the waiting run of the session is for (None: not known yet).
        self._connecting_to: dict[str | None, str | None] = {}
        from parley.gui.notices.retry_notice import RetryBar, RetryNotice

        bar = RetryBar(window.window())
        layout = window._chat_layout
        layout.insertWidget(max(0, layout.count() - 1), bar)  # just above the composer
        #: "Rate limited — retrying in 12 s" with Cancel (stops the run, like Esc).
        self.retry_notice = RetryNotice(bar, lambda: self.chat.session_id)
        bar.cancel_clicked.connect(self.stop)

    @property
    def active(self) -> dict[str, asyncio.Task[Any]]:
        """{session id: task} of the runs under way."""
        return self._runs

    def lock_waiting(self) -> list[str]:
        """The chats whose sent message waits for another program's lock (not saved)."""
        return list(self._lock_waits)

    def running(self, sid: str | None) -> bool:
        """True while a run (also one waiting for its provider) or a compaction holds
        the session."""
        if sid is None:
            return False
        if sid in self._runs:
            return True
        runner = self.chat.runner
        return runner is not None and bool(runner.is_running(sid))

    def waiting(self, sid: str | None) -> bool:
        """True while the session's run waits for its provider ("connecting…")."""
        return sid in self._waiting

    def waiting_messages(self) -> list[str]:
        """The chats whose sent message waits for its provider (saved, not sent yet)."""
        return [sid for sid in self._waiting
                if sid is not None and self._doing.get(sid, ("", ""))[0] == "send"]

    def activity(self, sid: str | None) -> None:
        """Something happened in a chat: its pre-cache-expiry compaction is called off."""
        timer = getattr(self.w, "cache_timer", None)
        if sid is not None and timer is not None:
            timer.activity(sid)

    def send_from_composer(self) -> bool:
        """Send the composer's text and the chat's attached files (Enter). Always consumes
        the key.

        A message may be files only, or files and text (the files' blocks come
        first, then the text). An edited message holds the files its tray shows
        (the original's, less those removed, plus those added).
        """
        # no chat shown yet: kept for its chat (parley.gui.composer.early_input)
        if self.w.early is not None and not self.chat.attachments.has_pending():
            # The chats are still being opened: kept for its chat (early_input). With
            # files (attached to the chat shown) it waits in the box for the provider.
            return bool(self.w.queue_early_message())
        text = self.w.composer.text()
        files = self.chat.attachments
        editing, sid = self.chat.editor.editing, self.chat.session_id
        has_files = files.has_pending()
        if not (text.strip() or has_files):
            if editing is not None:  # an edit emptied: said, not silently ignored
                self.w.statusBar().showMessage(EMPTY_EDIT, 10_000)
            return True  # nothing to send
        try:  # longer than any model reads: refused before the box is emptied
            check_blocks([TextBlock(text)])
        except ParleyError as exc:
            self.w.statusBar().showMessage(exc.message, 15_000)
            return True
        starting = self.chat.runner is None
        model = self.chat.current_model()
        why = self.why_not_send(sid)
        if why is None and (editing is not None or has_files) and not self._provider_ready(model):
            self._send_when_ready(sid, model)  # the files' limits are the model's: checked then
            return True
        if why is not None:  # keep the text and the files; say why
            self.w.statusBar().showMessage(why, 8_000)
            return True
        if model is None and not starting:
            hub = self.chat.hub
            if hub is not None and not hub.is_configured:  # reading chats before set-up
                self.w.show_setup()
                if self.w.setup_panel is not None:
                    self.w.setup_panel.note_waiting(KEPT_FOR_SETUP)
                return True  # the text stays in the box
            self.w.show_problem(ParleyError(self.chat.models.no_model_reason()))
            return True
        if has_files and (model is None or not files.ready_to_send(model)):
            return True  # a file is still being read, or over the model's limits (it says)
        taken = files.take()  # before edit mode ends: its tray holds the edited message's
        bar = self.w.statusBar()
        if bar.currentMessage().startswith(ANSWER_KEPT_HINT):
            bar.clearMessage()  # about an earlier regeneration, not this message
        self.chat.editor.set_editing(None)
        self.w.composer.clear()
        self.chat.drafts.typed(self.chat.session_id, "")
        if editing is not None and sid is not None and model is not None:
            self.w.tasks.spawn(self.chat.editor.send_edit(sid, editing, text, model, taken),
                               name="edit")
        else:
            self.w.tasks.spawn(self._send(text, model, taken), name="send")
        return True

    def _send_when_ready(self, sid: str | None, model: str | None) -> None:
        """Enter with files (or on an edit) while Parley starts: the message stays in the
        box and the tray ("Connecting to …", Stop calls it off) and is sent, as Enter
        sends it, once its provider is ready: the files are checked against that
        model's limits then. A second Enter meanwhile does nothing more."""
        if self._held is not None and not self._held.done():
            return
        self.w.composer_bar.set_busy(True)
        self._held = self.w.tasks.spawn(self._hold(sid, model), name="send-when-ready")

    async def _hold(self, sid: str | None, model: str | None) -> None:
        try:
            await self._wait_for_provider(sid, model)
        finally:
            self._held = None
            if sid == self.chat.session_id:
                self.w.composer_bar.set_busy(False)
        if sid == self.chat.session_id:  # another chat opened meanwhile: its box is its own
            self.send_from_composer()

    def why_not_send(self, sid: str | None) -> str | None:
        """Why a message cannot be sent in chat ``sid`` now (None: it can): the one
        before is still waiting for its provider, a reply is still coming, or the chat
        is being compacted. (While Parley is still starting a message can be sent:
        it waits for its provider.)"""
        held = self.chat.save_status.why_held()
        if held is not None:
            return held
        if not self.running(sid):
            return None
        if sid in self._waiting:
            return WAITING
        if sid not in self._runs and sid in self.chat.editor.compacting:
            return COMPACTING
        return STILL_REPLYING

    async def send_queued(self, text: str) -> None:
        """Send ``text`` to the open chat as if typed and sent (a message written before
        the chats were open, ``parley.gui.composer.early_input``); returns once it has its chat (a
        new
        chat got its session), its run going on in the background."""
        if not text.strip():
            return
        placed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.w.tasks.spawn(self._send(text, self.chat.current_model(), placed=placed),
                           name="send")
        await placed

    def send_to(self, sid: str, text: str) -> None:
        """Send ``text`` in saved chat ``sid``, open or not (a message written for it
        before the chats were open, ``parley.gui.composer.early_input``): saved, then sent once its
        provider is ready."""
        if text.strip():
            self.w.tasks.spawn(self.run(sid, "send", [TextBlock(text)], None, None,
                                        turn_id=new_id()), name="send")

    async def _send(self, text: str, model: str | None, files: Taken | None = None, *,
                    placed: asyncio.Future[None] | None = None) -> None:
        """Send ``files`` then ``text`` (either may be empty) as one user turn.

        Nothing sent (no session, or the run did not start): the text goes back
        to the composer and the files to their chat's tray. ``placed`` is set once
        the message has its session (or could not have one).
        """
        blocks: list[Block] = []
        if files is not None and files.items:  # base64 of big files: off the GUI thread
            blocks = await asyncio.to_thread(lambda: files.blocks)
        if text.strip():
            blocks.append(TextBlock(text))
        old = self.chat.session_id
        turn_id = new_id()
        try:
            # Too long for the model's window: refused before a new chat gets its row
            # (while its provider loads, the run says so once it is ready).
            if self._provider_ready(model):
                assert model is not None
                self.chat.runner.check_message(blocks, model_ref=model)
            # Shown at once: a new chat's row waits for the file if another program
            # holds it locked, and the message must not seem lost meanwhile.
            self._show_saving(old, Turn("user", blocks, id=turn_id))
            sid = await self._session_for_send(model)
        except (ParleyError, asyncio.CancelledError):  # cancelled: Esc while it waited
            self._unshow(old, [turn_id])
            self.give_back(text)
            if files is not None:
                self.chat.attachments.give_back(files)
            raise
        finally:
            if placed is not None and not placed.done():
                placed.set_result(None)
        if old is None and self.chat.session_id == sid:
            self.chat.attachments.moved(None, sid)  # files attached while it was created
        try:
            await self.run(sid, "send", blocks, model, text, turn_id=turn_id)
        except ParleyError:
            if files is not None:
                self.chat.attachments.give_back(Taken(sid, files.items))
            raise

    def offer_retry(self, sid: str) -> None:
        """A chat was opened: a last message that was never answered (Parley closed or
        stopped while it waited, or crashed) says "Not sent", with Retry."""
        from parley.core.content import ToolResultBlock

        last = self.w.transcript.last_turn()
        if sid != self.chat.session_id or last is None or last.role != "user" \
                or last.id in self.chat.spans or self.running(sid) or last.id in self._saving:
            return
        if any(isinstance(b, ToolResultBlock) for b in last.blocks):
            return  # a tool round's results: the reply was cut off
        session = self.chat.sessions.get(sid)
        if session is not None and session.parent_session_id is not None \
                and not session.is_version \
                and last.created_at <= session.created_at:
            # The fork's copy of a message written before it was made: it ends at
            # one's own message on purpose, ready to be asked again.
            self.w.transcript.show_notice(FORKED_AT_MESSAGE, "Send")
            return
        if session is not None and _came_with_import(session, last):
            # Never sent from Parley: no failure to report, a reply can be asked for.
            self.w.transcript.show_notice(IMPORTED_AT_MESSAGE, "Send")
            return
        self.w.transcript.show_error(self._too_long_note(last) or CALLED_OFF)

    def _too_long_note(self, last: Turn) -> str | None:
        """Why an unanswered last message was not answered when it does not fit the chat
        model's context window by itself (as the run said before a restart), else None."""
        from parley.core.context.tokens import estimate_tokens
        from parley.core.context.too_long import SentMessageTooLong, model_name

        model, hub = self.chat.current_model(), self.chat.hub
        if not model or hub is None:
            return None
        try:
            info = hub.model_info(model)
        except ParleyError:
            return None
        if estimate_tokens([last]) * 2 < info.context_window:
            return None
        tokens = estimate_tokens(list(self.chat.turns))
        error = SentMessageTooLong(tokens, info.context_window, model,
                                   name=model_name(info, model))
        return error.message

    async def _session_for_send(self, model: str | None) -> str:
        """The open chat's id; a new chat gets its session row now (in its space)."""
        sid = self.chat.session_id
        if sid is not None:  # the sent draft is forgotten without waiting for the file
            self.w.tasks.spawn(self.chat.drafts.discard(sid), name="discard-draft")
            return sid
        sid = await self._new_session_when_unlocked(model)
        self.chat.session_id = sid
        status = self.w.statusBar()
        if hasattr(status, "chat_created"):  # the window's WrappingStatusBar
            status.chat_created(sid)
        await self.chat.drafts.discard(None)
        await self.chat.store.set_state(LAST_SESSION_KEY, sid)
        self.w.sidebar.select(sid)
        return sid

    def give_back(self, text: str) -> None:
        """Nothing was sent: put the text back in an empty composer so no word is lost."""
        if not self.w.composer.text():
            self.w.composer.set_text(text)

    def retry(self) -> bool:
        """Send the open chat's history again (after an error or a stopped reply), to
        the model of the run that failed or stopped if it was a regeneration with
        another model, else to the chat's model."""
        sid = self.chat.session_id
        model = self._retry_with.get(sid or "") or self.chat.current_model()
        if sid is None or model is None or self.running(sid) or not self.chat.turns:
            return False
        held = self.chat.save_status.why_held()
        if held is not None:
            self.w.statusBar().showMessage(held, 8_000)
            return False
        last = self.w.transcript.last_turn() or self.chat.turns[-1]  # conversation order
        if last.role == "assistant" and not last.aborted:
            # Nothing failed or stopped: sending the history again would add a second answer.
            keys = self.w.keymap.shown("run.regenerate")
            self.w.statusBar().showMessage(
                "The last reply is complete, so there is nothing to retry. For another "
                f"answer, use Regenerate{f' ({keys})' if keys else ''}: the current one "
                "is kept as a version.",
                8_000,
            )
            return False
        self.w.tasks.spawn(self.run(sid, "retry", None, model, None), name="retry")
        return True

    def continue_reply(self) -> bool:
        """Continue under the last reply, stopped (Esc, a failure, Parley closing) or cut
        at the model's output limit: send :data:`CONTINUE_MESSAGE` in the open chat, as
        if typed; the model reads its partial reply and goes on where it stopped (False
        when it cannot be sent now; the status bar says why)."""
        sid = self.chat.session_id
        if sid is None:
            return False
        why = self.why_not_send(sid)
        if why is not None:
            self.w.statusBar().showMessage(why, 8_000)
            return False
        self.send_to(sid, CONTINUE_MESSAGE)
        return True

    async def run(self, sid: str, how: str, blocks: list[Any] | None, model: str | None,
                  text: str | None, *, title: str | None = None,
                  turn_id: str | None = None) -> None:
        """Run ``send`` (with ``blocks``, as a user turn of id ``turn_id``), ``retry`` or
        ``regenerate`` (its fork titled ``title``) in a session and show its events.
        Before the run's provider is ready (Parley starting), a message is saved at
        once and the run waits for it (``model`` None: the chat's model, once the
        providers are loaded).

        Raises:
            ParleyError: the run could not start (``text`` goes back to the composer
                unless the message was saved).
        """
        self._runs[sid] = asyncio.current_task()  # type: ignore[assignment]
        self._doing[sid] = (how, model or "")
        self._retry_with.pop(sid, None)
        self.w.transcript.clear_error()
        self._set_busy(sid, True)
        self.w.sidebar.model.set_running(sid, True)
        started = False
        shown: list[str] = [turn_id] if turn_id else []  # shown before it was saved
        saved: Turn | None = None

        def on_event(ev: RunEvent | ReplySetAside) -> None:
            nonlocal started
            from parley.core.chat.run import UserTurnSaving

            if isinstance(ev, UserTurnSaving):
                if ev.turn.id not in shown:
                    shown.append(ev.turn.id)
            else:
                started = True
            self._on_event(ev)

        try:
            if not self._provider_ready(model):
                if how == "send":  # saved before anything is sent, as always
                    saved = await self._save_message(sid, blocks or [], turn_id)
                model = await self._wait_for_provider(sid, model)
                self._doing[sid] = (how, model)
            assert model is not None
            if saved is not None:
                await self.chat.runner.send_saved(sid, saved, model_ref=model, on_event=on_event)
            elif how == "send":
                await self._send_when_unlocked(sid, blocks or [], model, on_event, turn_id)
            elif how == "regenerate":
                from parley.core.chat.regenerate import (
                    regenerate,  # imports the SDKs: not at start-up
                )

                await regenerate(self.chat.runner, sid, model_ref=model, on_event=on_event,
                                 title=title)
            else:
                await self.chat.runner.retry(sid, model_ref=model, on_event=on_event)
        except ParleyError:
            if not started and saved is None:
                self._unshow(sid, shown)
            if text and not started and saved is None and sid == self.chat.session_id:
                self.give_back(text)
            raise
        except asyncio.CancelledError:
            if saved is not None and not started and sid in self._taking_back:
                await self._take_back(sid, saved, text)
            elif saved is not None and not started and sid == self.chat.session_id:
                self.w.statusBar().showMessage(CALLED_OFF, 10_000)
            elif how == "send" and not started and saved is None and turn_id in self._saving:
                self._unshow(sid, shown)  # stopped while waiting for the lock: never saved
                if text and sid == self.chat.session_id:
                    self.give_back(text)
                elif text:  # another chat's: its draft (asked about on quitting if unsaved)
                    self.chat.drafts.keep_unsent(sid, text)
            raise
        finally:
            self._taking_back.discard(sid)
            self._runs.pop(sid, None)
            self._doing.pop(sid, None)
            self.chat.partial.pop(sid, None)
            self.w.sidebar.model.set_running(sid, False)
            self._set_busy(sid, False)

    async def _new_session_when_unlocked(self, model: str | None) -> str:
        """A new chat's session row (its id); while another program holds sessions.db locked past
        the store's attempts, it waits as :meth:`_send_when_unlocked` does (Esc: the
        text goes back to the box)."""
        from parley.core.store.errors import DatabaseBusy

        try:
            while True:
                try:
                    return await self.chat.create_session(model)
                except DatabaseBusy as exc:
                    self._new_chat_wait = asyncio.current_task()
                    self.chat.save_status.waiting_for_lock(exc)
                    await asyncio.sleep(LOCK_RETRY_S)
        finally:
            self._new_chat_wait = None
            self.chat.save_status.waiting_for_lock(None)

    async def _send_when_unlocked(self, sid: str, blocks: list[Any], model: str,
                                  on_event: Any, turn_id: str | None) -> None:
        """``runner.send``; while another program holds sessions.db locked (the store's
        own attempts ran out: ``DatabaseBusy``), the message stays shown "Saving…", the
        bar says who holds it, and the send is tried again every
        :data:`LOCK_RETRY_S` until the lock clears (Esc stops it: the text goes back to
        the box). Nothing was written or sent while it waits."""
        from parley.core.store.errors import DatabaseBusy

        try:
            while True:
                try:
                    await self.chat.runner.send(sid, blocks, model_ref=model,
                                                on_event=on_event, turn_id=turn_id)
                    return
                except DatabaseBusy as exc:
                    if turn_id is None or turn_id not in self._saving:
                        raise  # not a message shown waiting (nothing to keep waiting)
                    self._lock_waits.add(sid)
                    self.chat.save_status.waiting_for_lock(exc)
                    await asyncio.sleep(LOCK_RETRY_S)
        finally:
            self._lock_waits.discard(sid)
            self.chat.save_status.waiting_for_lock(None)

    def _provider_ready(self, model: str | None) -> bool:
        """True when a run with ``model`` can start now: the providers are loaded and
        its provider's SDK imported (a provider that is not set up is "ready": the run
        then says so)."""
        if self.chat.runner is None or model is None:
            return False
        from parley.core.providers.hub import UnknownProvider  # loaded with the runner

        try:
            return bool(self.chat.hub.is_prepared(model))
        except UnknownProvider:
            return True

    async def _save_message(self, sid: str, blocks: list[Block],
                            turn_id: str | None) -> Turn:
        """Save a message that waits for its provider as the chat's new user turn (of id
        ``turn_id``, shown "saving" already) and show it saved."""
        turn = await self.chat.store.append_turn(
            sid, Turn("user", list(blocks), id=turn_id or new_id()))
        self._saving.discard(turn.id)
        self.w.transcript.set_save_mark(turn.id, None)
        self.chat.save_status.saved()
        self._remember(sid, turn)
        self._touch(sid)
        return turn

    async def _wait_for_provider(self, sid: str | None, model: str | None) -> str:
        """Wait ("connecting…") until the providers are loaded, the chat has a model
        (set-up may come first) and its provider's SDK is imported; return the model."""
        from parley.core.providers.hub import UnknownProvider

        self._waiting.add(sid)
        try:
            while True:
                changed = self.chat.providers_changed
                ref = model or (self.chat.models.model_for(sid) if sid is not None
                                else self.chat.current_model())
                if self.chat.runner is not None and ref is not None:
                    break
                self._show_connecting(sid, None)
                await changed.wait()
            self._show_connecting(sid, ref)
            with contextlib.suppress(UnknownProvider):  # the run says so
                await self.chat.hub.prepare(ref)
            session = self.chat.sessions.get(sid) if sid is not None else None
            if sid is not None and session is not None and not session.model:
                # Sent before it had one: its chat keeps the model it was sent to.
                self.chat.sessions[sid] = await self.chat.store.set_session_model(sid, ref)
            return ref
        finally:
            self._waiting.discard(sid)
            self._connecting_to.pop(sid, None)
            if sid == self.chat.session_id:
                self.w.statusBar().clearMessage()

    def _show_connecting(self, sid: str | None, model: str | None) -> None:
        """Say quietly, in the status bar, that the open chat's message waits (once it
        has waited :data:`CONNECTING_AFTER_MS`); with no provider set up yet, the
        set-up panel says it instead (nothing connects). Nothing is said while the
        providers' settings are read (a moment: a first run has none)."""
        hub = self.chat.hub
        if hub is None:
            return
        if model is None and not hub.is_configured:
            self.w.statusBar().clearMessage()
            if self.w.setup_panel is not None:
                self.w.setup_panel.note_waiting()
            return
        if sid != self.chat.session_id:
            return
        self._connecting_to[sid] = model
        bar = self.w.statusBar()
        QTimer.singleShot(CONNECTING_AFTER_MS, bar, lambda: self._say_connecting(sid))

    def _say_connecting(self, sid: str | None) -> None:
        if sid not in self._waiting or sid != self.chat.session_id or self.chat.hub is None:
            return
        model = self._connecting_to.get(sid)
        name = "your provider"
        if model is not None:
            with contextlib.suppress(ParleyError):
                name = self.chat.hub.config(model.split(":", 1)[0]).name
        self.w.statusBar().showMessage(CONNECTING.format(name=name))

    def _set_busy(self, sid: str, busy: bool) -> None:
        """A run of ``sid`` started or ended: Send/Stop, and Regenerate under the reply."""
        if sid == self.chat.session_id:
            self.w.composer_bar.set_busy(busy)
            self.w.transcript.set_busy(busy)

    def _on_event(self, ev: RunEvent | ReplySetAside) -> None:
        from parley.core.chat.regenerate import ReplySetAside
        from parley.core.chat.run import (
            ReplyUpdated,
            RetryWaiting,
            RunCancelled,
            RunFailed,
            RunFinished,
            RunStarted,
            SessionTitled,
            UserTurnSaving,
        )
        from parley.core.tools.loop import (
            ToolResultsSaved,
            ToolRoundLimit,
            ToolStepFinished,
            ToolsUnavailable,
        )

        sid = ev.session_id
        current = sid == self.chat.session_id
        if isinstance(ev, RetryWaiting):
            self.retry_notice.waiting(sid, ev.seconds, ev.rate_limited, ev.message)
            return
        if isinstance(ev, ReplyUpdated | RunFinished | RunFailed | RunCancelled):
            self.retry_notice.over(sid)
        if isinstance(ev, UserTurnSaving):
            self._show_saving(sid, ev.turn)
        elif isinstance(ev, ReplySetAside):
            self.chat.regen.reply_set_aside(ev)
        elif isinstance(ev, RunStarted):
            if ev.user_turn is not None:
                self._saving.discard(ev.user_turn.id)
                if self.w.transcript is not None:
                    self.w.transcript.set_save_mark(ev.user_turn.id, None)
                self.chat.save_status.saved()  # "Not saved: …" is over
                self._remember(sid, ev.user_turn)
                if current:  # sending brings the view to the message, however far up it was
                    self.w.transcript.scroll_to_end()
            self._touch(sid)
            if current:
                self.chat.meter.update()  # the message just saved counts at once
        elif isinstance(ev, ReplyUpdated):
            self.chat.state.stream(sid, ev.turn)
        elif isinstance(ev, RunFinished):
            self.chat.partial.pop(sid, None)
            self._remember(sid, ev.turn)
            self._touch(sid)
            if current:  # a new answer of a regeneration: ‹ n/m › under it
                self.w.tasks.spawn(self.chat.opener.refresh_versions(), name="versions")
            if ev.first_reply:
                self._title_after_first_exchange(sid, ev.turn)
            if current:
                self.chat.meter.update()
        elif isinstance(ev, RunFailed | RunCancelled):
            self.chat.partial.pop(sid, None)
            if current:  # a regeneration that failed: ‹ under the prompt shows the old answer
                self.w.tasks.spawn(self.chat.opener.refresh_versions(), name="versions")
            if ev.partial is not None:
                self._remember(sid, ev.partial)
            how, model = self._doing.get(sid, ("", ""))
            if how == "regenerate":
                self._retry_with[sid] = model
            if current and isinstance(ev, RunFailed):
                self.w.transcript.show_error(self.chat.regen.after_failure(sid, ev.error.message))
            elif current:
                self.chat.regen.after_stop(sid)
            if current:
                self.chat.meter.update()  # what was saved before the failure counts
        elif isinstance(ev, ToolStepFinished | ToolResultsSaved):
            self.chat.partial.pop(sid, None)
            self._remember(sid, ev.turn)  # each tool round shows as it is saved
        elif isinstance(ev, ToolsUnavailable | ToolRoundLimit):
            if current:
                self.w.statusBar().showMessage(ev.message, 15_000)
        elif isinstance(ev, SessionTitled):
            if sid in self.chat.sessions:
                self.chat.sessions[sid] = replace(self.chat.sessions[sid], title=ev.title)
            self.w.sidebar.model.set_title(sid, ev.title)
            self.chat.models.update_title()

    def _show_saving(self, sid: str, turn: Turn) -> None:
        """A message is being written: show it now (it leaves the composer), marked
        "Saving…" if that takes a while (another program holds the file locked)."""
        if turn.id in self._saving:
            return  # shown already (before its new chat got its row)
        self._saving.add(turn.id)
        self.chat.state.show_unsaved(sid, turn)

        def mark() -> None:
            if turn.id in self._saving and self.w.transcript is not None:
                self.w.transcript.set_save_mark(turn.id, "saving")

        QTimer.singleShot(SAVING_MARK_MS, mark)

    async def _take_back(self, sid: str, saved: Turn, text: str | None) -> None:
        """Esc on a saved message still waiting for its provider: delete it, drop it from
        the view and put its text back in the box (nothing was sent)."""
        with contextlib.suppress(ParleyError):  # not deleted: it stays, and Retry sends it
            await self.chat.store.delete_turns(sid, [saved.id])
            back = text if text is not None else saved.text()
            if sid == self.chat.session_id:
                self.chat.state.drop([saved.id])
                self.chat.opener.show_turns()
                box = self.w.composer.text()  # typed since: after the message
                self.w.composer.set_text(f"{back}\n\n{box}" if box.strip() else back)
            else:
                self.chat.drafts.keep_unsent(sid, back)
            return
        if sid == self.chat.session_id:
            self.w.statusBar().showMessage(CALLED_OFF, 10_000)

    def _unshow(self, sid: str, ids: list[str]) -> None:
        """A message shown as "Saving…" could not be saved: it leaves the transcript
        (its text goes back to the composer)."""
        for turn_id in ids:
            self._saving.discard(turn_id)
            self.w.transcript.set_save_mark(turn_id, None)
        self.chat.state.unshow(ids)
        if ids and sid == self.chat.session_id and self.w.transcript is not None:
            self.chat.opener.show_turns()

    def _title_after_first_exchange(self, sid: str, reply: Turn) -> None:
        """A chat got its first complete reply: title it in the background.

        The run titled it from the first message already; the title service
        replaces that with a generated one unless the user named the chat.
        """
        session = self.chat.sessions.get(sid)
        if self.chat.titles is None or session is None or session.title_source == "user":
            return
        model = reply.model or self.chat.current_model()
        if model:
            self.w.tasks.spawn(self.chat.titles.on_first_exchange(sid, model), name="title")

    def _remember(self, sid: str, turn: Turn) -> None:
        """Show a saved turn (new or updated) in the open chat's transcript."""
        self.chat.state.remember(sid, turn)

    def _touch(self, sid: str) -> None:
        """Move a chat to the top of its space (it, or a version of it, just changed)."""
        row = self.chat.chat_of(sid)
        session = self.chat.sessions.get(row)
        if session is not None and not getattr(session, "is_version", False):
            self.chat.sessions[row] = replace(session, updated_at=now_ms())
            if self.w.sidebar.model.has(row) or not session.archived:
                self.w.sidebar.model.upsert(self.chat.sessions[row])
        if sid == self.chat.session_id:
            self.w.sidebar.select(row)

    def stop(self) -> bool:
        """Stop the open chat's reply (Esc); else leave edit mode. False if nothing to do.

        A message waiting for its provider (Parley starting) is taken back: its
        saved turn is deleted and its text goes back to the box, as for a message
        waiting for a lock; a Retry or Regenerate waiting so is called off."""
        sid = self.chat.session_id
        if self._held is not None and not self._held.done():
            self._held.cancel()  # the message with files stays in the box, not sent
            return True
        if sid is not None and sid in self._waiting and sid in self._runs:
            self._taking_back.add(sid)
            self._runs[sid].cancel()
            return True
        if sid is not None and sid in self._lock_waits and sid in self._runs:
            self._runs[sid].cancel()  # never saved: the text goes back to the box
            return True
        if sid is None and self._new_chat_wait is not None:
            self._new_chat_wait.cancel()  # the new chat's row never made: text back too
            return True
        if sid is not None and self.chat.runner is not None and self.chat.runner.cancel(sid):
            return True
        return self.chat.editor.cancel()

    async def stop_and_wait(self, sid: str, timeout_s: float = 5.0) -> None:
        """Stop a chat's run (its partial reply is kept) and wait until it ended."""
        if sid in self._lock_waits and sid in self._runs:
            self._runs[sid].cancel()  # a message waiting for a lock: back to the box
            await asyncio.wait([self._runs[sid]], timeout=timeout_s)
        elif self.chat.runner is not None and self.chat.runner.cancel(sid) and sid in self._runs:
            await asyncio.wait([self._runs[sid]], timeout=timeout_s)


def _came_with_import(session: Any, last: Turn) -> bool:
    """True when a chat's unanswered last message came with it from an import file.

    A chat history import marks its chats and their branches with the time of the
    import (``sessions.meta["imported"]["at"]``, ``parley.core.store.imports``): a
    message no newer came with it. A conversation file imported on its own is not
    marked, but its messages are older than its chat (they keep the file's times,
    or the time it was read, before the chat was made), where one sent from
    Parley is saved after its chat exists (a fork's copies are older too: forks
    count only when marked).
    """
    from parley.core.store.imports import IMPORT_KEY

    imported = (session.meta or {}).get(IMPORT_KEY)
    if isinstance(imported, dict):
        at = imported.get("at")
        return isinstance(at, int) and last.created_at <= at
    return session.parent_session_id is None and last.created_at < session.created_at
