"""The narrow interfaces between the open chat's controller and its helpers.

The helpers of :mod:`parley.gui.chat` (and the window's commands) are given the chat
controller typed by these protocols, not by its class: a helper module then never
imports ``parley.gui.chat.controller``, and the GUI's modules import each other without
a cycle (``tests/test_import_cycles.py``). The window's parts they use are given as
typed constructor arguments (``parley.gui.chat.parts``). Each protocol lists exactly
what is used through it; a member added here is a new dependency, made visible.

:class:`OpenChat` is the controller as its helpers, the window's commands and
``parley.gui.database.elsewhere`` see it; the ``*View`` protocols are its helpers as seen
through it (``chat.runs``, ``chat.editor`` …): a helper reaching another helper through
the chat would otherwise import that helper's module, and the helpers use each other
in both directions (runs ↔ editor, runs ↔ attachments, editor ↔ opener …). Checked member by
member (each removed in turn, ``mypy`` run: a member whose removal keeps mypy at 0 errors
is used through no protocol and was removed); members the controller or the window use
on the concrete classes are not listed here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from parley.core.chat.events import RunEvent
    from parley.core.chat.regenerate import ReplySetAside
    from parley.core.chat.run import ChatRunner
    from parley.core.chat.titles import TitleService
    from parley.core.content import Block, Turn
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session, Space
    from parley.core.store.outline import Span
    from parley.gui.chat.state import OpenChatState
    from parley.gui.composer.drafts import Drafts
    from parley.gui.database.save_status import SaveStatus
    from parley.gui.sidebar.space_dialog import SpaceDialog


class RunEventsView(Protocol):
    """What is used of a run's events on the screen (``parley.gui.chat.run_events.RunEvents``)."""

    def on_event(self, ev: RunEvent | ReplySetAside) -> None: ...


class ChatQueueView(Protocol):
    """What is used of the chats' queues of messages (``parley.gui.chat.queue.ChatQueue``)."""

    def edit_last(self) -> bool: ...

    def send_now(self) -> bool: ...

    def pause(self) -> bool: ...

    def focus(self) -> bool: ...

    def messages(self, sid: str) -> list[Any]: ...

    def hold(self, sid: str) -> None: ...


class ChatRunsView(Protocol):
    """What is used of the open chat's runs (``parley.gui.chat.run.ChatRuns``)."""

    @property
    def events(self) -> RunEventsView: ...

    @property
    def unanswered(self) -> UnansweredView: ...

    @property
    def queue(self) -> ChatQueueView: ...

    def activity(self, sid: str | None) -> None: ...

    def give_back(self, text: str, *, after: bool = False) -> None: ...

    def retry(self) -> bool: ...

    async def run(self, sid: str, how: str, blocks: list[Block] | None, model: str | None,
                  text: str | None, *, turn_id: str | None = None,
                  on_saved: Callable[[], None] | None = None) -> None: ...

    def running(self, sid: str | None) -> bool: ...

    def start(self, sid: str, coro: Coroutine[Any, Any, Any], *, how: str,
              model: str | None, name: str) -> asyncio.Task[Any]: ...

    def send_from_composer(self) -> bool: ...

    def stop(self) -> bool: ...

    async def stop_and_wait(self, sid: str, timeout_s: float = 5.0) -> None: ...


class UnansweredView(Protocol):
    """The note under a message never answered (``parley.gui.chat.unanswered``)."""

    def offer(self, sid: str) -> None: ...

    async def read(self, sid: str, turns: list[Turn]) -> None: ...


class EditorView(Protocol):
    """What is used of the chat's editor (``parley.gui.chat.edit.ChatEditor``)."""

    editing: Turn | None
    compacting: set[str]

    def cancel(self) -> bool: ...

    def compact_now(self) -> bool: ...

    def edit_last(self) -> bool: ...

    def fork_at_focused(self) -> bool: ...

    # files: the tray's ``parley.gui.chat.attach.Taken`` (that module uses this one)
    async def send_edit(self, sid: str, turn: Turn, text: str, model: str,
                        files: Any = None) -> None: ...

    def set_editing(self, turn: Turn | None) -> None: ...

    def resume(self, turn_id: str | None) -> None: ...


class AttachmentsView(Protocol):
    """What is used of the chat's files (``parley.gui.chat.attach.ChatAttachments``)."""

    def give_back(self, taken: Any) -> None: ...  # a ``Taken`` (see EditorView.send_edit)

    def has_pending(self) -> bool: ...

    def ready_to_send(self, model_ref: str) -> bool: ...

    def take(self) -> Any: ...  # a ``Taken``

    def moved(self, old: str | None, new: str) -> None: ...

    def open_dialog(self) -> bool: ...

    def add_bytes(self, data: bytes, name: str) -> None: ...

    def begin_edit_files(self, files: Iterable[tuple[str, bytes]]) -> None: ...

    def end_edit(self) -> None: ...


class OrganizerView(Protocol):
    """What is used of spaces and chat rows (``parley.gui.chat.organize.Organizer``)."""

    spaces: dict[str, Space]

    def archive_session(self, session_id: str | None = None) -> None: ...

    def delete_session(self, session_id: str | None = None) -> None: ...

    def delete_space(self, space_id: str | None = None) -> None: ...

    def edit_space(self, space_id: str | None = None, *,
                   documents: bool = False) -> SpaceDialog | None: ...

    def move_session(self, session_id: str | None = None,
                     space_id: str | None = None) -> None: ...

    def new_space(self) -> SpaceDialog: ...

    def pin_session(self, session_id: str | None = None) -> None: ...

    def rename_session(self, session_id: str | None = None) -> None: ...

    def rename_space(self, space_id: str | None = None) -> None: ...


