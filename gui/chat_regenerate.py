"""Regenerate the last reply, and open attachments clicked in the transcript.

Regenerate (Ctrl+Shift+R, the "↻ Regenerate" link under the last reply, the
context menu, the palette) asks for another answer to the last message
(``core.regenerate``): the current answer moves to a fork titled
"<title> (previous answer)", listed under the chat, and the new answer
streams in its place. "with another model…" offers the models of the model
picker; the chat keeps its own model for the messages after.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint

if TYPE_CHECKING:
    from core.regenerate import ReplySetAside
    from gui.chat_controller import ChatController
    from gui.main_window import MainWindow

KEPT_MESSAGE = "The previous answer is kept in “{title}” (under this chat in the list)."
NOTHING_YET = "Nothing to regenerate yet: send a message first."
NOT_READY = "Parley is still starting; regenerate in a moment."
BUSY = "A reply is being written: wait for it (or press Esc), then regenerate."
NO_MODEL = "Choose a model first (the menu at the top)."


class ChatRegenerate:
    """Regenerate and open-attachment handling for one chat controller."""

    def __init__(self, window: MainWindow, chat: ChatController) -> None:
        self.w = window
        self.chat = chat
        transcript = window.transcript
        transcript.regenerateRequested.connect(lambda ref: self.regenerate(ref or None))
        transcript.mediaRequested.connect(self.open_media)
        transcript.model_choices = self.model_choices

    def model_choices(self) -> list[tuple[str, str]]:
        """[(label, provider:model)] of the model picker, the chat's own model first."""
        current = self.chat.current_model()
        choices = self.w.model_picker.choices
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
        if self.chat.runner is None:
            return NOT_READY
        if self.chat.runs.running(sid):
            return BUSY
        return None

    def regenerate(self, model_ref: str | None = None) -> bool:
        """Answer the open chat's last message again, with ``model_ref`` (default: the
        chat's model). False when there is nothing to regenerate now (no saved chat,
        a reply is being written, no model); the status bar says why."""
        model = model_ref or self.chat.current_model()
        why = self.why_not() or (None if model else NO_MODEL)
        if why is not None or model is None:
            self.w.statusBar().showMessage(why or NO_MODEL, 8_000)
            return False
        sid = str(self.chat.session_id)
        self.w.tasks.spawn(self._regenerate(sid, model), name="regenerate")
        return True

    async def _regenerate(self, sid: str, model: str) -> None:
        forks = await self.chat.store.list_forks(sid)
        kept = sum(1 for f in forks if (f.title or "").startswith("Answer "))
        await self.chat.runs.run(sid, "regenerate", None, model, None,
                                 title=self.fork_title(kept + 1))

    def fork_title(self, n: int = 1) -> str:
        """The title of the fork keeping the current answer, the ``n``-th kept: what
        tells it from the others first ("Answer 2 (Sonnet 4.6, 14:32) · <chat title>"),
        as the sidebar cuts long titles at the end."""
        reply = self.chat.turns[-1] if self.chat.turns else None
        bits = []
        if reply is not None and reply.role == "assistant":
            if reply.model:
                bits.append(self.w.model_picker.label_of(reply.model))
            bits.append(time.strftime("%H:%M", time.localtime(reply.created_at / 1000)))
        session = self.chat.sessions.get(self.chat.session_id or "")
        title = session.title if session is not None and session.title else "New chat"
        head = f"Answer {n} ({', '.join(bits)})" if bits else f"Answer {n}"
        return f"{head} · {title}"

    def pick_model(self) -> bool:
        """Show the models to regenerate with, under the model picker."""
        why = self.why_not()
        if why is not None:
            self.w.statusBar().showMessage(why, 8_000)
            return False
        picker = self.w.model_picker
        self.w.transcript.show_model_menu(picker.mapToGlobal(QPoint(0, picker.height())))
        return True

    def reply_set_aside(self, ev: ReplySetAside) -> None:
        """The old reply is in its fork: list the fork, drop the reply from the view."""
        self.chat.remember_session(ev.fork)
        if ev.session_id != self.chat.session_id:
            return
        removed = set(ev.removed_turn_ids)
        self.chat.turns = [t for t in self.chat.turns if t.id not in removed]
        self.w.transcript.set_turns(self.chat.turns)
        self.w.transcript.set_busy(True)
        self.w.statusBar().showMessage(KEPT_MESSAGE.format(title=ev.fork.title), 15_000)

    def open_media(self, block: Any) -> None:
        """Open an image or document clicked in the transcript (``gui.media_viewer``)."""
        from gui.media_viewer import open_media

        self.w.tasks.spawn(open_media(self.w, block), name="open-media")
