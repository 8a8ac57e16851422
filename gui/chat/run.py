"""Sending and runs: what happens between Enter and the saved reply.

:class:`ChatRuns` sends the composer's text (or an edit, through
:class:`parley.gui.chat.edit.ChatEditor`), retries, continues a reply and stops a
run: it runs ``ChatRunner.send`` / ``retry`` / regenerate and keeps the running
tasks. What their events show is :class:`parley.gui.chat.run_events.RunEvents`;
runs waiting for their provider while Parley starts, or for another program's
lock, are :class:`parley.gui.chat.waiting.RunWaits`; the note under a message
never answered is :class:`parley.gui.chat.unanswered.Unanswered`. The open chat
is the controller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from parley.core.app_state import LAST_SESSION
from parley.core.chat.events import RunInProgress
from parley.core.content import Block, TextBlock, Turn, new_id
from parley.core.context.text_limits import check_blocks
from parley.core.errors import ParleyError
from parley.gui.chat.attach import Taken
from parley.gui.chat.queue import ChatQueue
from parley.gui.chat.regenerate import ANSWER_KEPT_HINT
from parley.gui.chat.run_events import RunEvents
from parley.gui.chat.unanswered import Unanswered
from parley.gui.chat.waiting import CALLED_OFF, RunWaits
from parley.gui.transcript.specs import CONTINUE_MESSAGE

if TYPE_CHECKING:
    from parley.core.chat.regenerate import ReplySetAside
    from parley.core.chat.run import RunEvent
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.chat.parts import ChatParts, WindowCalls

STILL_REPLYING = ("A reply is still coming: press Esc to stop it, or wait — your message "
                  "stays here.")
#: Said when an edited message is sent while the chat is being compacted (a new message
#: is queued instead, and goes when the compaction ends).
COMPACTING = ("This chat is being compacted: your edited message stays here; send it when "
              "that is done.")
WAITING = ("Your message before this one is still waiting to be sent: this one stays here; "
           "send it once the reply has started.")
#: The set-up page's note when a message was typed while reading chats before set-up.
KEPT_FOR_SETUP = ("Your message is kept in the chat's box: set up a provider here, then send "
                  "it.")
EMPTY_EDIT = ("An edited message cannot be empty: type its new text, or press Esc to "
              "leave the edit (the message stays as it was).")


class ChatRuns:
    """Runs of one window's chats (see the module docstring).

    Args:
        chat: the open chat's controller.
        parts: the window's parts (the message box, the transcript, the list, the bar…).
        calls: what is asked of the window (set-up, problems, start-up's queue).
    """

    def __init__(self, chat: OpenChat, parts: ChatParts, calls: WindowCalls) -> None:
        self.parts, self.calls = parts, calls
        self.chat = chat
        self._runs: dict[str, asyncio.Task[Any]] = {}
        self.doing: dict[str, tuple[str, str]] = {}  # sid -> (how, model) of its run
        #: sid -> the model Retry / Resume asks: a failed or stopped regeneration's own
        #: (Retry answers what was asked of that model, not the chat's).
        self.retry_with: dict[str, str] = {}
        #: Sessions whose waiting message Esc takes back (:meth:`stop`).
        self.taking_back: set[str] = set()
        #: Sessions whose run Esc stopped before it reached the core (:meth:`stop`).
        self.stop_asked: set[str] = set()
        #: The send making a new chat's row (Enter in a new chat), until it has its id.
        self.new_chat_send: asyncio.Task[Any] | None = None
        #: Messages sent (Enter) meanwhile: queued in the new chat once it has its id.
        self.behind_new_chat: list[tuple[str, Taken | None]] = []
        #: What a run's events show (the messages shown before they are saved).
        self.events = RunEvents(chat, self, transcript=parts.transcript,
                                composer_bar=parts.composer_bar, sidebar=parts.sidebar,
                                status=parts.status, tasks=parts.tasks)
        #: Runs and messages waiting for their provider or for another program's lock.
        self.waits = RunWaits(chat, self, parts, calls.setup_panel)
        #: The note under a last message never answered (a chat just opened).
        self.unanswered = Unanswered(chat, parts.transcript, self)
        from parley.gui.notices.retry_notice import RetryBar, RetryNotice

        bar = RetryBar(parts.parent)
        layout = parts.chat_layout
        layout.insertWidget(max(0, layout.count() - 1), bar)  # just above the composer
        #: "Rate limited — retrying in 12 s" with Cancel (stops the run, like Esc).
        self.retry_notice = RetryNotice(bar, lambda: self.chat.session_id)
        bar.cancel_clicked.connect(self.stop)
        #: Messages sent while a reply streams, per chat: saved, then sent one per reply.
        self.queue = ChatQueue(chat, self, parts)

    @property
    def active(self) -> dict[str, asyncio.Task[Any]]:
        """{session id: task} of the runs under way."""
        return self._runs

    def start(self, sid: str, coro: Coroutine[Any, Any, Any], *, how: str,
              model: str | None, name: str) -> asyncio.Task[Any]:
        """Start a run of chat ``sid`` (``coro``, which calls :meth:`run`) and hold the chat
        for it now, before anything is awaited (:meth:`hold`)."""
        task = self.parts.tasks.spawn(coro, name=name)
        self.hold(sid, task, how, model)
        return task

    def hold(self, sid: str, task: asyncio.Task[Any], how: str, model: str | None) -> None:
        """Chat ``sid`` is ``task``'s from now on, from the moment its Enter (Retry,
        Regenerate…) was taken, not only once its run reaches the core: a key pressed
        meanwhile sees it running (Enter queues, Regenerate and Edit wait), Stop shows
        and its row's dot is on. Let go when the run ends (:meth:`let_go`), or when
        ``task`` ends before its run started (refused, its message not saved…). Held
        by another run already: left to it (``task``'s run is refused, :meth:`own`)."""
        held = self._runs.get(sid)
        if held is not None and held is not task and not held.done():
            return
        self._runs[sid] = task
        self.doing[sid] = (how, model or "")
        self.events.set_busy(sid, True)
        self.parts.sidebar.model.set_running(sid, True)
        task.add_done_callback(lambda done: self._ended(sid, done))

    def own(self, sid: str, how: str, model: str | None) -> asyncio.Task[Any]:
        """Called by a run's coroutine as it starts: the running task, holding chat
        ``sid`` (held since it was started, or from now).

        Raises:
            RunInProgress: another run holds the chat (nothing was sent).
        """
        task = asyncio.current_task()
        assert task is not None
        held = self._runs.get(sid)
        if held is task:
            self.doing[sid] = (how, model or "")
        elif held is not None and not held.done():
            raise RunInProgress()
        else:
            self.hold(sid, task, how, model)
        return task

    def let_go(self, sid: str, task: asyncio.Task[Any]) -> bool:
        """``task``'s run of chat ``sid`` ended: the chat is not held any more (False:
        ``task`` did not hold it). The caller then tells the queue
        (``ChatQueue.after_run``)."""
        if self._runs.get(sid) is not task:
            return False
        self.taking_back.discard(sid)
        self.stop_asked.discard(sid)
        self._runs.pop(sid, None)
        self.doing.pop(sid, None)
        self.chat.partial.pop(sid, None)
        self.parts.sidebar.model.set_running(sid, False)
        self.events.set_busy(sid, False)
        elsewhere = self.calls.elsewhere()  # another Parley's changes
        if elsewhere is not None:  # skipped during the run: shown now
            elsewhere.run_ended(sid)
        return True

    def _ended(self, sid: str, task: asyncio.Task[Any]) -> None:
        """A task holding chat ``sid`` ended without its run letting it go (it ended
        before the run started): let go; messages queued behind it wait."""
        if self.let_go(sid, task):
            self.queue.after_run(sid, False)

    def lock_waiting(self) -> list[str]:
        """The chats whose sent message waits for another program's lock (not saved)."""
        return list(self.waits.lock_waits)

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
        return sid in self.waits.waiting

    def waiting_messages(self) -> list[str]:
        """The chats whose sent message waits for its provider (saved, not sent yet)."""
        return [sid for sid in self.waits.waiting
                if sid is not None and self.doing.get(sid, ("", ""))[0] == "send"]

    def activity(self, sid: str | None) -> None:
        """Something happened in a chat: its pre-cache-expiry compaction is called off."""
        timer = self.calls.cache_timer()
        if sid is not None and timer is not None:
            timer.activity(sid)

    def send_from_composer(self) -> bool:
        """Send the composer's text and the chat's attached files (Enter). Always consumes
        the key.

        A message may be files only, or files and text (the files' blocks come
        first, then the text). An edited message holds the files its tray shows
        (the original's, less those removed, plus those added).
        """
        if self.calls.starting() and not self.chat.attachments.has_pending():
            # The chats are still being opened: queued for its chat (startup.state). With
            # files (attached to the chat shown) it waits in the box for the provider.
            return bool(self.calls.queue_early_message())
        if self.chat.box.switching:  # the box is the chat switched to's: sent once it shows
            self.chat.box.send_asked = True
            return True
        text = self.parts.composer.text()
        files = self.chat.attachments
        editing, sid = self.chat.editor.editing, self.chat.session_id
        has_files = files.has_pending()
        if self.queue.editing is not None:  # a queued message edited: back in its place
            self.queue.finish_edit(text)
            return True
        if not (text.strip() or has_files):
            if self.queue.on_enter_empty():  # a paused queue goes on
                return True
            if editing is not None:  # an edit emptied: said, not silently ignored
                self.parts.status.showMessage(EMPTY_EDIT, 10_000)
            return True  # nothing to send
        try:  # longer than any model reads: refused before the box is emptied
            check_blocks([TextBlock(text)])
        except ParleyError as exc:
            self.parts.status.showMessage(exc.message, 15_000)
            return True
        starting = self.chat.runner is None
        model = self.chat.current_model()
        why = self.why_not_send(sid)
        if sid is None and editing is None and self.new_chat_send is not None \
                and not self.new_chat_send.done():
            # The new chat's first message is still getting its row: this one is queued
            # there behind it, once the chat has its id (:meth:`_session_for_send`).
            if has_files and not files.ready_to_send(model or ""):
                return True
            self.behind_new_chat.append((text, files.take() if has_files else None))
            self.parts.composer.clear()
            self.chat.drafts.typed(None, "")
            return True
        if sid is not None and editing is None and (
                why in (STILL_REPLYING, COMPACTING)
                or (why in (None, WAITING) and self.queue.holds(sid))):
            # A reply is coming, the chat is being compacted, or the queue is not done
            # (messages wait, one is leaving or being saved): queued behind them, in
            # order, with its files (once read and within the model's limits); after a
            # compaction it goes when the compaction ends (ChatQueue). A message waiting
            # for its provider (Parley starting) still keeps the next one in the box.
            if has_files and not files.ready_to_send(model or ""):
                return True  # a file is still being read, or over the limits (it says)
            self.queue.add(sid, text, files.take() if has_files else None)
            return True
        waits = self.waits
        if why is None and (editing is not None or has_files) and not waits.provider_ready(model):
            waits.send_when_ready(sid, model)  # the files' limits are the model's: checked then
            return True
        if why is not None:  # keep the text and the files; say why
            self.parts.status.showMessage(why, 8_000)
            return True
        if model is None and not starting:
            hub = self.chat.hub
            if hub is not None and not hub.is_configured:  # reading chats before set-up
                self.calls.show_setup()
                panel = self.calls.setup_panel()
                if panel is not None:
                    panel.note_waiting(KEPT_FOR_SETUP)
                return True  # the text stays in the box
            self.calls.show_problem(ParleyError(self.chat.models.no_model_reason()))
            return True
        if has_files and (model is None or not files.ready_to_send(model)):
            return True  # a file is still being read, or over the model's limits (it says)
        taken = files.take()  # before edit mode ends: its tray holds the edited message's
        bar = self.parts.status
        if bar.currentMessage().startswith(ANSWER_KEPT_HINT):
            bar.clearMessage()  # about an earlier regeneration, not this message
        self.chat.editor.set_editing(None)
        self.parts.composer.clear()
        self.chat.drafts.typed(self.chat.session_id, "")
        # The chat is held from this moment (a new chat once it has its row): a key
        # pressed before the run reaches the core sees it running (:meth:`hold`).
        if editing is not None and sid is not None and model is not None:
            self.start(sid, self.chat.editor.send_edit(sid, editing, text, model, taken),
                       how="retry", model=model, name="edit")
        else:
            self._start_send(sid, self._send(text, model, taken), model)
        return True

    def _start_send(self, sid: str | None, send: Coroutine[Any, Any, None],
                    model: str | None) -> None:
        """Start ``send`` (:meth:`_send`) in chat ``sid``, held from now; in a new chat
        (None) the messages sent before it has its row go behind it."""
        if sid is not None:
            self.start(sid, send, how="send", model=model, name="send")
        else:
            self.new_chat_send = self.parts.tasks.spawn(send, name="send")

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
        if sid in self.waits.waiting:
            return WAITING
        if sid not in self._runs:
            # Held in the core only: a compaction (Compact now, the cache timer), also
            # before its "compact:start" (editor.compacting). A new message is queued
            # (sent when it ends); an edited one stays in the box.
            return COMPACTING
        return STILL_REPLYING

    async def send_queued(self, text: str) -> None:
        """Send ``text`` to the open chat as if typed and sent (a message written before
        the chats were open, ``parley.gui.startup.state``); returns once it has its chat (a
        new
        chat got its session), its run going on in the background."""
        if not text.strip():
            return
        placed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        model = self.chat.current_model()
        self._start_send(self.chat.session_id, self._send(text, model, placed=placed), model)
        await placed

    def send_to(self, sid: str, text: str) -> None:
        """Send ``text`` in saved chat ``sid``, open or not (a message written for it
        before the chats were open, ``parley.gui.startup.state``): saved, then sent once its
        provider is ready."""
        if text.strip():
            self.start(sid, self.run(sid, "send", [TextBlock(text)], None, None,
                                     turn_id=new_id()), how="send", model=None, name="send")

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
            if self.waits.provider_ready(model):
                runner = self.chat.runner
                assert model is not None and runner is not None
                runner.check_message(blocks, model_ref=model)
            # Shown at once: a new chat's row waits for the file if another program
            # holds it locked, and the message must not seem lost meanwhile.
            self.events.show_saving(old, Turn("user", blocks, id=turn_id))
            sid = await self._session_for_send(model)
        except (ParleyError, asyncio.CancelledError):  # cancelled: Esc while it waited
            self.events.unshow(old, [turn_id])
            self.give_back(text)
            if files is not None:
                self.chat.attachments.give_back(files)
            if old is None:  # those sent behind it go back too, after it
                self.give_back_behind_new_chat()
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

    async def _session_for_send(self, model: str | None) -> str:
        """The open chat's id; a new chat gets its session row now (in its space)."""
        sid = self.chat.session_id
        if sid is not None:  # the sent draft is forgotten without waiting for the file
            # (not what was typed since Enter: Drafts.sent writes that instead)
            self.parts.tasks.spawn(self.chat.drafts.sent(sid), name="discard-draft")
            return sid
        task = asyncio.current_task()
        try:
            sid = await self.waits.new_session_when_unlocked(model)
        finally:
            if self.new_chat_send is task:
                self.new_chat_send = None
        self.chat.session_id = sid
        if task is not None:  # its run holds the new chat from now (see hold)
            self.hold(sid, task, "send", model)
        for text, files in self.behind_new_chat:  # sent meanwhile: queued behind it
            self.queue.enqueue(sid, text, files)
        self.behind_new_chat.clear()
        self.parts.status.chat_created(sid)
        # Typed after Enter while the row was made (kept as the new chat's): this chat's now.
        self.chat.keep_draft()
        await self.chat.drafts.discard(None)
        await LAST_SESSION.set(self.chat.store, sid)
        self.parts.sidebar.select(sid)
        return sid

    def give_back(self, text: str, *, after: bool = False) -> None:
        """Nothing was sent: put the text back in the composer so no word is lost; what
        was typed since stays, after it (``after``: before it, typed earlier)."""
        box = self.parts.composer.text()
        if not box.strip():
            self.parts.composer.set_text(text)
        elif text.strip():
            self.parts.composer.set_text(f"{box}\n\n{text}" if after else f"{text}\n\n{box}")

    def give_back_behind_new_chat(self) -> None:
        """The new chat got no row: the messages sent behind its first go back to the box
        (after it, in order) and their files to the tray."""
        for text, files in self.behind_new_chat:
            self.give_back(text, after=True)
            if files is not None:
                self.chat.attachments.give_back(files)
        self.behind_new_chat.clear()

    def retry(self) -> bool:
        """Send the open chat's history again (after an error or a stopped reply), to
        the model of the run that failed or stopped if it was a regeneration with
        another model, else to the chat's model. A reply stopped or cut off is kept
        as the new one's earlier version (‹ 1/2 ›, as Regenerate keeps it:
        ``parley.core.chat.regenerate.retry_incomplete``)."""
        sid = self.chat.session_id
        model = self.retry_with.get(sid or "") or self.chat.current_model()
        if sid is None or model is None or self.running(sid) or not self.chat.turns:
            return False
        held = self.chat.save_status.why_held()
        if held is not None:
            self.parts.status.showMessage(held, 8_000)
            return False
        last = self.parts.transcript.last_turn() or self.chat.turns[-1]  # conversation order
        if last.role == "assistant" and not last.aborted:
            # Nothing failed or stopped: sending the history again would add a second answer.
            keys = self.parts.keymap.shown("run.regenerate")
            self.parts.status.showMessage(
                "The last reply is complete, so there is nothing to retry. For another "
                f"answer, use Regenerate{f' ({keys})' if keys else ''}: the current one "
                "is kept.",
                8_000,
            )
            return False
        self.start(sid, self.run(sid, "retry", None, model, None), how="retry", model=model,
                   name="retry")
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
            self.parts.status.showMessage(why, 8_000)
            return False
        self.send_to(sid, CONTINUE_MESSAGE)
        return True

    async def run(self, sid: str, how: str, blocks: list[Any] | None, model: str | None,
                  text: str | None, *, turn_id: str | None = None,
                  on_saved: Callable[[], None] | None = None) -> None:
        """Run ``send`` (with ``blocks``, as a user turn of id ``turn_id``), ``retry`` or
        ``regenerate`` in a session and show its events.
        Before the run's provider is ready (Parley starting), a message is saved at
        once and the run waits for it (``model`` None: the chat's model, once the
        providers are loaded). ``on_saved`` is called once the message is saved and
        the request is on its way (a queued message's row then goes). When the run
        ends, the chat's queue (:class:`~parley.gui.chat.queue.ChatQueue`) sends its
        next message if the reply was saved, else waits.

        Raises:
            ParleyError: the run could not start (``text`` goes back to the composer
                unless the message was saved).
        """
        task: asyncio.Task[Any] | None = None
        started = finished = False
        shown: list[str] = [turn_id] if turn_id else []  # shown before it was saved
        saved: Turn | None = None

        def on_event(ev: RunEvent | ReplySetAside) -> None:
            nonlocal started, finished
            from parley.core.chat.run import RunFinished, UserTurnSaving

            if sid in self.stop_asked and self.chat.runner is not None:
                self.stop_asked.discard(sid)  # Esc came before the core held the chat
                self.chat.runner.cancel(sid, person=True)
            if isinstance(ev, UserTurnSaving):
                if ev.turn.id not in shown:
                    shown.append(ev.turn.id)
            else:
                if not started and on_saved is not None:
                    on_saved()
                started = True
                finished = finished or (isinstance(ev, RunFinished) and ev.saved)
            self.events.on_event(ev)

        try:
            task = self.own(sid, how, model)  # RunInProgress: another run holds the chat
            self.retry_with.pop(sid, None)
            self.parts.transcript.clear_error()
            if not self.waits.provider_ready(model):
                if how == "send":  # saved before anything is sent, as always
                    saved = await self.waits.save_message(sid, blocks or [], turn_id)
                model = await self.waits.wait_for_provider(sid, model)
                self.doing[sid] = (how, model)
            runner = self.chat.runner
            assert model is not None and runner is not None
            if saved is not None:
                await runner.send_saved(sid, saved, model_ref=model, on_event=on_event)
            elif how == "send":
                await self.waits.send_when_unlocked(sid, blocks or [], model, on_event, turn_id)
            elif how == "regenerate":
                from parley.core.chat.regenerate import (
                    regenerate,  # imported at its first use: not at start-up
                )

                await regenerate(runner, sid, model_ref=model, on_event=on_event)
            else:  # an incomplete last reply is kept as a branch: ‹ 1/2 › beside the new
                from parley.core.chat.regenerate import retry_incomplete

                await retry_incomplete(runner, sid, model_ref=model, on_event=on_event)
        except ParleyError:
            if not started and saved is None:
                self.events.unshow(sid, shown)
            if text and not started and saved is None and sid == self.chat.session_id:
                self.give_back(text)
            raise
        except asyncio.CancelledError:
            if saved is not None and not started and sid in self.taking_back:
                await self.waits.take_back(sid, saved, text)
            elif saved is not None and not started and sid == self.chat.session_id:
                self.parts.status.showMessage(CALLED_OFF, 10_000)
            elif how == "send" and not started and saved is None and turn_id in self.events.saving:
                self.events.unshow(sid, shown)  # stopped while waiting for the lock: never saved
                if text and sid == self.chat.session_id:
                    self.give_back(text)
                elif text:  # another chat's: its draft (asked about on quitting if unsaved)
                    self.chat.drafts.keep_unsent(sid, text)
            raise
        finally:
            if how == "retry":  # a reply it set aside is not said again after the next run
                self.chat.regen.run_ended(sid)
            if task is not None and self.let_go(sid, task):
                self.queue.after_run(sid, finished)  # the next queued message, or a pause

    def stop(self) -> bool:
        """Stop the open chat's reply (Esc); else leave edit mode. False if nothing to do.

        A message waiting for its provider (Parley starting) is taken back: its
        saved turn is deleted and its text goes back to the box, as for a message
        waiting for a lock; a Retry or Regenerate waiting so is called off."""
        sid = self.chat.session_id
        if self.queue.on_escape():  # a queued message's edit left, or the queue paused
            return True
        if self.waits.held is not None and not self.waits.held.done():
            self.waits.held.cancel()  # the message with files stays in the box, not sent
            return True
        if sid is not None and sid in self.waits.waiting and sid in self._runs:
            self.taking_back.add(sid)
            self._runs[sid].cancel()
            return True
        if sid is not None and sid in self.waits.lock_waits and sid in self._runs:
            self._runs[sid].cancel()  # never saved: the text goes back to the box
            return True
        if sid is None and self.waits.new_chat_wait is not None:
            self.waits.new_chat_wait.cancel()  # the new chat's row never made: text back too
            return True
        if sid is not None and self.chat.runner is not None \
                and self.chat.runner.cancel(sid, person=True):
            return True
        if sid is not None and sid in self._runs and self.doing.get(sid, ("", ""))[0] != "several":
            # Held since its key, not in the core yet (Esc right after Enter): stopped
            # as soon as it is (the first event of its run); its message stays.
            self.stop_asked.add(sid)
            return True
        return self.chat.editor.cancel()

    async def stop_and_wait(self, sid: str, timeout_s: float = 5.0) -> None:
        """Stop a chat's run (its partial reply is kept) and wait until it ended."""
        if sid in self.waits.lock_waits and sid in self._runs:
            self._runs[sid].cancel()  # a message waiting for a lock: back to the box
            await asyncio.wait([self._runs[sid]], timeout=timeout_s)
        elif self.chat.runner is not None and self.chat.runner.cancel(sid) and sid in self._runs:
            await asyncio.wait([self._runs[sid]], timeout=timeout_s)
