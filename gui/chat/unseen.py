"""When no summary could be made: the note in the chat and the one-line failure.

A chat never stops because compaction failed: the run sends only the newest turns
that fit and records it (``parley.core.compaction.unseen``). :class:`ChatUnseen`
keeps the open chat's record in its state (``OpenChatState.unseen``), which the
transcript shows as a quiet note before the first turn the model still sees, with
"Try compacting again":

* read when a chat opens (one app-state read, whatever the chat's length), and
  when the chat is read again;
* changed live by the run's ``OlderTurnsUnseen`` event (written, moved forward,
  removed);
* removed when a compaction saves a summary (the summary stands for the older
  turns again).

A failed compaction (automatic or Compact now) is told here too, in one line of the
status bar with "Details" (``parley.gui.chat.compact_notice``): once the run says
how many turns the model now sees, the line says so.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.gui.chat.compact_notice import FAILED, details, one_line, seen_turns

if TYPE_CHECKING:
    from parley.core.chat.events import OlderTurnsUnseen
    from parley.core.compaction.unseen import Unseen
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.transcript import TranscriptView

#: How long a failure's line stays in the status bar (ms): a refused summary can come
#: minutes after Send (a slow local model); the note in the chat stays anyway.
FAILED_STATUS_MS = 120_000


class ChatUnseen:
    """The open chat's turns the model no longer sees, and failed compactions told."""

    def __init__(self, chat: OpenChat, transcript: TranscriptView, model_picker: ModelPicker,
                 status: OneLineStatusBar) -> None:
        self.chat = chat
        self.model_picker, self.status = model_picker, status
        #: session id -> (error, automatic) of the last failed compaction told there.
        self.failures: dict[str, tuple[Any, bool]] = {}
        transcript.compactRequested.connect(self.compact_again)
        chat.state.unseen_changed.connect(transcript.show_unseen)

    # -- naming models -------------------------------------------------------------
    def name(self, ref: str) -> str:
        """A model's display name, as the header's model picker gives it."""
        return str(self.model_picker.label_of(ref))

    def provider_ids(self) -> list[str]:
        """The set-up providers' ids (the ``provider`` of ``provider:model``)."""
        hub = self.chat.hub
        return [c.id for c in hub.configs] if hub is not None else []

    def named(self, unseen: Unseen | None) -> Unseen | None:
        """``unseen`` with any ``provider:model`` in its words given as display names."""
        if unseen is None:
            return None
        named = self.chat.models.named
        return replace(unseen, detail=named(unseen.detail),
                       attempts=tuple(named(a) for a in unseen.attempts))

    # -- the record ------------------------------------------------------------------
    async def read(self, session_id: str) -> Unseen | None:
        """The chat's record as stored (named for the window).

        Raises:
            StoreError: the store could not be read.
        """
        from parley.core.compaction.unseen import load_unseen

        return self.named(await load_unseen(self.chat.store, session_id))

    def on_event(self, event: OlderTurnsUnseen) -> None:
        """The run wrote, moved or removed a chat's record: the note follows, and a
        failure just told says how many turns the model now sees."""
        sid = event.session_id
        self.chat.state.set_unseen(sid, self.named(event.unseen))
        if sid in self.failures and self._telling(sid):
            self.tell(sid)

    def compacted(self, session_id: str) -> None:
        """A compaction of the chat saved a summary: the note goes."""
        self.failures.pop(session_id, None)
        self.chat.state.set_unseen(session_id, None)

    def compact_again(self) -> bool:
        """"Try compacting again": Compact now on the open chat."""
        return bool(self.chat.editor.compact_now())

    # -- failures ----------------------------------------------------------------------
    def failed(self, session_id: str, error: Any, *, auto: bool) -> None:
        """A compaction of the chat failed: tell it in one line (if the chat is open)."""
        self.failures[session_id] = (error, auto)
        self.tell(session_id)

    def tell(self, session_id: str) -> None:
        """Show the chat's last failure in the status bar: one line, with Details."""
        if session_id != self.chat.session_id or session_id not in self.failures:
            return
        error, auto = self.failures[session_id]
        unseen = self.chat.state.unseen
        seen = seen_turns(self.chat.state.turns, unseen) if unseen is not None else None
        ids = self.provider_ids()
        line = one_line(error, unseen, seen, self.name, ids)
        more = details(error, unseen, self.name, ids, auto=auto)
        self.status.show_notice(line, FAILED_STATUS_MS, more)

    def _telling(self, session_id: str) -> bool:
        """True while the status bar still shows the chat's failure."""
        return session_id == self.chat.session_id and \
            self.status.currentMessage().startswith(FAILED)
