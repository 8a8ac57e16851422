"""Opening the window's workspace and handing its parts to the window and the chat.

The start-up state machine (``parley.gui.startup.phases``) says when; this module does
the opening: the store's modules imported off the GUI thread (:func:`import_store`), the
window's :class:`~parley.core.workspace.Workspace` made (:func:`new_workspace`); once the
store is open, the last chat's title in the header (:func:`show_last_title`) while the
first chat's modules are imported (:func:`import_chat`), the open chat's controller made
(:func:`open_chat`), then the providers, the runner, the tools and MCP opened
(:func:`open_providers`) and taken by the window and the chat (:func:`take_providers`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, cast

from parley.core.gc_pause import pausing_gc

if TYPE_CHECKING:
    from collections.abc import Callable

    from parley.core.events import CacheUpdated
    from parley.core.mcp import McpTools
    from parley.core.providers.hub import ProviderHub
    from parley.core.workspace import Workspace
    from parley.gui.chat.controller import ChatController
    from parley.gui.startup.state import StartupView
    from parley.gui.window.base import WindowBase

log = logging.getLogger(__name__)


@pausing_gc
def import_store() -> None:
    """Import the store (SQLAlchemy) and what opening it needs; run in a worker thread:
    an import on the GUI thread holds the window still."""
    import parley.core.recovery.damaged_file  # noqa: F401
    import parley.core.recovery.previous_run  # noqa: F401
    import parley.core.settings  # noqa: F401
    import parley.core.store.async_store  # noqa: F401


@pausing_gc
def import_chat() -> None:
    """Import the controller and what showing the first chat needs (its code style too),
    once the store is open (:func:`show_last_title` first); run in a worker thread."""
    import parley.gui.chat.controller  # noqa: F401
    import parley.gui.transcript  # noqa: F401
    from parley.gui.look import theme
    from parley.gui.text.markdown import pygments_background

    for style in (theme.LIGHT_CODE_STYLE, theme.DARK_CODE_STYLE):
        pygments_background(style)
    _load_widget_types()


async def show_last_title(window: WindowBase, startup: StartupView,
                          kept: str | None) -> None:
    """The store is open and the chat's own code not imported yet (~0.4 s more, seconds
    on a cold start): the header names the chat that will show, the one open when Parley
    closed, so the wait reads as that chat opening, never as a new chat (trial 21).
    Nothing when Ctrl+N was pressed meanwhile, when ``kept`` (a text kept from a damaged
    file: ``queued_kept.kept_chat``) brings another chat, or when that chat is gone or
    cannot be read now; the chat's own header replaces it as it shows."""
    from parley.core.app_state import LAST_SESSION
    from parley.core.errors import ParleyError

    store = window.store
    if store is None or kept is not None or startup.queue.new_chat_asked:
        return
    try:
        last = await LAST_SESSION.get(store)
        session = await store.get_session(last) if last else None
    except ParleyError as exc:  # gone, or the store away: the opening says so, if it must
        log.info("the last chat's title is not shown early: %s", exc.message)
        return
    if session is not None and session.title and startup.queueing and window.chat is None:
        window.chat_heading.set_chat(session.title, None, editable=False)


def _load_widget_types() -> None:
    """Have PySide6 make the Python classes of every QtWidgets type now, in this worker
    thread. It makes them when first used, with their enums (pure Python, ~0.3 ms an
    enum): the transcript's first call to ``viewport()`` made 65 of them at once, 17-35
    ms of the GUI thread as the chats opened (issue 33)."""
    from PySide6 import QtWidgets

    for name in dir(QtWidgets):
        getattr(QtWidgets, name)


def new_workspace(window: WindowBase,
                  on_timer_error: Callable[[BaseException], None]) -> Workspace:
    """The window's :class:`~parley.core.workspace.Workspace` (``window.workspace``): a
    new one unless the last is still unopened (a failed open is tried again; one closed
    for a recovery is not reopened).

    Args:
        window: the main window (its data folder, environment, tasks, problems).
        on_timer_error: told an error of a compaction the cache timer started.
    """
    from parley.core.workspace import Stage as Opened
    from parley.core.workspace import Workspace

    w = window
    old = w.workspace
    if old is not None and old.stage is Opened.NEW:
        return old
    if old is not None:  # its store closed for a recovery: the rest closes too
        w.tasks.spawn(old.close(final_backup=False), name="workspace-closed")
    w.workspace = new = Workspace(
        w.home, environ=w.env, tasks=w.tasks, on_damaged=w.problems.store_damaged,
        on_backup_error=lambda exc: w.statusBar().showMessage(exc.message, 15_000),
        on_timer_error=on_timer_error)
    return new


