"""Ask several models, in the window: the picker, the run, the side-by-side view.

Ctrl+Shift+Enter in the message box ("Ask several models…", also in the palette) sends
the message to 2–4 models at once; Ctrl+Shift+A ("Answer with several models…") has
them answer the chat's last message again, the current answer kept. A small picker
chooses the models (:class:`parley.gui.chat.several_picker.SeveralPicker`; the last
choice is remembered, ``SEVERAL_MODELS``), then the answers stream side by side
(:class:`parley.gui.transcript.compare.CompareView`) while the core writes them as
siblings (``parley.core.chat.several``). When they are done the chat shows the first
complete one, ‹ 1/n › under it with each model's name; choosing another in the view
(Enter, 1–4, its button) continues the chat from it. Esc in the message box stops them
all, as it stops a reply; a message sent (Enter) while they answer is queued
(``parley.gui.chat.queue``) and follows the answer shown once they are done.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from parley.core.app_state import SEVERAL_MODELS
from parley.core.content import Block, TextBlock
from parley.core.errors import ParleyError

if TYPE_CHECKING:
    from parley.core.chat.several import SeveralEvent
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.chat.parts import ChatParts
    from parley.gui.chat.regenerate import ChatRegenerate
    from parley.gui.chat.run import ChatRuns
    from parley.gui.chat.several_picker import SeveralPicker
    from parley.gui.transcript.compare import CompareView

NOTHING_TYPED = "Type a message first, then press {keys} to ask several models."
TOO_FEW = "Ask several models needs at least two models: set up another provider or model."
STARTING = "Parley is still connecting to the providers: try again in a moment."


class ChatSeveral:
    """The window's side of "Ask several models" (module doc).

    Args:
        chat: the open chat's controller.
        runs: its runs (the message box's text given back, a new chat's row, busy marks).
        parts: the window's parts.
        regen: the chat's regeneration (the models offered, why a chat cannot be
            answered again now).
    """

    def __init__(self, chat: OpenChat, runs: ChatRuns, parts: ChatParts,
                 regen: ChatRegenerate) -> None:
        self.chat, self.runs, self.parts, self.regen = chat, runs, parts, regen
        #: The side-by-side view of the last run (kept open after it ends, until closed).
        self.view: CompareView | None = None
        #: The model picker last shown (None before the first).
        self.picker: SeveralPicker | None = None
        parts.transcript.answerWithRequested.connect(self.answer_again)

    # -- entry points --------------------------------------------------------------
    def ask_from_composer(self) -> bool:
        """Ctrl+Shift+Enter: pick the models, then send the message box's text to them.
        Always consumes the key; the status bar says why when it cannot be done now."""
        text = self.parts.composer.text()
        if not text.strip():
            keys = self.parts.keymap.shown("composer.ask_several")
            self.parts.status.showMessage(NOTHING_TYPED.format(keys=keys), 8_000)
            return True
        why = self._why_not() or self.runs.why_not_send(self.chat.session_id)
        if why is not None:
            self.parts.status.showMessage(why, 8_000)
            return True
        self._pick("Ask several models", lambda models: self._send(text, models))
        return True

    def answer_again(self) -> bool:
        """Ctrl+Shift+A: pick the models, then have them answer the last message again."""
        why = self._why_not() or self.regen.why_not()
        if why is not None:
            self.parts.status.showMessage(why, 8_000)
            return False
        sid = str(self.chat.session_id)
        self._pick("Answer with several models", lambda models: self.run(sid, None, models))
        return True

    def _why_not(self) -> str | None:
        if self.chat.runner is None:
            return STARTING
        if len(self.regen.model_choices()) < 2:
            return TOO_FEW
        return None

    def _pick(self, title: str, then: Callable[[list[str]], Any]) -> None:
        """Show the picker with the last choice checked; ``then(models)`` once chosen."""
        self.parts.tasks.spawn(self._show_picker(title, then), name="several-picker")

    async def _show_picker(self, title: str, then: Callable[[list[str]], Any]) -> None:
        from parley.gui.chat.several_picker import SeveralPicker

        last = await SEVERAL_MODELS.get(self.chat.store, default=[])
        picker = SeveralPicker(self.parts.parent, self.regen.model_choices(),
                               [str(m) for m in last] if isinstance(last, list) else [],
                               title)
        self.picker = picker

        def chosen(models: list[str]) -> None:
            self.parts.tasks.spawn(SEVERAL_MODELS.set(self.chat.store, models),
                                   name="several-remember")
            sid = self.chat.session_id
            if sid is None:  # a new chat: held once it has its row (ChatRuns._session_for_send)
                self.runs.new_chat_send = self.parts.tasks.spawn(then(models), name="several")
                return
            why = self.runs.why_not_send(sid)  # a queued message may have left meanwhile
            if why is not None:
                self.parts.status.showMessage(why, 8_000)
                return
            # Held at once (ChatRuns.hold): an Enter right after it is queued behind.
            self.runs.start(sid, then(models), how="several", model=None, name="several")

        picker.chosen.connect(chosen)
        picker.finished.connect(picker.deleteLater)
        picker.open()

    def _send(self, text: str, models: list[str]) -> Coroutine[Any, Any, None]:
        """Empty the message box now (keys typed next are a new message) and return the
        asking of ``models`` about ``text`` in the open chat (:meth:`_ask`)."""
        self.parts.composer.clear()
        self.chat.drafts.typed(self.chat.session_id, "")
        return self._ask(text, models)

    async def _ask(self, text: str, models: list[str]) -> None:
        """Ask ``models`` about ``text`` in the open chat (a new chat gets its row first);
        nothing sent: the text goes back to the box."""
        try:
            sid = await self.runs._session_for_send(models[0])
        except ParleyError:
            self.runs.give_back(text)
            self.runs.give_back_behind_new_chat()  # sent meanwhile: after it
            raise
        await self.run(sid, [TextBlock(text)], models, text=text)

    # -- the run ---------------------------------------------------------------------
    async def run(self, sid: str, blocks: list[Block] | None, models: list[str], *,
                  text: str | None = None) -> None:
        """Ask ``models`` in chat ``sid``: about ``blocks`` (a new message), or (None) the
        last message again; the answers stream into a new side-by-side view.

        Raises:
            ParleyError: nothing could be asked (busy, every model refused …); a new
                message's text went back to the box.
        """
        from parley.core.chat.several import answer_with, ask_several
        from parley.gui.transcript.compare import CompareView

        runner = self.chat.runner
        assert runner is not None
        if self.view is not None:
            self.view.close()
        view = CompareView(self.parts.parent, self.parts.model_picker.label_of)
        self.view = view
        view.chosen.connect(lambda turn_id: self.parts.tasks.spawn(
            self.choose(sid, turn_id), name="several-choose"))
        runs = self.runs
        try:
            task = runs.own(sid, "several", None)
        except ParleyError:
            if text and sid == self.chat.session_id:
                runs.give_back(text)
            view.close()
            raise
        on_event = self._listener(sid, view)
        finished = False  # an answer complete, none stopped: a queued message may go
        try:
            if blocks is not None:
                answers = await ask_several(runner, sid, blocks, model_refs=models,
                                            on_event=on_event)
            else:
                answers = await answer_with(runner, sid, model_refs=models, on_event=on_event)
            finished = any(a.turn is not None for a in answers) and not any(
                a.turn is None and a.error is None for a in answers)
        except ParleyError:
            if text and sid == self.chat.session_id:
                runs.give_back(text)
            view.close()
            raise
        finally:
            let_go = runs.let_go(sid, task)
            if sid == self.chat.session_id:
                await self.chat.opener.reload(read_unseen=False)
                self.chat.meter.update()  # the context meter counts the answer shown
            # Messages queued meanwhile (Enter while they answered) follow the answer
            # shown, as after a reply (parley.gui.chat.queue).
            if let_go:
                runs.queue.after_run(sid, finished)

    def _listener(self, sid: str, view: CompareView) -> Callable[[SeveralEvent], None]:
        """What the core's events show: the view's columns; the chat at the start."""
        from parley.core.chat.events import ProviderProcessSilent
        from parley.core.chat.run import (
            ReplyUpdated,
            RunCancelled,
            RunFailed,
            RunFinished,
            SessionTitled,
        )
        from parley.core.chat.several import AnswerEvent, AnswersFinished, AnswersStarted

        def on_event(ev: SeveralEvent) -> None:
            if isinstance(ev, AnswersStarted):
                view.start(list(ev.answers), [(m, e.message) for m, e in ev.refused])
                view.present()  # it takes the keyboard: 1–4 / Enter / ← → go to it
                if sid == self.chat.session_id:  # the message (and no old answer) shows
                    self.parts.tasks.spawn(self.chat.opener.reload(read_unseen=False),
                                           name="several-started")
            elif isinstance(ev, AnswerEvent):
                inner = ev.event
                if isinstance(inner, ReplyUpdated):
                    view.update_text(ev.turn_id, inner.turn.text())
                elif isinstance(inner, RunFinished):
                    view.answer_done(ev.turn_id, inner.turn.text(), inner.turn.usage)
                    if inner.first_reply:  # a new chat: titled from the answer shown
                        self.runs.events.title_after_first_exchange(sid, inner.turn)
                        if sid == self.chat.session_id:  # its prompt is frozen now
                            self.chat.models.show_documents()
                elif isinstance(inner, RunFailed):
                    view.answer_failed(ev.turn_id, inner.error.message, inner.partial is not None)
                elif isinstance(inner, RunCancelled):
                    view.answer_failed(ev.turn_id, "Stopped", inner.partial is not None)
                elif isinstance(inner, ProviderProcessSilent):  # as a single reply's bar
                    view.answer_silent(ev.turn_id, inner.silent)
            elif isinstance(ev, SessionTitled):  # titled from the message, as a send is
                self.runs.events.on_event(ev)
            elif isinstance(ev, AnswersFinished):
                view.all_done(ev.shown)
                self.runs.events.touch(sid)  # the chat moves to the top of its space
        return on_event

    async def choose(self, sid: str, turn_id: str) -> None:
        """Continue chat ``sid`` from the answer ``turn_id`` (the next message goes below
        it), and show it."""
        from parley.core.chat.several import choose

        runner = self.chat.runner
        assert runner is not None
        await choose(runner, sid, turn_id)
        if sid == self.chat.session_id:
            await self.chat.opener.reload(read_unseen=False)
        self.parts.composer.setFocus()
