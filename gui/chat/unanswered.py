"""A chat opened whose last message was never answered: say so, and offer to send it.

Parley closed or stopped while the message waited, or crashed: the chat says
"Not sent", with Retry; a message too long for the chat's model by itself says
that instead. A message the person stopped before any reply came says so, with Retry,
as it did before the restart (``parley.core.chat.stopped`` remembers it). A fork made
at one's own message, and a chat imported ending with one's message, are no failure: a
neutral note offers Send. A last reply a failure cut off says so, with Retry, as the
run's error did before the restart (the error is gone; its cause is kept with the reply:
``Turn.failure``, ``parley.core.chat.unfinished.CUT_NOTE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from parley.core.content import Turn
from parley.core.errors import ParleyError
from parley.gui.chat.run_events import STOPPED_BEFORE_REPLY
from parley.gui.chat.waiting import CALLED_OFF

if TYPE_CHECKING:
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.chat.run_events import RunEvents
    from parley.gui.transcript import TranscriptView

#: Under a fork made at one's own message (nothing failed: it was never sent from here).
FORKED_AT_MESSAGE = "This fork ends with your message. Send it to get a new answer here."
#: Under a chat imported ending with one's own message.
IMPORTED_AT_MESSAGE = ("This chat was imported and ends with your message. Send it to get an "
                       "answer here.")



class _Runs(Protocol):
    """What the notes use of ``parley.gui.chat.run.ChatRuns``."""

    events: RunEvents

    def running(self, sid: str | None) -> bool: ...


class Unanswered:
    """Notes under an unanswered last message in one window (see the module docstring)."""

    def __init__(self, chat: OpenChat, transcript: TranscriptView, runs: _Runs) -> None:
        self.transcript = transcript
        self.chat = chat
        self.runs = runs
        #: Per chat read (:meth:`read`): its last message, stopped before any reply came.
        self.stopped: dict[str, str] = {}

    async def read(self, sid: str, turns: list[Turn]) -> None:
        """A chat is being opened with ``turns`` last: when it ends with a message of the
        person, read whether they stopped it before any reply came (one ``app_state`` row).

        Raises:
            StoreError: the store could not be read.
        """
        from parley.core.chat.stopped import stopped_turn

        self.stopped.pop(sid, None)
        if turns and turns[-1].role == "user":
            turn_id = await stopped_turn(self.chat.store, sid)
            if turn_id is not None:
                self.stopped[sid] = turn_id

    def offer(self, sid: str) -> None:
        """A chat was opened: a last message that was never answered (Parley closed or
        stopped while it waited, or crashed) says "Not sent", with Retry; a last reply a
        failure cut off says why, with Retry."""
        from parley.core.content import ToolResultBlock

        last = self.transcript.last_turn()
        if sid != self.chat.session_id or last is None \
                or last.id in self.chat.spans or self.runs.running(sid) \
                or last.id in self.runs.events.saving:
            return
        if last.role == "assistant":
            self._offer_cut(last)
            return
        if any(isinstance(b, ToolResultBlock) for b in last.blocks):
            return  # a tool round's results: the reply was cut off
        session = self.chat.sessions.get(sid)
        if session is not None and session.parent_session_id is not None \
                and last.created_at <= session.created_at:
            # The fork's copy of a message written before it was made: it ends at
            # one's own message on purpose, ready to be asked again.
            self.transcript.show_notice(FORKED_AT_MESSAGE, "Send")
            return
        if session is not None and _came_with_import(session, last):
            # Never sent from Parley: no failure to report, a reply can be asked for.
            self.transcript.show_notice(IMPORTED_AT_MESSAGE, "Send")
            return
        if self.stopped.get(sid) == last.id:  # the person's Stop, not a crash or a quit
            self.transcript.show_notice(STOPPED_BEFORE_REPLY, "Retry")
            return
        self.transcript.show_error(self._too_long_note(last) or CALLED_OFF)

    def _offer_cut(self, last: Turn) -> None:
        """Under a last reply a failure cut off: why, with Retry (as before a restart)."""
        from parley.core.chat.unfinished import CUT_NOTE, failure_why

        why = failure_why(last)
        if why is not None and not last.writing_elsewhere:
            self.transcript.show_error(CUT_NOTE.format(why=why))

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
