"""Reshaping a conversation: edit a message (a new branch), fork from a message, compact.

Nothing here destroys a turn. Editing a user message and sending it adds the
edited message as a sibling of the original in the same chat
(``parley.core.chat.edit.edit_message``): the chat's path now ends at it, it is
answered there, and ‹ n/m › on the message goes back to the original with what
followed it. "Fork from here" copies the conversation up to a message into a
new session. Compaction replaces older turns by a summary in the
model's context only (the transcript shows a card that expands to them);
its progress shows in the status bar, and a failure is told in one line there
(``parley.gui.chat.unseen``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QLabel, QProgressBar

from parley.core.attachments.files import parse_text_file
from parley.core.content import Block, DocumentBlock, ImageBlock, TextBlock, Turn
from parley.core.errors import ParleyError
from parley.gui.chat.compact_notice import WOULD_NOT_REDUCE
from parley.gui.transcript.specs import is_continue_message

if TYPE_CHECKING:
    from parley.core.compaction.types import CompactEvent
    from parley.core.tasks import TaskSet
    from parley.gui.chat.attach import Taken
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.composer.widget import Composer, ComposerBar
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.notices.undo import UndoManager
    from parley.gui.transcript import TranscriptView

log = logging.getLogger(__name__)

EDIT_BANNER = "Editing a message  ·  Enter sends it as a new branch (the original stays)  ·  " \
              "Esc cancels"
#: Up or "Edit message" while a reply is being written: the message cannot change under it.
EDIT_AFTER_REPLY = ("A reply is being written: press Esc to stop it, or wait; then Up edits "
                    "your last message.")
#: The same while the chat is being compacted (no reply coming).
EDIT_AFTER_COMPACTING = "This chat is being compacted: edit your message when that is done."
#: An edit draft came back but the message it edited is not on the path shown.
EDIT_NOT_SHOWN = ("The message you were editing is not shown (another branch is chosen, or it "
                  "was deleted): your text is kept as a plain draft.")
NOT_COMPACTED = {
    "nothing-to-compact": "There is nothing to compact yet: the conversation is shorter than "
                          "the turns kept word for word.",
    "no-session": "This chat is not saved yet, so there is nothing to compact.",
    "aborted": "Compaction was stopped; nothing was changed.",
    "would-not-reduce": WOULD_NOT_REDUCE,
    "newest-too-long": "This chat is over the model's context window, but there is nothing "
                       "older to compact: its newest message alone is too long. Shorten it, "
                       "or pick a model with a larger context window.",
}
STAGES = {
    "summarizing": "Compacting: writing a summary…",
    "summarizing-separately": "Compacting: writing a summary (separate request)…",
    "summarizing-in-parts": "Compacting a long conversation: summarizing part {part} of {parts}…",
    "combining": "Compacting: combining the summaries of {parts} parts…",
    "saving": "Compacting: saving the summary…",
}


def compacted_text(result: Any, before: int | None = None, after: int | None = None) -> str:
    """What "Compact now" says once a summary is saved (``CompactResult``): how many
    messages it stands for and the context before and after in the context meter's
    own figures (``ChatMeter.shown`` / ``ChatMeter.settled``: the provider's count where
    there is one), written as the meter writes them ("1.4k"), so the two never disagree
    (trial 21: the toast gave Parley's local estimate, the meter the provider's count).

    Args:
        result: the compaction's ``CompactResult`` (``replaced_count``).
        before: the meter's tokens when "Compact now" was chosen, or None (not shown).
        after: the meter's tokens once the summary is counted, or None (not known).
    """
    from parley.gui.header.context_meter import short_count

    n = result.replaced_count
    kept = f"{n:,} earlier message{'s' if n != 1 else ''} {'are' if n != 1 else 'is'} now a summary"
    if before and after:
        was, now = short_count(before), short_count(after)
        if after >= before:  # said as it is, not as if it had helped
            moved = f"{was} → {now}" if was != now else f"about {now}"
            size = f"; the context did not get smaller ({moved} tokens)"
        elif was != now:
            size = f"; context {was} → {now} tokens"
        else:
            size = f"; the context is a little smaller (still about {now} tokens)"
    elif after:
        size = f"; context now {short_count(after)} tokens"
    else:
        size = ""
    return f"Compacted: {kept}{size}. The full conversation is kept."


def _compact_failures() -> tuple[type[BaseException], ...]:
    """The errors of a compaction told as its failure (not the refusals of a busy chat
    or a store problem, which the window tells as any other)."""
    from parley.core.compaction.compact import (
        CompactInvalidInputError,
        CompactNoSummaryError,
        CompactPromptTooLongError,
    )
    from parley.core.compaction.settings import UnusableModelSetting
    from parley.core.providers.errors import ProviderError

    return (CompactNoSummaryError, CompactPromptTooLongError, CompactInvalidInputError,
            ProviderError, UnusableModelSetting)


def _is_file(block: object) -> bool:
    """An attached file: an image, a document, or a text file's block."""
    if isinstance(block, TextBlock):
        return parse_text_file(block) is not None
    return isinstance(block, ImageBlock | DocumentBlock)


