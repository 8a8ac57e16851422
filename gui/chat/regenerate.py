"""Regenerate the last reply, and open attachments clicked in the transcript.

Regenerate (Ctrl+Shift+R, the "↻ Regenerate" link under the last reply, the
context menu, the palette) asks for another answer to the last message
(``parley.core.chat.regenerate``): the current answer stays in the chat's tree and
the new one streams in its place as its sibling (‹ n/m › under the reply switches
between the answers, ``ChatOpener.switch_branch``).
"with another model…" offers the models of the model picker; the chat keeps
its own model for the messages after.

What can be checked first is checked before the answer is set aside
(``parley.core.chat.regenerate.preflight``: the model's provider is set up, the files of
the conversation can go to it); a refusal leaves the chat as it was and says
why. A request that fails after that says where the previous answer is kept
(‹ under the message), and Retry asks the same model again. Pressed while Parley is still
starting, it waits for the model's provider ("Connecting to …", Esc calls it
off) as a message does, then regenerates.

A reply written by a model other than the chat's current one, or any reply with
siblings (several models' answers, ‹ n/m ›), says which in a
muted line under it ("Answered by Opus 4.6", ``parley.gui.transcript.specs``): this
module names the models for the transcript (:meth:`ChatRegenerate.answered_by`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtWidgets import QWidget

    from parley.core.chat.regenerate import ReplySetAside
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.transcript import TranscriptView

#: How the status-bar hints after a regeneration begin (a new message clears them).
ANSWER_KEPT_HINT = "The previous answer is kept"
KEPT_MESSAGE = (f"{ANSWER_KEPT_HINT}: ‹ › under the new one (or Alt+Left / Alt+Right "
                "on it) switches between the answers.")
NOTHING_YET = "Nothing to regenerate yet: send a message first."
BUSY = "A reply is being written: wait for it (or press Esc), then regenerate."
NO_MODEL = "Choose a model first (the menu at the top)."
KEPT_AFTER_FAILURE = (f"{ANSWER_KEPT_HINT}: ‹ under your message shows it. "
                      "Retry asks {model} again.")


class ChatRegenerate:
    """Regenerate and open-attachment handling for one chat controller.

    Args:
        chat: the open chat's controller.
        transcript, model_picker, status, tasks: the window's transcript, model picker,
            status bar and background tasks.
        parent: the main window as a widget (an image opened is shown over it).
        home: the data folder (a document opened is written under it; None: the default).
    """

    def __init__(self, chat: OpenChat, transcript: TranscriptView, model_picker: ModelPicker,
                 status: OneLineStatusBar, tasks: TaskSet, parent: QWidget,
                 home: Path | None) -> None:
        self.transcript, self.model_picker, self.status = transcript, model_picker, status
        self.tasks, self.parent, self.home = tasks, parent, home
        self.chat = chat
        self._asked: dict[str, str] = {}  # sid -> the model of its regeneration under way
        self._kept: set[str] = set()  # sids whose answer was set aside for a new one
        transcript.regenerateRequested.connect(lambda ref: self.regenerate(ref or None))
        transcript.mediaRequested.connect(self.open_media)
        transcript.model_choices = self.model_choices
        self._picked: tuple[str, str] | None = None  # (sid, model) picked in the header
        #: provider:model -> (its "Answered by" name, its label) the replies were laid out with
        self._names: dict[str, tuple[str | None, str]] = {}
        self._install_names()
        model_picker.model_chosen.connect(self._model_chosen)
        # The models' display names arrive with the picker's menu (after start-up).
        model_picker.choices_changed.connect(self.names_changed)

    def model_choices(self) -> list[tuple[str, str]]:
        """[(label, provider:model)] of the model picker, the chat's own model first."""
        current = self.chat.current_model()
        choices = self.model_picker.choices
        groups = {c.group for c in choices}
        out = [(f"{c.label}  ·  {c.group}" if len(groups) > 1 else c.label, c.ref)
               for c in choices]
        out.sort(key=lambda item: item[1] != current)
        return out

    def why_not(self) -> str | None:
        """Why the open chat cannot be regenerated now (None: it can)."""
        sid = self.chat.session_id
        if sid is None or not self.chat.turns:
            return NOTHING_YET
        if self.chat.runs.running(sid):
            return BUSY
        return None

    def regenerate(self, model_ref: str | None = None) -> bool:
        """Answer the open chat's last message again, with ``model_ref`` (default: the
        chat's model). False when there is nothing to regenerate now (no saved chat,
        a reply is being written, no model); the status bar says why. While Parley
        is starting it waits for the providers (``ChatRuns.run``; with no model
        yet, the chat's once they are loaded)."""
        model = model_ref or self.chat.current_model()
        starting = self.chat.runner is None
        why = self.why_not() or (None if model or starting else self.chat.models.no_model_reason())
        if why is not None:
            self.status.showMessage(why, 8_000)
            return False
        sid = str(self.chat.session_id)
        # Held at once (ChatRuns.hold): Enter right after it queues behind the new answer.
        self.chat.runs.start(sid, self._regenerate(sid, model), how="regenerate", model=model,
                             name="regenerate")
        return True

    async def _regenerate(self, sid: str, model: str | None) -> None:
        """Run the regeneration (a refusal raises ``RegenerateRefused``, which the
        window shows; nothing changed then)."""
        self._asked[sid] = model or ""  # "": the chat's, once the providers are loaded
        try:
            await self.chat.runs.run(sid, "regenerate", None, model, None)
        finally:
            self._asked.pop(sid, None)
            self._kept.discard(sid)

    def run_ended(self, sid: str) -> None:
        """A Retry in ``sid`` ended: the reply it set aside (a stopped or cut-off one,
        ``parley.core.chat.regenerate.retry_incomplete``) is not spoken of after the
        next run (as :meth:`_regenerate` forgets its own)."""
        self._kept.discard(sid)

    def after_failure(self, sid: str, message: str) -> str:
        """The inline error of a failed run in ``sid``: ``message``, plus where the
        previous answer is when the run was a regeneration that had set it aside."""
        model = self._asked.get(sid) or self.chat.current_model()
        if sid not in self._kept or model is None:
            return message
        note = KEPT_AFTER_FAILURE.format(model=self.model_picker.label_of(model))
        return f"{message} {note}"

    def after_stop(self, sid: str) -> None:
        """A run in the open chat was stopped: if it was a regeneration, say again in
        the status bar where the previous answer is."""
        if sid in self._kept:
            self.status.showMessage(KEPT_MESSAGE, 15_000)

    def pick_model(self) -> bool:
        """Show the models to regenerate with, under the model picker."""
        why = self.why_not()
        if why is not None:
            self.status.showMessage(why, 8_000)
            return False
        picker = self.model_picker
        self.transcript.show_model_menu(picker.mapToGlobal(QPoint(0, picker.height())))
        return True

    def reply_set_aside(self, ev: ReplySetAside) -> None:
        """The old reply left the path (it stays in the chat's tree, a sibling of the new
        one to come): drop it from the view."""
        self._kept.add(ev.session_id)
        if ev.session_id != self.chat.session_id:
            return
        self.chat.state.drop(set(ev.removed_turn_ids))
        self.chat.opener.show_turns()  # cards stay in place (stored positions, compaction spans)
        if ev.carried is not None:  # the new branch starts with a summary's copy: its card
            self.tasks.spawn(self.chat.opener.reload(read_unseen=False), name="carried-summary")
        self.transcript.set_busy(True)
        self.status.showMessage(KEPT_MESSAGE, 15_000)

    # -- which model answered ---------------------------------------------------------
    def own_model(self) -> str | None:
        """The open chat's current model (one just picked in the header counts at once,
        while its save is under way)."""
        sid = self.chat.session_id
        if sid is not None and self._picked is not None and self._picked[0] == sid:
            return self._picked[1]
        return self.chat.current_model()

    def answered_by(self, ref: str) -> str | None:
        """The display name shown under a reply written by ``ref`` (``provider:model``);
        None (no line) when ``ref`` is the open chat's current model."""
        if ref == self.own_model():
            return None
        return self.model_picker.label_of(ref)

    def _model_chosen(self, ref: str) -> None:
        if self.chat.session_id is not None:
            self._picked = (self.chat.session_id, ref)
        self.names_changed()

    def names_changed(self) -> None:
        """The chat's model or the models' names changed: lay out again the replies whose
        model's name line changed (the picker lists the models twice as the window starts,
        the same names the second time: a 96-reply chat was laid out again for 60 ms of
        the GUI thread each time, issue 33)."""
        model = self.transcript.model
        replies = [node for node in model.transcript.nodes.values()
                   if node.kind == "turn" and node.turn.role == "assistant" and node.turn.model]
        refs = {ref for node in replies if (ref := node.turn.model)}
        names = {ref: (self.answered_by(ref), self.model_picker.label_of(ref)) for ref in refs}
        changed = {ref for ref, shown in names.items() if self._names.get(ref) != shown}
        self._names.update(names)
        redo = [node for node in replies if node.turn.model in changed]
        for node in redo:
            node.touch()
        model.refresh_many(redo)

    def _install_names(self) -> None:
        """Give the transcript's row builder :meth:`answered_by` (the delegate keeps it
        when a new palette or font makes a new builder), and its tooltips the models'
        display names."""
        self.transcript.list_view.model_name = self.model_picker.label_of
        specs = self.transcript.list_view.delegate.builder.specs
        if specs.answered_by != self.answered_by:
            specs.answered_by = self.answered_by
            specs.model_label = self.model_picker.label_of
            self._names.clear()  # every reply's line again
            self.names_changed()

    def open_media(self, block: Any) -> None:
        """Open an image or document clicked in the transcript
        (``parley.gui.dialogs.media_viewer``)."""
        from parley.gui.dialogs.media_viewer import open_media

        self.tasks.spawn(open_media(self.chat.store, self.parent, self.home, block),
                         name="open-media")
