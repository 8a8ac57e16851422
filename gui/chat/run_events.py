"""What a run's events show in the window: the message, the reply growing, the outcome.

:class:`RunEvents` turns the events of ``ChatRunner.send`` / ``retry`` / regenerate
(``parley.core.chat.run.RunEvent``) into what the window shows: a message shown at
once (marked "Saving…" if its save takes a while), the reply growing in the open
chat's state, the saved reply, an inline error or a stopped reply's note, tool
rounds as they are saved, the note of older turns the model no longer sees, the
chat moved to the top of its space, the retry countdown (a retry after a dropped
connection said in the status line too), the wait for a connection process that
stopped answering, and a title asked for after a chat's first reply.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QTimer

from parley.core.content import Turn, now_ms

if TYPE_CHECKING:
    from parley.core.chat.regenerate import ReplySetAside
    from parley.core.chat.run import RunEvent
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.composer.widget import ComposerBar
    from parley.gui.notices.retry_notice import RetryNotice
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.sidebar import Sidebar
    from parley.gui.transcript import TranscriptView

#: A message whose save takes longer than this (another program holds the file
#: locked) is marked "Saving…" under it (ms).
SAVING_MARK_MS = 300
#: Under a message whose run was stopped before any of its reply came (Esc right after
#: Enter): said, with Retry, as a reply stopped mid-way is marked with Continue.
STOPPED_BEFORE_REPLY = ("Stopped before any reply came: your message is kept in the chat. "
                        "Retry sends it again.")

#: In the status line when a reply's connection dropped before any of it came and the
#: request went again by itself (``RetryWaiting.dropped``; the bar above the composer
#: says "The connection dropped; trying again…" until the reply starts).
DROPPED_STATUS = ("The connection dropped before the reply came; Parley sent your "
                  "message again.")
DROPPED_STATUS_MS = 15_000


class _Runs(Protocol):
    """What the events use of ``parley.gui.chat.run.ChatRuns``."""

    doing: dict[str, tuple[str, str]]
    retry_with: dict[str, str]
    retry_notice: RetryNotice


class RunEvents:
    """Shows the events of one window's runs (see the module docstring)."""

    def __init__(self, chat: OpenChat, runs: _Runs, *, transcript: TranscriptView,
                 composer_bar: ComposerBar, sidebar: Sidebar, status: OneLineStatusBar,
                 tasks: TaskSet) -> None:
        self.transcript, self.composer_bar, self.sidebar = transcript, composer_bar, sidebar
        self.status, self.tasks = status, tasks
        self.chat = chat
        self.runs = runs
        self.saving: set[str] = set()  # ids of messages shown but not saved yet

    def set_busy(self, sid: str, busy: bool) -> None:
        """A run of ``sid`` started or ended: Send/Stop, and Regenerate under the reply."""
        if sid == self.chat.session_id:
            self.composer_bar.set_busy(busy)
            self.transcript.set_busy(busy)

    def on_event(self, ev: RunEvent | ReplySetAside) -> None:
        from parley.core.chat.events import OlderTurnsUnseen, ProviderProcessSilent
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
            self.runs.retry_notice.waiting(sid, ev.seconds, ev.rate_limited, ev.message,
                                           dropped=ev.dropped)
            if ev.dropped and current:  # stays said after the bar goes with the reply
                self.status.showMessage(DROPPED_STATUS, DROPPED_STATUS_MS)
            return
        if isinstance(ev, ProviderProcessSilent):
            self.runs.retry_notice.silent(sid, ev.silent)
            return
        if isinstance(ev, ReplyUpdated | RunFinished | RunFailed | RunCancelled):
            self.runs.retry_notice.over(sid)
        if isinstance(ev, OlderTurnsUnseen):
            self.chat.unseen.on_event(ev)  # the note of turns the model no longer sees
        elif isinstance(ev, UserTurnSaving):
            self.show_saving(sid, ev.turn)
        elif isinstance(ev, ReplySetAside):
            self.chat.regen.reply_set_aside(ev)
        elif isinstance(ev, RunStarted):
            if ev.user_turn is not None:
                self.saving.discard(ev.user_turn.id)
                self.transcript.set_save_mark(ev.user_turn.id, None)
                self.chat.save_status.saved()  # "Not saved: …" is over
                self.remember(sid, ev.user_turn)
                if current:  # sending brings the view to the message, however far up it was
                    self.transcript.scroll_to_end()
            self.touch(sid)
            if current:
                self.chat.meter.update()  # the message just saved counts at once
        elif isinstance(ev, ReplyUpdated):
            self.chat.state.stream(sid, ev.turn)
        elif isinstance(ev, RunFinished):
            self.chat.partial.pop(sid, None)
            self.remember(sid, ev.turn)
            self.touch(sid)
            if current:  # a new answer of a regeneration: ‹ n/m › under it
                self.tasks.spawn(self.chat.opener.refresh_branches(), name="branches")
            if ev.first_reply:
                self.title_after_first_exchange(sid, ev.turn)
            if current:
                self.chat.meter.update()
                if ev.first_reply:  # its prompt is frozen now: the documents it was given
                    self.chat.models.show_documents()
        elif isinstance(ev, RunFailed | RunCancelled):
            self.chat.partial.pop(sid, None)
            if current:  # a regeneration that failed: ‹ under the prompt shows the old answer
                self.tasks.spawn(self.chat.opener.refresh_branches(), name="branches")
            if ev.partial is not None:
                self.remember(sid, ev.partial)
            how, model = self.runs.doing.get(sid, ("", ""))
            if how == "regenerate":
                self.runs.retry_with[sid] = model
            if current and isinstance(ev, RunFailed):
                message = self.chat.models.named(ev.error.message)  # models by name
                self.transcript.show_error(self.chat.regen.after_failure(sid, message))
            elif current:
                self.chat.regen.after_stop(sid)
                if ev.partial is None:  # nothing came: no "Stopped" mark under a reply
                    self.transcript.show_notice(STOPPED_BEFORE_REPLY, "Retry")
            if current:
                if isinstance(ev, RunFailed):  # a refusal's count of the newest message
                    self.chat.meter.refused(sid, ev.error)
                self.chat.meter.update()  # what was saved before the failure counts
        elif isinstance(ev, ToolStepFinished | ToolResultsSaved):
            self.chat.partial.pop(sid, None)
            self.remember(sid, ev.turn)  # each tool round shows as it is saved
        elif isinstance(ev, ToolsUnavailable | ToolRoundLimit):
            if current:
                self.status.showMessage(ev.message, 15_000)
        elif isinstance(ev, SessionTitled):
            if sid in self.chat.sessions:
                self.chat.sessions[sid] = replace(self.chat.sessions[sid], title=ev.title)
            self.sidebar.model.set_title(sid, ev.title)
            self.chat.models.update_title()

    def show_saving(self, sid: str | None, turn: Turn) -> None:
        """A message is being written: show it now (it leaves the composer), marked
        "Saving…" if that takes a while (another program holds the file locked)."""
        if turn.id in self.saving:
            return  # shown already (before its new chat got its row)
        self.saving.add(turn.id)
        self.chat.state.show_unsaved(sid, turn)

        def mark() -> None:
            if turn.id in self.saving:
                self.transcript.set_save_mark(turn.id, "saving")

        QTimer.singleShot(SAVING_MARK_MS, mark)

    def unshow(self, sid: str | None, ids: list[str]) -> None:
        """A message shown as "Saving…" could not be saved: it leaves the transcript
        (its text goes back to the composer)."""
        for turn_id in ids:
            self.saving.discard(turn_id)
            self.transcript.set_save_mark(turn_id, None)
        self.chat.state.unshow(ids)
        if ids and sid == self.chat.session_id:
            self.chat.opener.show_turns()

    def title_after_first_exchange(self, sid: str, reply: Turn) -> None:
        """A chat got its first complete reply: title it in the background.

        The run titled it from the first message already; the title service
        replaces that with a generated one unless the user named the chat.
        """
        session = self.chat.sessions.get(sid)
        if self.chat.titles is None or session is None or session.title_source == "user":
            return
        model = reply.model or self.chat.current_model()
        if model:
            self.tasks.spawn(self.chat.titles.on_first_exchange(sid, model), name="title")

    def remember(self, sid: str, turn: Turn) -> None:
        """Show a saved turn (new or updated) in the open chat's transcript."""
        self.chat.state.remember(sid, turn)

    def touch(self, sid: str) -> None:
        """Move a chat to the top of its space (it just changed)."""
        session = self.chat.sessions.get(sid)
        if session is not None:
            self.chat.sessions[sid] = replace(session, updated_at=now_ms())
            if self.sidebar.model.has(sid) or not session.archived:
                self.sidebar.model.upsert(self.chat.sessions[sid])
        if sid == self.chat.session_id:
            self.sidebar.select(sid)