class SeveralView(Protocol):
    """What is used of "Ask several models" (``parley.gui.chat.several.ChatSeveral``)."""

    def ask_from_composer(self) -> bool: ...

    def answer_again(self) -> bool: ...


class RegenerateView(Protocol):
    """What is used of regeneration (``parley.gui.chat.regenerate.ChatRegenerate``)."""

    def after_failure(self, sid: str, message: str) -> str: ...

    def after_stop(self, sid: str) -> None: ...

    def pick_model(self) -> bool: ...

    def regenerate(self, model_ref: str | None = None) -> bool: ...

    def reply_set_aside(self, ev: ReplySetAside) -> None: ...

    def run_ended(self, sid: str) -> None: ...


class MeterView(Protocol):
    """The context meter (``parley.gui.chat.meter.ChatMeter``)."""

    def update(self) -> None: ...

    def opening(self, sid: str) -> None: ...

    def opened(self, sid: str) -> None: ...

    def reread(self) -> None: ...

    def refused(self, sid: str, error: Any) -> None: ...

    def documents_changed(self, space_id: str) -> None: ...

    def shown(self, sid: str) -> int | None: ...

    async def settled(self, sid: str) -> int | None: ...


class ModelsView(Protocol):
    """Which model answers, and the title (``parley.gui.chat.models.ChatModels``)."""

    picked_for_new: str | None

    def model_for(self, sid: str) -> str | None: ...

    def named(self, text: str) -> str: ...

    def no_model_reason(self) -> str: ...

    def space_changed(self, space_id: str) -> None: ...

    def update_title(self) -> None: ...

    def show_documents(self) -> None: ...


class UnseenView(Protocol):
    """Turns the model no longer sees, failed compactions
    (``parley.gui.chat.unseen.ChatUnseen``)."""

    def compacted(self, session_id: str) -> None: ...

    def failed(self, session_id: str, error: Any, *, auto: bool) -> None: ...

    def on_event(self, event: Any) -> None: ...  # an ``OlderTurnsUnseen``

    async def read(self, session_id: str) -> Any: ...  # ``Unseen | None``


class BoxSwitchView(Protocol):
    """Which chat the message box belongs to while another opens
    (``parley.gui.chat.box_switch.BoxSwitch``)."""

    switching: bool
    send_asked: bool

    def begin(self, target: str | None) -> None: ...

    def ended(self) -> None: ...


class OpenerView(Protocol):
    """Which chat the window shows (``parley.gui.chat.opening.ChatOpener``)."""

    async def leave(self, sid: str, ids: list[str]) -> None: ...

    async def refresh_branches(self) -> None: ...

    def edited(self, sid: str, turn_id: str, edited: Turn) -> bool: ...

    async def reread(self, sid: str, *, at: str | None = None, offer: bool = True) -> bool: ...

    async def reload(self, *, read_unseen: bool = True) -> None: ...

    async def show_fork(self, fork: Session) -> None: ...

    async def show_new_chat(self, space_id: str | None = None) -> None: ...

    def show_turns(self) -> None: ...


class PagingView(Protocol):
    """Reading more of the open chat (``parley.gui.chat.paging.TranscriptPaging``)."""

    async def reveal(self, sid: str, turn_id: str, highlight: str | None) -> None: ...

    def shown(self) -> None: ...


class OpenChat(Protocol):
    """What the chat's helpers (runs, edits, regeneration, attachments, organizing) and
    the window's commands use of the chat controller (``ChatController``): the open
    chat's state (:class:`~parley.gui.chat.state.OpenChatState`, with its signals), the
    chats known, the core services, and the helpers' views above."""

    #: The open chat's session (None: a new chat), its space; set when a chat opens.
    session_id: str | None
    space_id: str | None
    #: True until the first chat is shown (it takes the text typed before then).
    adopting: bool

    @property
    def state(self) -> OpenChatState: ...

    @property
    def turns(self) -> Sequence[Turn]: ...

    @property
    def older(self) -> int: ...

    @property
    def spans(self) -> Mapping[str, Span]: ...

    @property
    def partial(self) -> dict[str, Turn]: ...

    @property
    def sessions(self) -> dict[str, Session]: ...

    @property
    def store(self) -> AsyncStore: ...

    @property
    def hub(self) -> ProviderHub | None: ...

    @property
    def runner(self) -> ChatRunner | None: ...

    @property
    def titles(self) -> TitleService | None: ...

    @property
    def drafts(self) -> Drafts: ...

    @property
    def save_status(self) -> SaveStatus: ...

    @property
    def providers_changed(self) -> asyncio.Event: ...

    @property
    def runs(self) -> ChatRunsView: ...

    @property
    def editor(self) -> EditorView: ...

    @property
    def attachments(self) -> AttachmentsView: ...

    @property
    def organizer(self) -> OrganizerView: ...

    @property
    def regen(self) -> RegenerateView: ...

    @property
    def several(self) -> SeveralView: ...

    @property
    def meter(self) -> MeterView: ...

    @property
    def models(self) -> ModelsView: ...

    @property
    def opener(self) -> OpenerView: ...

    @property
    def box(self) -> BoxSwitchView: ...

    @property
    def unseen(self) -> UnseenView: ...

    @property
    def paging(self) -> PagingView: ...

    def current_model(self) -> str | None: ...

    async def create_session(self, model: str | None = None) -> str: ...

    async def load_sidebar(self) -> None: ...

    def remember_session(self, session: Session) -> None: ...

    def open_session(self, session_id: str) -> None: ...

    def new_session(self, space_id: str | None = None) -> None: ...

    def step_session(self, delta: int) -> None: ...

    def goto_session(self, n: int) -> None: ...

    def after_switch(self, draft: str) -> None: ...

    async def stash_draft(self) -> None: ...

    def keep_draft(self) -> None: ...