def typed_text(turn: Turn) -> str:
    """What the person typed in a message (its text blocks without attached text files)."""
    return "".join(b.text for b in turn.blocks if isinstance(b, TextBlock) and not _is_file(b))


class ChatEditor:
    """Edit, fork and compact for one :class:`~parley.gui.chat.controller.ChatController`.

    Args:
        chat: the open chat's controller.
        transcript, composer, composer_bar, status, undo, tasks: the window's transcript,
            message box and its bar, status bar, notices and background tasks.
    """

    def __init__(self, chat: OpenChat, transcript: TranscriptView, composer: Composer,
                 composer_bar: ComposerBar, status: OneLineStatusBar, undo: UndoManager,
                 tasks: TaskSet) -> None:
        self.transcript, self.composer, self.composer_bar = transcript, composer, composer_bar
        self.status, self.undo, self.tasks = status, undo, tasks
        self.chat = chat
        self.editing: Turn | None = None
        self.compacting: set[str] = set()
        self._unhook: list[Any] = []
        transcript.editRequested.connect(self.edit_message)
        transcript.forkRequested.connect(self.fork_at)
        self.progress_label = QLabel("")
        self.progress_label.setAccessibleName("Compaction progress")
        self.progress_bar = QProgressBar()
        self.progress_bar.setAccessibleName("Compaction progress bar")
        self.progress_bar.setRange(0, 0)  # busy: the summary's length is not known ahead
        self.progress_bar.setMaximumWidth(120)
        self.progress_bar.setMaximumHeight(10)
        self.progress_bar.setTextVisible(False)

    # -- editing ------------------------------------------------------------------
    def set_editing(self, turn: Turn | None) -> None:
        """Enter (a turn) or leave (None) edit mode; the composer shows a banner and the
        tray the message's files (``ChatAttachments.begin_edit``). The open chat's
        draft is marked as editing that turn, or as plain (``Drafts.mark_edit``), so a
        restart brings it back as it was (:meth:`resume`)."""
        self.chat.drafts.mark_edit(self.chat.session_id, turn.id if turn is not None else None)
        attachments = getattr(self.chat, "attachments", None)
        if attachments is not None and self.editing is not None:
            attachments.end_edit()
        if attachments is not None and turn is not None:
            attachments.begin_edit(turn.blocks)
        self.editing = turn
        self.composer_bar.set_editing(turn is not None)
        if turn is not None:
            self.composer_bar.banner.setText(EDIT_BANNER)

    def resume(self, turn_id: str | None) -> None:
        """A chat was opened with a draft that edits ``turn_id`` (``Drafts.edit_of``;
        None: a plain draft): edit mode comes back with the box's text as it is. When
        that message is not on the path shown (another branch was chosen, or it is
        gone) the text stays as a plain draft and the status bar says so."""
        if turn_id is None:
            return
        turn = next((t for t in self.chat.turns if t.id == turn_id), None)
        if turn is not None and turn.role == "user":
            self.set_editing(turn)
            return
        self.set_editing(None)
        self.chat.keep_draft()  # written again as a plain draft
        self.status.showMessage(EDIT_NOT_SHOWN, 15_000)

    def edit_last(self) -> bool:
        """Up in an empty composer: bring back the last user message to edit and resend.

        While a reply is written (or the chat compacted) nothing is edited and the
        status bar says why (:meth:`_busy`), so what is typed next is not taken
        for the edit."""
        if self.composer.text() or self._busy():
            return False
        turns = self.chat.turns
        last = next((t for i, t in reversed(list(enumerate(turns)))
                     if t.role == "user" and typed_text(t)
                     and not is_continue_message(t, turns[i - 1] if i else None)), None)
        if last is None:
            return False
        self._begin(last)
        return True

    def edit_message(self, turn_id: str) -> None:
        """"Edit message" on any user message: its text goes to the composer to edit."""
        turns = self.chat.turns
        i = next((i for i, t in enumerate(turns) if t.id == turn_id), None)
        if i is None or self._busy():
            return
        turn = turns[i]
        if turn.role != "user" or is_continue_message(turn, turns[i - 1] if i else None):
            return  # Continue's message is Parley's, not the person's
        self._begin(turn)

    def _busy(self) -> bool:
        """True while the open chat has a reply being written or is being compacted;
        then the status bar says that editing waits (the refusals of sending say
        the same in ``parley.gui.chat.run``)."""
        sid = self.chat.session_id
        if not self.chat.runs.running(sid):
            return False
        why = EDIT_AFTER_COMPACTING if sid in self.compacting else EDIT_AFTER_REPLY
        self.status.showMessage(why, 8_000)
        return True

    def _begin(self, turn: Turn) -> None:
        self.set_editing(turn)
        self.composer.set_text(typed_text(turn))
        self.composer.setFocus()
        self.chat.runs.activity(self.chat.session_id)

    def cancel(self) -> bool:
        """Leave edit mode and empty the composer (Esc); False when not editing."""
        if self.editing is None:
            return False
        self.set_editing(None)
        self.composer.clear()
        return True

    async def send_edit(self, sid: str, turn: Turn, text: str, model: str,
                        files: Taken | None = None) -> None:
        """Send an edited message: it becomes the original's sibling in the same chat,
        the chat shows its branch, and it is answered there.

        The edited message holds the files left in the tray (``files``: the
        original's, less those removed, plus those added), then the new text.

        The chat's draft (the box's text while it was edited) is forgotten in the
        store before the edit is saved (``Drafts.discard``).

        Raises:
            ParleyError: the edited message is too long for the model
                (``MessageTooLong``) or could not be saved (the text goes back
                to the composer, ``files`` to the tray).
        """
        from parley.core.chat.edit import edit_message

        self.chat.runs.activity(sid)
        blocks: list[Block] = []
        if files is not None and files.items:
            blocks = await asyncio.to_thread(lambda: files.blocks)
        if text.strip():
            blocks.append(TextBlock(text))
        try:
            # Too long for the model: refused before anything is saved (MessageTooLong).
            runner = self.chat.runner
            assert runner is not None  # sent once the provider is ready (ChatRuns)
            runner.check_message(blocks, model_ref=model)
            # The box's text while it was edited is the chat's draft in the store: it
            # goes before the edit is saved, or a kill right after would bring the
            # message back as a plain draft (Enter would send it again as a new one).
            await self.chat.drafts.sent(sid)  # what was typed since Enter stays
            edited = await edit_message(self.chat.store, sid, turn.id, blocks)
        except ParleyError:
            self.chat.runs.give_back(text)
            if files is not None:
                self.chat.attachments.give_back(files)
            raise
        # The path now ends at the edited message: shown before its answer streams, from
        # what is held (nothing of the chat read again, however long it is), else read
        # again (a store error here reaches the window; the edit is saved and can be
        # retried).
        opener = self.chat.opener
        if opener.edited(sid, turn.id, edited) or await opener.reread(sid, at=edited.id,
                                                                         offer=False):
            self.transcript.scroll_to_end()
        await self.chat.runs.run(sid, "retry", None, model, None)

    # -- forking -----------------------------------------------------------------
    def fork_at(self, turn_id: str) -> None:
        """Fork the open chat at ``turn_id`` (inclusive) and open the fork."""
        sid = self.chat.session_id
        if sid is not None:
            self.tasks.spawn(self._fork(sid, turn_id), name="fork")

    def fork_at_focused(self) -> bool:
        """Fork at the focused message of the transcript (else the last one)."""
        turn_id = self.transcript.focused_turn_id()
        ids = self.transcript.turn_ids()
        if turn_id is None or turn_id not in ids:
            turn_id = ids[-1] if ids else None
        if turn_id is None or self.chat.session_id is None:
            return False
        self.fork_at(turn_id)
        return True

    async def _fork(self, sid: str, turn_id: str) -> None:
        fork = await self.chat.store.fork(sid, turn_id)
        await self.chat.opener.show_fork(fork)

    # -- compaction ------------------------------------------------------------------
    def attach(self, runner: Any) -> None:
        """Listen to the run loop's compaction events (``parley.core.events``)."""
        from parley.core.compaction.types import CompactEvent

        self._unhook.append(runner.events.on(CompactEvent, self._on_compact))

    def detach(self) -> None:
        for unhook in self._unhook:
            unhook()
        self._unhook.clear()

    def compact_now(self) -> bool:
        """Compact the open chat now, keeping ``compaction.keep_turns`` turns verbatim."""
        sid = self.chat.session_id
        if sid is None or self.chat.runner is None:
            if sid is None:
                self.undo.notice(NOT_COMPACTED["no-session"])
            return False
        before = self.chat.meter.shown(sid)  # as the person sees it now
        self.tasks.spawn(self._compact(sid, before), name="compact")
        return True

    async def _compact(self, sid: str, before: int | None = None) -> None:
        from parley.core.settings import Settings

        keep = await Settings.of(self.chat.store).get("compaction.keep_turns")
        self.chat.runs.activity(sid)
        runner = self.chat.runner
        assert runner is not None  # compact_now asks only once the runner is attached
        try:
            result = await runner.compact(sid, keep_turns=int(keep),
                                          on_unseen=self.chat.runs.events.on_event)
        except _compact_failures() as exc:  # told in one line, the rest in Details
            self.chat.unseen.failed(sid, exc, auto=False)
            return
        if not result.compacted:
            self.undo.notice(NOT_COMPACTED.get(result.reason or "", "Nothing was compacted."))
            return
        try:
            after = await self.chat.meter.settled(sid)  # the figure the meter shows next
        except ParleyError:  # the summary is saved: said without the figure
            after = None
        self.undo.notice(compacted_text(result, before, after))

    def _on_compact(self, event: CompactEvent) -> None:
        sid, name = event.session_id, event.name
        if name == "compact:start":
            self.compacting.add(sid)
            self._show_progress(STAGES["summarizing"])
        elif name == "compact:progress":
            text = STAGES.get(event.stage, "Compacting…").format(
                part=event.part, parts=event.parts)
            chars = event.received_chars
            self._show_progress(f"{text} {chars:,} characters" if chars else text)
        elif name == "compact:end":
            self.compacting.discard(sid)
            if not self.compacting:
                self._hide_progress()
            result = event.result
            if result is not None and result.summary_turn is not None:
                self.chat.unseen.compacted(sid)  # the summary stands for the older turns
                if sid == self.chat.session_id:
                    self.tasks.spawn(self.chat.opener.reload(read_unseen=False),
                                       name="reload-after-compaction")
            error = event.error
            if error is not None and event.trigger == "auto":
                # A manual compaction's error is shown by the task that awaited it, the
                # idle timer's by its own handler; this one only reached the log.
                self.chat.unseen.failed(sid, error, auto=True)

    def _show_progress(self, text: str) -> None:
        bar = self.status
        if self.progress_label.parent() is not bar:
            bar.addWidget(self.progress_label, 1)
            bar.addPermanentWidget(self.progress_bar)
        self.progress_label.setText(text)
        bar.show_lasting(self.progress_label)  # not over a message
        self.progress_bar.show()
        bar.show()

    def _hide_progress(self) -> None:
        # The widgets go, not the status bar: its messages must stay visible afterwards.
        self.progress_label.setText("")
        self.progress_label.hide()
        self.progress_bar.hide()