def open_chat(window: WindowBase, startup: StartupView) -> ChatController:
    """The open chat's controller, given the window's widgets and what it asks of the
    window (``parley.gui.chat.parts``) and the window's workspace; the workspace's store
    is open, the transcript in place."""
    from parley.gui.chat.controller import ChatController
    from parley.gui.chat.parts import ChatParts, WindowCalls
    from parley.gui.notices.status_line import OneLineStatusBar

    w = window
    assert w.transcript is not None and w.workspace is not None
    return ChatController(
        ChatParts(parent=w, status=cast(OneLineStatusBar, w.statusBar()), tasks=w.tasks,
                  keymap=w.keymap, sidebar=w.sidebar, transcript=w.transcript,
                  composer=w.composer, composer_bar=w.composer_bar,
                  model_picker=w.model_picker, context_meter=w.context_meter,
                  undo=w.undo, chat_page=w.chat_page, chat_layout=w._chat_layout,
                  heading=w.chat_heading, greeting=w.greeting, commands=w.commands),
        WindowCalls(set_title=w.pages.set_chat_title, show_chat=w.pages.show_chat,
                    show_setup=w.pages.show_setup, setup_panel=lambda: w.setup_panel,
                    focus_composer=w.pages.focus_composer_unless_moved,
                    show_problem=lambda error: w.show_problem(error),
                    starting=lambda: startup.queueing,
                    queue_early_message=startup.queue_message,
                    new_chat_asked=lambda: startup.queue.new_chat_asked,
                    ready=lambda: startup.ready, cache_timer=lambda: w.cache_timer,
                    elsewhere=lambda: w.elsewhere),
        w.workspace)


async def open_providers(window: WindowBase) -> ProviderHub:
    """Open the workspace's providers (``Workspace.open_providers``: the hub's settings
    and keys, the SDK clients of those in use made in the provider process, the default
    model's first; the tools, MCP, runner, timer, backups), the MCP tools asking through the
    approval dialog; returns the ``ProviderHub``."""
    from parley.gui.dialogs.mcp_approval import DialogApprover

    workspace = window.workspace
    assert workspace is not None  # made by start-up, its store open
    workspace.approver = DialogApprover(window)
    await workspace.open_providers()
    return workspace.hub


async def take_providers(window: WindowBase, chat: ChatController, hub: ProviderHub) -> None:
    """The chats show and the workspace's providers are open (``hub`` loaded; its runner
    with memory, skills and session search as tools and the tools of the MCP servers in
    mcp.json, asked about first; the cache timer; the backups): the chat takes them (the
    window reads them through it and the workspace); the chat page shows (set-up
    instead, with no provider set up), then the SDKs of the providers in use are
    imported, the open chat's model's first."""
    w, workspace = window, window.workspace
    assert workspace is not None
    runner = workspace.runner
    show_mcp(w, workspace.mcp)
    from parley.core.events import CacheUpdated

    # the meter's "cache warm until"
    runner.events.on(CacheUpdated, lambda event: _cache_updated(w, event))
    chat.attach()
    w.pages.end_welcome(hub.is_configured)  # a first start's welcome: set-up, or the chat
    if hub.is_configured:
        await chat.enter()  # the chat page, its models, its meter (measured once)
    else:
        chat.meter.update()  # its figures, for the chats read before set-up
        w.pages.show_setup()
    await hub.prepare_all(first=chat.current_model())


def show_mcp(window: WindowBase, mcp: McpTools | None) -> None:
    """The MCP servers' tools (the workspace's; None: left out) named in the transcript,
    and the servers' status in the status bar."""
    w = window
    transcript = w.transcript
    if mcp is None or transcript is None:
        return
    # Tool calls in the transcript are named as configured, like the dialog names them
    # (the chat opened before the tools were: its frozen list is read now).
    transcript.set_tool_names(mcp.names_of)
    chat = w.chat

    async def name_open_chat() -> None:
        if chat is not None and chat.session_id is not None:
            await mcp.load_names(chat.session_id)
            transcript.tool_names_changed()

    w.tasks.spawn(name_open_chat(), name="mcp-names")
    from parley.gui.notices import mcp_status

    mcp_status.watch(w, mcp.host)  # starting / failed servers in the status bar


def _cache_updated(window: WindowBase, event: CacheUpdated) -> None:
    """The open chat's prompt cache was written: the meter's "cache warm until"."""
    chat = window.chat
    if chat is not None and event.session_id == chat.session_id:
        window.context_meter.set_cache_expiry(event.expires_at, event.compact_at)
