"""Runs that wait: for their provider while Parley starts, or for another program's lock.

A message sent while Parley is still starting is never refused: its user turn
is saved at once (the durability rule: saved before any request), the chat
shows it with a quiet "connecting…", and it is sent, once, as soon as its
provider is ready (``ProviderHub.prepare``: its SDK client made in the provider
process). Retry, Resume and Regenerate wait the same way. Esc takes such a
message back (its turn deleted, its text back in the box). A message with
files, or an edit, waits in the box instead, and is sent once the provider
is ready (the files are checked against that model's limits then). While
another program holds sessions.db locked past the store's own attempts, a sent
message stays shown "Saving…" and is tried again every :data:`LOCK_RETRY_S`.
:class:`RunWaits` holds these waits for :class:`~parley.gui.chat.run.ChatRuns`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QTimer

from parley.core.content import Block, Turn, new_id
from parley.core.errors import ParleyError

if TYPE_CHECKING:
    from collections.abc import Callable

    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.chat.parts import ChatParts
    from parley.gui.chat.run_events import RunEvents
    from parley.gui.startup.setup_panel import SetupPanel

CONNECTING = "Connecting to {name}…"
#: "Connecting to …" is said once a message has waited this long (ms): a provider
#: ready a moment later (or a first run, with no provider to connect to) says nothing.
CONNECTING_AFTER_MS = 250
#: Seconds between two tries of a message waiting for another program's lock.
LOCK_RETRY_S = 1.0
CALLED_OFF = ("Not sent: your message is kept in the chat. Retry sends it when you want.")



class _Runs(Protocol):
    """What the waits use of ``parley.gui.chat.run.ChatRuns``."""

    events: RunEvents

    def send_from_composer(self) -> bool: ...


class RunWaits:
    """The waits of one window's runs (see the module docstring)."""

    def __init__(self, chat: OpenChat, runs: _Runs, parts: ChatParts,
                 setup_panel: Callable[[], SetupPanel | None]) -> None:
        self.parts, self.setup_panel = parts, setup_panel
        self.chat = chat
        self.runs = runs
        self.lock_waits: set[str] = set()  # chats whose sent message waits for a lock
        self.new_chat_wait: asyncio.Task[Any] | None = None  # a new chat's row waits for one
        #: Sessions whose run waits for its provider ("connecting…"); None: a new chat
        #: whose message (with files, or an edit) waits in the box (:meth:`send_when_ready`).
        self.waiting: set[str | None] = set()
        #: The message with files (or the edit) waiting in the box for its provider.
        self.held: asyncio.Task[Any] | None = None
        #: sid -> the model the waiting run of the session is for (None: not known yet).
        self.connecting_to: dict[str | None, str | None] = {}

    def send_when_ready(self, sid: str | None, model: str | None) -> None:
        """Enter with files (or on an edit) while Parley starts: the message stays in the
        box and the tray ("Connecting to …", Stop calls it off) and is sent, as Enter
        sends it, once its provider is ready: the files are checked against that
        model's limits then. A second Enter meanwhile does nothing more."""
        if self.held is not None and not self.held.done():
            return
        self.parts.composer_bar.set_busy(True)
        self.held = self.parts.tasks.spawn(self.hold(sid, model), name="send-when-ready")

    async def hold(self, sid: str | None, model: str | None) -> None:
        try:
            await self.wait_for_provider(sid, model)
        finally:
            self.held = None
            if sid == self.chat.session_id:
                self.parts.composer_bar.set_busy(False)
        if sid == self.chat.session_id:  # another chat opened meanwhile: its box is its own
            self.runs.send_from_composer()

    async def new_session_when_unlocked(self, model: str | None) -> str:
        """A new chat's session row (its id); while another program holds sessions.db locked past
        the store's attempts, it waits as :meth:`_send_when_unlocked` does (Esc: the
        text goes back to the box)."""
        from parley.core.store.errors import DatabaseBusy

        try:
            while True:
                try:
                    return await self.chat.create_session(model)
                except DatabaseBusy as exc:
                    self.new_chat_wait = asyncio.current_task()
                    self.chat.save_status.waiting_for_lock(exc)
                    await asyncio.sleep(LOCK_RETRY_S)
        finally:
            self.new_chat_wait = None
            self.chat.save_status.waiting_for_lock(None)

    async def send_when_unlocked(self, sid: str, blocks: list[Any], model: str,
                                  on_event: Any, turn_id: str | None) -> None:
        """``runner.send``; while another program holds sessions.db locked (the store's
        own attempts ran out: ``DatabaseBusy``), the message stays shown "Saving…", the
        bar says who holds it, and the send is tried again every
        :data:`LOCK_RETRY_S` until the lock clears (Esc stops it: the text goes back to
        the box). Nothing was written or sent while it waits."""
        from parley.core.store.errors import DatabaseBusy

        runner = self.chat.runner
        assert runner is not None  # the run's provider is ready (ChatRuns.run)
        try:
            while True:
                try:
                    await runner.send(sid, blocks, model_ref=model, on_event=on_event,
                                      turn_id=turn_id)
                    return
                except DatabaseBusy as exc:
                    if turn_id is None or turn_id not in self.runs.events.saving:
                        raise  # not a message shown waiting (nothing to keep waiting)
                    self.lock_waits.add(sid)
                    self.chat.save_status.waiting_for_lock(exc)
                    await asyncio.sleep(LOCK_RETRY_S)
        finally:
            self.lock_waits.discard(sid)
            self.chat.save_status.waiting_for_lock(None)

    def provider_ready(self, model: str | None) -> bool:
        """True when a run with ``model`` can start now: the providers are loaded and
        its provider's adapter prepared (a provider that is not set up is "ready": the run
        then says so)."""
        hub = self.chat.hub
        if self.chat.runner is None or hub is None or model is None:
            return False
        from parley.core.providers.hub import UnknownProvider  # loaded with the runner

        try:
            return bool(hub.is_prepared(model))
        except UnknownProvider:
            return True

    async def save_message(self, sid: str, blocks: list[Block],
                            turn_id: str | None) -> Turn:
        """Save a message that waits for its provider as the chat's new user turn (of id
        ``turn_id``, shown "saving" already) and show it saved."""
        turn = await self.chat.store.append_turn(
            sid, Turn("user", list(blocks), id=turn_id or new_id()))
        self.runs.events.saving.discard(turn.id)
        self.parts.transcript.set_save_mark(turn.id, None)
        self.chat.save_status.saved()
        self.runs.events.remember(sid, turn)
        self.runs.events.touch(sid)
        return turn

    async def wait_for_provider(self, sid: str | None, model: str | None) -> str:
        """Wait ("connecting…") until the providers are loaded, the chat has a model
        (set-up may come first) and its provider's adapter is prepared; return the model."""
        from parley.core.providers.hub import UnknownProvider

        self.waiting.add(sid)
        try:
            while True:
                changed = self.chat.providers_changed
                ref = model or (self.chat.models.model_for(sid) if sid is not None
                                else self.chat.current_model())
                if self.chat.runner is not None and ref is not None:
                    break
                self.show_connecting(sid, None)
                await changed.wait()
            self.show_connecting(sid, ref)
            hub = self.chat.hub
            assert hub is not None  # attached with the runner
            with contextlib.suppress(UnknownProvider):  # the run says so
                await hub.prepare(ref)
            session = self.chat.sessions.get(sid) if sid is not None else None
            if sid is not None and session is not None and not session.model:
                # Sent before it had one: its chat keeps the model it was sent to.
                self.chat.sessions[sid] = await self.chat.store.set_session_model(sid, ref)
            return ref
        finally:
            self.waiting.discard(sid)
            self.connecting_to.pop(sid, None)
            if sid == self.chat.session_id:
                self.parts.status.clearMessage()

    def show_connecting(self, sid: str | None, model: str | None) -> None:
        """Say quietly, in the status bar, that the open chat's message waits (once it
        has waited :data:`CONNECTING_AFTER_MS`); with no provider set up yet, the
        set-up panel says it instead (nothing connects). Nothing is said while the
        providers' settings are read (a moment: a first run has none)."""
        hub = self.chat.hub
        if hub is None:
            return
        if model is None and not hub.is_configured:
            self.parts.status.clearMessage()
            panel = self.setup_panel()
            if panel is not None:
                panel.note_waiting()
            return
        if sid != self.chat.session_id:
            return
        self.connecting_to[sid] = model
        bar = self.parts.status
        QTimer.singleShot(CONNECTING_AFTER_MS, bar, lambda: self.say_connecting(sid))

    def say_connecting(self, sid: str | None) -> None:
        if sid not in self.waiting or sid != self.chat.session_id or self.chat.hub is None:
            return
        model = self.connecting_to.get(sid)
        name = "your provider"
        if model is not None:
            with contextlib.suppress(ParleyError):
                name = self.chat.hub.config(model.split(":", 1)[0]).name
        self.parts.status.showMessage(CONNECTING.format(name=name))

    async def take_back(self, sid: str, saved: Turn, text: str | None) -> None:
        """Esc on a saved message still waiting for its provider: delete it, drop it from
        the view and put its text back in the box (nothing was sent)."""
        with contextlib.suppress(ParleyError):  # not deleted: it stays, and Retry sends it
            await self.chat.store.delete_turns(sid, [saved.id])
            back = text if text is not None else saved.text()
            if sid == self.chat.session_id:
                self.chat.state.drop([saved.id])
                self.chat.opener.show_turns()
                box = self.parts.composer.text()  # typed since: after the message
                self.parts.composer.set_text(f"{back}\n\n{box}" if box.strip() else back)
            else:
                self.chat.drafts.keep_unsent(sid, back)
            return
        if sid == self.chat.session_id:
            self.parts.status.showMessage(CALLED_OFF, 10_000)
