"""Messages written while a reply streams: queued, saved, and sent one per saved reply.

Enter while the open chat's reply is still coming, or while the chat is being compacted
(Compact now, the cache idle-timer), puts the message in that chat's queue instead of
refusing it: saved at once (``Store.queue_message``, so a crash or a quit keeps it),
shown one line each under the reply (:class:`QueueView`), and sent, first queued first,
as soon as the reply before it is saved (or the compaction ends). Each chat keeps its
own queue, so several chats can stream and queue at once. A message with attached files is
queued with them: their bytes are saved with it (``parley.gui.chat.queue_files``), its
line says "[2 files]", and they are sent with it; editing it brings them back to the
tray, taking it back drops them.

The person stays in charge, keyboard first:

* Esc in an empty message box pauses the queue, a message just queued and still being
  saved included (the reply goes on; Esc again stops it). A stopped or failed reply
  pauses it too. Enter in the empty box, Enter on the queue, Send now or the palette's
  "Send queued messages" send it on.
* Up in an empty box edits the last queued message in the box (F2 or a double-click
  on a line edits that one): Enter puts it back in its place, Esc leaves it as it was;
  a message emptied so is taken back.
* Delete (or Esc, Backspace) on a selected line takes that message back.

Messages found queued when a chat is opened were queued before this start: they are
shown paused, with the question "send them now?", and never sent by themselves.
A message is sent as the user turn of its own id, so once that turn is saved the
store never lists it again (its row is deleted too): sent exactly once, even across a
crash. While a chat's queue is being sent (a message leaving, or one still being
saved), a new Enter goes behind it (:meth:`ChatQueue.holds`), never ahead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QHBoxLayout, QWidget

from parley.core.errors import ParleyError
from parley.core.store.queued import QueuedMessage
from parley.gui.chat.queue_files import blocks_of, new_files, queued_files, tray_files
from parley.gui.chat.queue_view import QueueView

if TYPE_CHECKING:
    from parley.gui.chat.interfaces import ChatRunsView, OpenChat
    from parley.gui.chat.parts import ChatParts

#: Said when Enter comes before an edited queued message's files are back in the tray.
FILES_LOADING = "Still reading the queued message's files: press Enter again in a moment."
#: The message box's banner while a queued message is edited in it.
EDITING = "Editing a queued message  ·  Enter puts it back in its place, Esc leaves it as it was"
QUEUED_PAUSED = ("Queued after the paused messages: press Enter in the empty box (or Send now) "
                 "to send them.")
PAUSED_STOPPED = "The reply did not finish: the queued messages wait until you send them."


class ChatQueue:
    """Every chat's queue of messages in one window (see the module docstring).

    Args:
        chat: the open chat's controller (store, open session, drafts, models).
        runs: the window's runs (whether a chat is busy; a queued message is sent as one).
        parts: the window's parts (the message box and its bar, the chat column, tasks).
    """

    def __init__(self, chat: OpenChat, runs: ChatRunsView, parts: ChatParts) -> None:
        self.chat, self.runs, self.parts = chat, runs, parts
        #: session id -> its queued messages, in order (those read or queued so far).
        self.items: dict[str, list[QueuedMessage]] = {}
        #: Chats whose queue waits for the person (Esc, a stopped reply, a restart).
        self.paused: set[str] = set()
        #: Chats whose queue was found at opening (queued before this start): asked about.
        self.restored: set[str] = set()
        #: session id -> the queued message being sent (its row goes once it is saved).
        self.leaving: dict[str, str] = {}
        #: session id -> the message :attr:`leaving` names, until its user turn is saved.
        self._unsaved: dict[str, QueuedMessage] = {}
        #: Messages given back elsewhere (the box, after damage): never shown again here.
        self.gone: set[str] = set()
        #: The queued message edited in the message box, if any.
        self.editing: QueuedMessage | None = None
        #: The edited message's files are being read back into the tray.
        self.files_loading = False
        #: session id -> how many messages are being saved to its queue (not listed yet).
        self.adding: dict[str, int] = {}
        self.closing = False
        self._read: set[str] = set()
        #: Chats whose queue waits for a compaction's end (:meth:`_pump_after_compaction`).
        self._after_compaction: set[str] = set()
        # Just above the composer, as wide as its column and centred like it.
        self._row = QWidget(parts.parent)
        self.view = QueueView(self._row)
        self.view.setMaximumWidth(parts.composer_bar.maximumWidth())
        row = QHBoxLayout(self._row)
        row.setContentsMargins(24, 6, 24, 0)
        row.addStretch(1)
        row.addWidget(self.view, 100)
        row.addStretch(1)
        self._row.hide()
        layout = parts.chat_layout
        layout.insertWidget(max(0, layout.count() - 1), self._row)
        self.view.send_clicked.connect(self.send_now)
        self.view.pause_clicked.connect(self.pause)
        self.view.take_back.connect(self.take_back)
        self.view.edit.connect(self.start_edit)
        parts.composer.textChanged.connect(self._say_what_escape_does)

    # -- what the window asks -------------------------------------------------------
    def has(self, sid: str | None) -> bool:
        """True when chat ``sid`` has queued messages (sent or not yet)."""
        return sid is not None and bool(self.items.get(sid))

    def holds(self, sid: str | None) -> bool:
        """True while chat ``sid``'s queue is not done: messages queued, one leaving
        (its run may not have started yet) or one still being saved. A message sent
        meanwhile goes behind them."""
        return sid is not None and bool(
            self.items.get(sid) or sid in self.leaving or self.adding.get(sid))

    def messages(self, sid: str) -> list[QueuedMessage]:
        """Chat ``sid``'s queued messages as known to the window, first to go first."""
        return list(self.items.get(sid, ()))

    def unsent(self) -> list[QueuedMessage]:
        """Every queued message of this window not yet saved as a turn: the open chat's
        first, in each chat the one leaving (its turn not saved) then the rest in order;
        the one edited in the box without its text and files (the box's). What
        sessions.db found damaged would otherwise lose (``keep_message``)."""
        open_sid = self.chat.session_id
        sids = sorted(set(self.items) | set(self._unsaved), key=lambda s: s != open_sid)
        found: list[QueuedMessage] = []
        for sid in sids:
            out = self._unsaved.get(sid)
            found += [m for m in ([out] if out is not None else []) + self.items.get(sid, [])
                      if m.id not in self.gone]
        edited = self.editing
        # The one edited in the box: its words are the box's (kept with it), not these.
        return [QueuedMessage(m.id, m.session_id, m.position, "", m.created_at)
                if edited is not None and m.id == edited.id else m for m in found]

    def forget(self, ids: set[str]) -> None:
        """The messages ``ids`` came back elsewhere (the message box, after a damaged
        sessions.db): never listed nor sent here, even when read from the store later."""
        self.gone |= ids
        for sid, messages in list(self.items.items()):
            self.items[sid] = [m for m in messages if m.id not in ids]
        self.refresh()

    def add(self, sid: str, text: str, taken: Any = None) -> None:
        """Queue ``text`` in chat ``sid`` (Enter while its reply streams) with the files
        ``taken`` from its tray (a ``parley.gui.chat.attach.Taken``, or None): the box is
        emptied at once; the message is saved, shown, and sent when its turn comes."""
        self.parts.composer.clear()
        self.chat.drafts.typed(sid, "")
        self.enqueue(sid, text, taken)

    def enqueue(self, sid: str, text: str, taken: Any = None) -> None:
        """Queue ``text`` (and the files ``taken``) in chat ``sid``, the box left as it is
        (a message sent while a new chat was getting its row: ``ChatRuns``)."""
        self.adding[sid] = self.adding.get(sid, 0) + 1
        self._say_what_escape_does()
        self.parts.tasks.spawn(self._add(sid, text, taken), name="queue-message")

    async def _add(self, sid: str, text: str, taken: Any) -> None:
        files = new_files(taken.items) if taken is not None else []
        try:  # counted as adding until listed: a pause asked meanwhile holds (on_escape)
            try:
                message = await self.chat.store.queue_message(sid, text, files)
            except ParleyError:
                self.runs.give_back(text)  # not saved: the words go back to the box
                if taken is not None:
                    self.chat.attachments.give_back(taken)  # and the files to the tray
                raise
            await self._read_once(sid)
            ahead = bool(self.items.get(sid))  # paused before: this one goes behind them
            if message.id not in {m.id for m in self.items.get(sid, ())}:
                self.items.setdefault(sid, []).append(message)
        finally:
            self.adding[sid] -= 1
            if not self.adding[sid]:
                del self.adding[sid]
            if not self.items.get(sid):
                self.refresh()  # not queued after all: nothing left to pause
        # The queued message's draft goes; what was typed since Enter stays (Drafts.sent).
        self.parts.tasks.spawn(self.chat.drafts.sent(sid), name="discard-draft")
        if ahead and sid in self.paused and sid == self.chat.session_id:
            self.parts.status.showMessage(QUEUED_PAUSED, 8_000)
        self.refresh()
        self.pump(sid)
        self._pump_after_compaction(sid)

    def _pump_after_compaction(self, sid: str) -> None:
        """Chat ``sid`` is being compacted (Compact now, the cache idle-timer): no run of
        this window ends to send its queue on, so it goes when the compaction lets the
        chat go, however the compaction ends (``ChatRunner.wait_released``)."""
        runner = self.chat.runner
        if runner is None or runner.holder(sid) != "compaction" or sid in self._after_compaction:
            return
        self._after_compaction.add(sid)
        self.refresh()  # its heading: sent when the summary is saved

        async def when_released() -> None:
            try:
                await runner.wait_released(sid)
            finally:
                self._after_compaction.discard(sid)
            self.refresh()
            self.pump(sid)

        self.parts.tasks.spawn(when_released(), name="queue-after-compaction")

    def pause(self) -> bool:
        """Hold the open chat's queue: nothing goes until :meth:`send_now`."""
        sid = self.chat.session_id
        if not self._queued(sid):
            return False
        assert sid is not None
        self.paused.add(sid)
        self.refresh()
        return True

    def hold(self, sid: str) -> None:
        """Pause chat ``sid``'s queue, open or not (it is being deleted: kept for Undo)."""
        if self.has(sid):
            self.paused.add(sid)
            self.refresh()

    def send_now(self) -> bool:
        """Send the open chat's queue on (after a pause or a restart): the first goes now
        unless a reply is still coming, the rest one per saved reply."""
        sid = self.chat.session_id
        if not self.has(sid):
            return False
        assert sid is not None
        self.paused.discard(sid)
        self.restored.discard(sid)
        self.refresh()
        self.pump(sid)
        return True

    def on_enter_empty(self) -> bool:
        """Enter in an empty message box: a paused queue of the open chat is sent on."""
        sid = self.chat.session_id
        return sid in self.paused and self.send_now()

    def on_escape(self) -> bool:
        """Esc in the message box: leaves the edit of a queued message, else pauses a
        queue that is going out (only with an empty box). False: Esc does what it did."""
        if self.editing is not None:
            self.cancel_edit()
            return True
        sid = self.chat.session_id
        if self._queued(sid) and sid not in self.paused and not self.parts.composer.text():
            return self.pause()
        return False

    def _queued(self, sid: str | None) -> bool:
        """True when chat ``sid`` has queued messages, or one being saved to its queue
        (Enter then Esc at once: the Esc pauses the queue, as for one listed)."""
        return self.has(sid) or bool(sid is not None and self.adding.get(sid))

    def take_back(self, message_id: str) -> None:
        """Take a queued message of the open chat back: it is never sent."""
        sid = self.chat.session_id
        if sid is None:
            return
        kept = [m for m in self.items.get(sid, ()) if m.id != message_id]
        if len(kept) == len(self.items.get(sid, ())):
            return
        self.items[sid] = kept
        if self.editing is not None and self.editing.id == message_id:
            self._end_edit()
        self.parts.tasks.spawn(self.chat.store.take_queued(message_id), name="take-back-queued")
        self.refresh()
        if not kept:
            self.parts.composer.setFocus()

    def focus(self) -> bool:
        """Put the keyboard on the open chat's queue (False when it has none)."""
        return self.view.focus_lines()

    # -- editing in the message box -------------------------------------------------------
    def edit_last(self) -> bool:
        """Up in an empty box: edit the open chat's last queued message (False: none)."""
        sid = self.chat.session_id
        if not self.has(sid) or self.parts.composer.text():
            return False
        assert sid is not None
        self.start_edit(self.items[sid][-1].id)
        return True

    def start_edit(self, message_id: str) -> None:
        """Put a queued message of the open chat in the box to be edited (it keeps its
        place, and is not sent while edited). Refused while the box holds other text."""
        sid = self.chat.session_id
        found = [m for m in self.items.get(sid or "", ()) if m.id == message_id]
        if not found:
            return
        if self.parts.composer.text() and self.editing is None:
            self.parts.status.showMessage(
                "Empty the message box first: a queued message is edited in it.", 8_000)
            return
        if self.editing is not None:  # another one was edited: its tray goes
            self.chat.attachments.end_edit()
        self.editing = found[0]
        # The tray shows this message's files (the files pending for the next message
        # come back when the edit ends).
        self.chat.attachments.begin_edit_files([])
        if found[0].files:
            self.files_loading = True
            self.parts.tasks.spawn(self._files_to_tray(found[0]), name="queued-files")
        self.parts.composer.set_text(found[0].text)
        self.parts.composer_bar.banner.setText(EDITING)
        self.parts.composer_bar.banner.setVisible(True)
        self.parts.composer.setFocus()

    async def _files_to_tray(self, message: QueuedMessage) -> None:
        """Read an edited queued message's files back into the tray."""
        try:
            files = await tray_files(self.chat.store, message)
        finally:
            self.files_loading = False
        if self.editing is not None and self.editing.id == message.id \
                and self.chat.session_id == message.session_id:
            for name, data in files:
                self.chat.attachments.add_bytes(data, name)

    def finish_edit(self, text: str) -> None:
        """Enter while a queued message is edited: it takes ``text`` and the tray's files
        in its place (neither: it is taken back)."""
        message = self.editing
        if message is None:
            return
        files = self.chat.attachments
        if self.files_loading:
            self.parts.status.showMessage(FILES_LOADING, 8_000)
            return
        if files.has_pending() and not files.ready_to_send(
                self.chat.models.model_for(message.session_id) or ""):
            return  # a file is still being read, or over the model's limits (it says)
        taken = files.take()
        if not text.strip() and not taken.items:
            self.take_back(message.id)
            self._end_edit()
            return
        edited = QueuedMessage(message.id, message.session_id, message.position, text,
                               message.created_at, queued_files(taken.items))
        self.items[message.session_id] = [edited if m.id == message.id else m
                                          for m in self.items.get(message.session_id, ())]
        self.parts.tasks.spawn(
            self.chat.store.edit_queued(message.id, text, new_files(taken.items)),
            name="edit-queued")
        self._end_edit()
        self.refresh()
        self.pump(message.session_id)

    def cancel_edit(self) -> None:
        """Esc while a queued message is edited: it stays as it was."""
        message = self.editing
        self._end_edit()
        if message is not None:
            self.pump(message.session_id)

    def _end_edit(self) -> None:
        message, self.editing = self.editing, None
        self.chat.attachments.end_edit()  # the files pending before it are back
        self.parts.composer_bar.banner.setVisible(False)
        self.parts.composer.clear()
        if message is not None:
            self.chat.drafts.typed(message.session_id, "")

    # -- sending ------------------------------------------------------------------
    def pump(self, sid: str) -> None:
        """Send chat ``sid``'s next queued message if nothing holds it (a run, a pause,
        an edit, one already leaving)."""
        queue = self.items.get(sid)
        if (not queue or self.closing or sid in self.paused or sid in self.leaving
                or self.runs.running(sid)
                or (self.editing is not None and self.editing.session_id == sid)):
            return
        message = queue.pop(0)
        self.leaving[sid] = message.id
        self._unsaved[sid] = message
        self.refresh()
        # Held from now (ChatRuns.hold): an Enter before its run starts goes behind it.
        self.runs.start(sid, self._send(sid, message), how="send",
                        model=self.chat.models.model_for(sid), name="send-queued")

    async def _send(self, sid: str, message: QueuedMessage) -> None:
        """Send a queued message, its files read back from the store first."""
        # A file unreadable raises: it waits, paused, for the person (ChatRuns lets the
        # chat go and calls after_run).
        blocks = await blocks_of(self.chat.store, message)
        await self.runs.run(sid, "send", blocks, self.chat.models.model_for(sid), None,
                            turn_id=message.id, on_saved=lambda: self._sent(message))

    def _sent(self, message: QueuedMessage) -> None:
        """The queued message is the chat's saved user turn now: its row goes."""
        if self._unsaved.get(message.session_id) is message:
            del self._unsaved[message.session_id]
        self.parts.tasks.spawn(self.chat.store.take_queued(message.id), name="queued-sent")

    def after_run(self, sid: str, finished: bool) -> None:
        """A run of chat ``sid`` ended: with its reply saved, the next queued message
        goes; else (stopped, failed) the queue waits for the person."""
        left = self.leaving.pop(sid, None)
        out = self._unsaved.pop(sid, None)  # not saved as a turn: still queued, first
        queue = self.items.setdefault(sid, [])
        if not finished and out is not None and all(m.id != out.id for m in queue):
            queue.insert(0, out)
        if self.closing:
            return
        if finished:
            self.pump(sid)
            return
        if self.has(sid) or left is not None:
            self.paused.add(sid)
            self.parts.tasks.spawn(self._read_again(sid), name="queue-read")

    async def _read_again(self, sid: str) -> None:
        """Read the chat's queue from the store (a message that did not leave is back)."""
        messages = await self.chat.store.queued_messages(sid)
        leaving = self.leaving.get(sid)
        self.items[sid] = [m for m in messages if m.id != leaving and m.id not in self.gone]
        self._read.add(sid)
        if self.items[sid] and sid == self.chat.session_id:
            self.parts.status.showMessage(PAUSED_STOPPED, 10_000)
        self.refresh()

    # -- chats shown ----------------------------------------------------------------
    async def tell_restored(self) -> None:
        """At start: say in the status bar how many other chats hold messages queued
        before Parley closed (each shows them, paused, when opened)."""
        counts = await self.chat.store.queued_sessions()
        others = [sid for sid in counts if sid != self.chat.session_id]
        if others:
            n = len(others)
            self.parts.status.showMessage(
                f"Messages queued before Parley closed wait in {n} other "
                f"chat{'s' if n > 1 else ''}: open {'them' if n > 1 else 'it'} to send or "
                "take them back.", 15_000)

    def shown(self, sid: str | None) -> None:
        """Chat ``sid`` is shown: its queue too (read from the store the first time: a
        queue found so was written before this start, and waits to be asked)."""
        left = self.editing
        if left is not None and left.session_id != sid:  # the edit is left as it was
            self.editing = None
            self.chat.attachments.end_edit()  # its files leave the tray
            self.parts.composer_bar.banner.setVisible(False)
            # The box's text was that chat's draft meanwhile: it is the queued message's.
            self.parts.tasks.spawn(self.chat.drafts.discard(left.session_id),
                                   name="discard-draft")
            self.pump(left.session_id)
        self.refresh()
        if sid is not None and sid not in self._read:
            self.parts.tasks.spawn(self._read_once(sid, restored=True), name="queue-read")

    async def _read_once(self, sid: str, *, restored: bool = False) -> None:
        if sid in self._read:
            return
        self._read.add(sid)
        messages = await self.chat.store.queued_messages(sid)
        known = {m.id for m in self.items.get(sid, ())}
        found = [m for m in messages if m.id not in known and m.id != self.leaving.get(sid)
                 and m.id not in self.gone]
        if found and restored:
            self.paused.add(sid)
            self.restored.add(sid)
        self.items[sid] = found + self.items.get(sid, [])
        self.refresh()

    def refresh(self) -> None:
        """Show the open chat's queue (hidden when it has none); a chat whose queue
        emptied is not held any more (what is queued next goes by itself)."""
        for emptied in [s for s in self.paused | self.restored if not self.items.get(s)]:
            if emptied not in self.leaving and not self.adding.get(emptied):
                self.paused.discard(emptied)
                self.restored.discard(emptied)
        sid = self.chat.session_id
        messages = self.items.get(sid, []) if sid is not None else []
        self.view.show_queue(messages, paused=sid in self.paused,
                             restored=sid in self.restored,
                             compacting=sid in self._after_compaction)
        self._row.setVisible(bool(messages))
        self._say_what_escape_does()

    def _say_what_escape_does(self) -> None:
        """The hint under the box names what Esc does now (:meth:`on_escape`): pause the
        queue going out (an empty box, not editing), else stop the reply."""
        sid = self.chat.session_id
        self.parts.composer_bar.escape_pauses(
            self.editing is None and self._queued(sid) and sid not in self.paused
            and not self.parts.composer.text())
