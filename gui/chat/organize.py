"""Organizing chats: spaces (create, rename, edit, reorder, delete) and sessions
(rename, pin, archive, move, delete with Undo).

Every change is written to the store, then shown in the sidebar. Pin,
archive, move and delete offer Undo for a few seconds (``parley.gui.notices.undo``). A
delete hides the chat at once and is made durable right away by archiving it
(so a crash during the undo window loses nothing and shows no ghost); the
row is deleted for good when the window passes, or when Parley closes.
Forks of a deleted chat stay (the question says so), at their space's level; a moved
chat takes its forks in its space with it, nested as they were.
"""

from __future__ import annotations

import contextlib
import logging
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QMenu
from shiboken6 import isValid

from parley.core.content import CompactSummaryBlock, Turn
from parley.core.errors import ParleyError
from parley.core.providers.capabilities import ProviderKind
from parley.core.providers.model_ref import parse_model_ref
from parley.core.store.errors import SessionNotFound, TurnNotFound
from parley.core.tools.executor import ON_BY_DEFAULT
from parley.core.tools.memory import Memory
from parley.core.visible import strip_invisible
from parley.gui import dialogs
from parley.gui.chat.edit import typed_text
from parley.gui.look.popup import popup
from parley.gui.sidebar.space_dialog import (
    SpaceDialog,
    SpaceValues,
    ask_delete_space,
    name_taken,
)
from parley.gui.sidebar.space_documents import SpaceDocumentsPanel, open_panel

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget

    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.undo import UndoManager
    from parley.gui.sidebar import Sidebar

log = logging.getLogger(__name__)

#: The most of a fork point's text kept: the tooltip shows it, the row what fits.
FORK_POINT_CHARS = 160


_MARKUP = str.maketrans("", "", "*_`#>")


#: The "from …" line of a fork made at a compaction summary's card (Fork on the card).
FROM_SUMMARY = "from the summary"


def fork_point_text(text: str) -> str:
    """The "from “…”" line of a fork: the first words of the message it was forked at
    (markdown marks dropped)."""
    line = " ".join(text.translate(_MARKUP).split())
    if not line:
        return "from a message without text"
    if len(line) > FORK_POINT_CHARS:
        line = line[: FORK_POINT_CHARS - 1].rstrip() + "…"
    return f"from “{line}”"


def fork_point_of(turn: Turn) -> str:
    """The "from …" line of a fork made at ``turn``: :data:`FROM_SUMMARY` for a compaction
    summary (its card shows no message text), else :func:`fork_point_text` of what was
    typed in it."""
    if any(isinstance(b, CompactSummaryBlock) for b in turn.blocks):
        return FROM_SUMMARY
    return fork_point_text(typed_text(turn))


class Organizer:
    """Spaces and session housekeeping for one window (after ``start``).

    Args:
        chat: the open chat's controller (its store, providers and run loop's tools).
        sidebar, model_picker, undo, tasks: the window's list of chats, model picker
            (the models a space may default to), undoable notices and background tasks.
        parent: the main window as a widget (dialogs and menus are its children).
        show_problem: tells a user error in the window.
    """

    def __init__(self, chat: OpenChat, sidebar: Sidebar, model_picker: ModelPicker,
                 undo: UndoManager, tasks: TaskSet, parent: QWidget, *,
                 show_problem: Callable[[ParleyError], None]) -> None:
        self.sidebar, self.model_picker, self.undo, self.tasks = sidebar, model_picker, undo, tasks
        self.parent, self.show_problem = parent, show_problem
        self.chat = chat
        self.store = chat.store
        self.spaces: dict[str, Any] = {}
        self.default_space_id: str | None = None
        #: sessions deleted but still undoable (hidden from lists and search).
        self.deleting: set[str] = set()
        bar = sidebar
        bar.rename_requested.connect(self.rename_session)
        bar.delete_requested.connect(self.delete_session)
        bar.pin_requested.connect(self.pin_session)
        bar.archive_requested.connect(self.archive_session)
        bar.move_requested.connect(self.move_session)
        bar.space_action.connect(self._space_action)
        bar.space_dropped.connect(self.drop_space)
        bar.new_space_requested.connect(self.new_space)
        bar.archived_toggled.connect(self._archived_toggled)

    def _tools(self) -> Any:
        """The run loop's tools (None before the run loop is loaded)."""
        runner = self.chat.runner
        return runner.tools if runner is not None else None

    def _mcp(self) -> Any:
        """The MCP servers' tools (None before the run loop is loaded, or with none)."""
        tools = self._tools()
        return tools.mcp if tools is not None else None

    def _spawn(self, coro: Any, name: str) -> None:
        self.tasks.spawn(coro, name=name)

    def _title(self, sid: str) -> str:
        session = self.chat.sessions.get(sid)
        title = session.title if session is not None else None
        return strip_invisible(title or "") or "this chat"

    # -- spaces -------------------------------------------------------------
    async def load_spaces(self) -> list[Any]:
        """Read the spaces (in order) and the default one; returns them."""
        spaces = await self.store.list_spaces()
        self.spaces = {s.id: s for s in spaces}
        self.default_space_id = next((s.id for s in spaces if s.is_default), None)
        self.sidebar.default_space_id = self.default_space_id
        return list(spaces)

    def current_space(self) -> str | None:
        """The space a space command acts on: the focused heading's, else the open chat's."""
        if self.sidebar.tree.hasFocus():
            focused = self.sidebar.current_space_id()
            if focused:
                return focused
        return self.chat.space_id or self.default_space_id

    def new_space(self) -> SpaceDialog:
        """Ask for a new space's name, system prompt, model, memory and tools switch;
        create it on OK."""
        dlg = self._space_dialog(None)
        self._open_dialog(dlg, lambda v: self._spawn(self._create_space(v), "new-space"))
        return dlg

    def _open_dialog(self, dlg: SpaceDialog, on_accept: Any) -> None:
        """Open ``dlg``; on OK pass its values to ``on_accept``, read before the
        dialog (and its fields) is deleted."""
        self.dialog = dlg  # tests find it here

        def finished(result: int) -> None:
            if result == SpaceDialog.DialogCode.Accepted:
                on_accept(dlg.values())
            dlg.deleteLater()

        dlg.finished.connect(finished)
        dlg.open()

    def _space_dialog(self, space: Any) -> SpaceDialog:
        """A space dialog; its memory and tools switch are filled in the background."""
        tools = self._tools()
        dlg = SpaceDialog(self.parent, self.model_picker.choices, space,
                          with_tools=tools is not None, taken=self._other_names(space))
        if tools is not None:
            self._spawn(self._fill_tools_fields(dlg, tools, space), "space-dialog-memory")
        if space is not None:  # a new space gets its documents once it exists
            panel = open_panel(dlg, self.store, space, self._spawn, hub=self.chat.hub,
                               tools=tools)
            panel.changed.connect(lambda: self._documents_changed(space.id))
        return dlg

    def _other_names(self, space: Any) -> list[str]:
        """The names of the spaces other than ``space`` (None: every space's)."""
        return [s.name for s in self.spaces.values() if space is None or s.id != space.id]

    def _documents_changed(self, space_id: str) -> None:
        """A space's documents changed (its dialog's panel): the open chat's header says
        what it has now (a chat given an older set says so), a new chat's meter counts
        the new ones."""
        self.chat.models.show_documents()
        self.chat.meter.documents_changed(space_id)

    def _provider_kind(self, model_ref: str | None) -> ProviderKind:
        """The API family of ``model_ref``'s provider (openai_compatible when unknown)."""
        hub = self.chat.hub
        if hub is None:  # no hub yet
            return "openai_compatible"
        try:
            return hub.config(parse_model_ref(model_ref or "")[0]).kind
        except Exception:  # no such provider, a malformed ref
            return "openai_compatible"

    def _said_tools(self, model_ref: str | None) -> bool:
        """True when ``model_ref``'s server said the model takes tools (``ModelInfo.tools``)."""
        hub = self.chat.hub
        if hub is None:  # no hub yet
            return False
        try:
            return hub.model_info(model_ref or "").tools is True
        except Exception:  # a malformed ref
            return False

    async def _fill_tools_fields(self, dlg: SpaceDialog, tools: Any, space: Any) -> None:
        hub = self.chat.hub
        ref = (space.default_model if space is not None else None) or (
            hub.default_model_ref() if hub is not None else None)
        kind = self._provider_kind(ref)
        proven = self._said_tools(ref)
        if space is None:  # a new space: empty memory, the switch's default for the model
            memory, on = Memory(""), kind in ON_BY_DEFAULT or proven
        else:
            memory = await tools.memories.get(space.id)
            on = await tools.enabled(space.id, kind, ref or "", proven=proven)
        mcp = self._mcp()
        servers = list(mcp.host.configs) if mcp is not None else []
        off = await mcp.servers_off(space.id) if mcp is not None and space is not None else []
        if isValid(dlg) and dlg.isVisible():
            dlg.set_memory(memory.text, memory.limit)
            dlg.set_tools_enabled(on)
            dlg.set_mcp_servers(servers, off)

    async def _save_tools_fields(self, space_id: str, v: SpaceValues) -> None:
        """Save the dialog's memory (``MemoryStore.set``) and tools switch, when changed."""
        tools = self._tools()
        if tools is None:
            return
        if v.memory is not None:
            await tools.memories.set(space_id, v.memory)
        if v.tools_enabled is not None:
            await tools.set_enabled(space_id, v.tools_enabled)
        mcp = self._mcp()
        if v.mcp_off is not None and mcp is not None:  # MCP servers switched for the space
            for name in mcp.host.configs:
                await mcp.set_server_on(space_id, name, name not in v.mcp_off)

    async def _create_space(self, v: SpaceValues) -> None:
        space = await self.store.create_space(v.name, system_prompt=v.system_prompt,
                                              default_model=v.default_model)
        await self._save_tools_fields(space.id, v)
        self.spaces[space.id] = space
        self.sidebar.model.add_space(space)
        self.chat.new_session(space.id)  # a new space is where the next chat goes

    def edit_space(self, space_id: str | None = None, *,
                   documents: bool = False) -> SpaceDialog | None:
        """Edit a space's name, system prompt, default model and documents (default: the
        current space); ``documents``: with the focus in its documents list."""
        space = self.spaces.get(space_id or self.current_space() or "")
        if space is None:
            return None
        dlg = self._space_dialog(space)
        self._open_dialog(dlg, lambda v: self._spawn(self._save_space(space, v), "edit-space"))
        if documents and isinstance(dlg.documents, SpaceDocumentsPanel):
            dlg.documents.list.setFocus()
        return dlg

    async def _save_space(self, space: Any, v: SpaceValues) -> None:
        await self._save_tools_fields(space.id, v)  # first: a refused memory changes nothing
        if v.name != space.name:
            await self.store.rename_space(space.id, v.name)
        saved = await self.store.update_space(space.id, system_prompt=v.system_prompt,
                                              default_model=v.default_model)
        self.spaces[space.id] = saved
        self.sidebar.model.rename_space(space.id, saved.name)
        self.chat.models.space_changed(space.id)
        self.chat.models.update_title()  # the header names the open chat's space

    def rename_space(self, space_id: str | None = None) -> None:
        """Ask for a space's new name (default: the current space)."""
        space = self.spaces.get(space_id or self.current_space() or "")
        if space is None:
            return
        taken = self._other_names(space)
        name = dialogs.ask_text(self.parent, "Rename space", "Name:", space.name,
                                refuse=lambda text: name_taken(text, taken))
        if name and name != space.name:
            self._spawn(self._rename_space(space.id, name), "rename-space")

    async def _rename_space(self, space_id: str, name: str) -> None:
        self.spaces[space_id] = await self.store.rename_space(space_id, name)
        self.sidebar.model.rename_space(space_id, name)
        self.chat.models.update_title()  # the header names the open chat's space

    def move_space(self, space_id: str, delta: int) -> None:
        """Move a space ``delta`` places down (negative: up) in the sidebar."""
        ids = self.sidebar.model.space_ids()
        if space_id not in ids:
            return
        old = ids.index(space_id)
        new = max(0, min(len(ids) - 1, old + delta))
        if new != old:
            ids.insert(new, ids.pop(old))
            self._spawn(self._reorder(ids), "reorder-spaces")

    def drop_space(self, space_id: str, onto: str) -> None:
        """A space heading dropped on another one takes that one's place."""
        ids = self.sidebar.model.space_ids()
        if space_id in ids and onto in ids and space_id != onto:
            self.move_space(space_id, ids.index(onto) - ids.index(space_id))

    async def _reorder(self, ids: list[str]) -> None:
        spaces = await self.store.reorder_spaces(ids)
        self.spaces = {s.id: s for s in spaces}
        self.sidebar.model.order_spaces([s.id for s in spaces])

    def delete_space(self, space_id: str | None = None) -> None:
        """Delete a space after asking whether its chats move to the default space or go."""
        sid = space_id or self.current_space()
        space = self.spaces.get(sid or "")
        if space is None:
            return
        if space.is_default:
            from parley.core.store.errors import CannotDeleteDefaultSpace

            self.show_problem(CannotDeleteDefaultSpace())
            return
        self._spawn(self._delete_space(space), "delete-space")

    async def _delete_space(self, space: Any) -> None:
        chats = await self.store.list_sessions(space_id=space.id, include_archived=True,
                                               limit=10_000)
        kept = [s for s in chats if s.id not in self.deleting]  # (those go for good first)
        default = self.spaces.get(self.default_space_id or "")
        choice = ask_delete_space(self.parent, space.name, len(kept),
                                  default.name if default else "the default space",
                                  archived=sum(1 for s in kept if s.archived))
        if choice is None:
            return
        await self.undo_flush()
        await self.store.delete_space(space.id, delete_sessions=choice == "delete")
        open_here = self.chat.session_id in {s.id for s in chats}
        # A new chat of the space (nothing sent yet): load_sidebar below puts it in the
        # default space quietly; its greeting and header are told here.
        new_here = not open_here and self.chat.space_id == space.id
        for s in chats:
            self.chat.sessions.pop(s.id, None)
        await self.chat.load_sidebar()
        if open_here:
            if choice == "delete":
                self.chat.session_id = None
                await self.chat.opener.show_new_chat(self.default_space_id)
            else:
                await self.chat.opener.reload()
                session = self.chat.sessions.get(self.chat.session_id or "")
                if session is not None:  # its space and the header's name are the new ones
                    self.chat.remember_session(session)
        elif new_here:
            self.chat.space_id = self.default_space_id
            self.chat.models.update_title()

    def _space_action(self, action: str, space_id: str) -> None:
        if action == "new-chat":
            self.chat.new_session(space_id)
        elif action == "rename":
            self.rename_space(space_id)
        elif action == "edit":
            self.edit_space(space_id)
        elif action in ("up", "down"):
            self.move_space(space_id, -1 if action == "up" else 1)
        elif action == "delete":
            self.delete_space(space_id)

    # -- sessions: rename, pin, move ---------------------------------------------
    def _refused(self) -> bool:
        """True, and said, when sessions.db was opened read-only: an action that would
        write asks nothing it could not do."""
        refused = self.store.write_refused()
        if refused is not None:
            self.show_problem(refused)  # one line in the status bar (WindowProblems)
        return refused is not None

    def rename_session(self, session_id: str | None = None) -> None:
        """Ask for a new title for a chat (default: the open one)."""
        sid = session_id or self.chat.session_id
        if sid is None or self._refused():
            return
        old = self.chat.sessions[sid].title if sid in self.chat.sessions else ""
        title = dialogs.ask_text(self.parent, "Rename chat", "Title:", old or "")
        if title:
            self._spawn(self._rename(sid, title), "rename")

    def rename_open(self, title: str) -> None:
        """The open chat was renamed in place (the header's heading): save the title."""
        sid = self.chat.session_id
        if sid is not None and title.strip() and not self._refused():
            self._spawn(self._rename(sid, title.strip()), "rename")

    async def _rename(self, sid: str, title: str) -> None:
        self.chat.remember_session(await self.store.rename_session(sid, title))

    def pin_session(self, session_id: str | None = None) -> None:
        """Pin a chat to the top of its space, or unpin it (Undo offered)."""
        sid = session_id or self.chat.session_id
        session = self.chat.sessions.get(sid or "")
        if session is not None:
            self._spawn(self._pin(session.id, not session.pinned), "pin")

    async def _pin(self, sid: str, pinned: bool, *, offer: bool = True) -> None:
        self.chat.remember_session(await self.store.pin_session(sid, pinned))
        if offer:
            self.undo.offer(f"Pinned “{self._title(sid)}”" if pinned
                              else f"Unpinned “{self._title(sid)}”",
                              undo=lambda: self._pin(sid, not pinned, offer=False))

    def move_session(self, session_id: str | None = None, space_id: str | None = None) -> None:
        """Move a chat to another space; without ``space_id``, a menu of spaces asks."""
        sid = session_id or self.chat.session_id
        if sid is None or sid not in self.chat.sessions:
            return
        if space_id is None:
            self._ask_space(sid)
            return
        if self.chat.sessions[sid].space_id != space_id:
            self._spawn(self._move(sid, space_id), "move")

    def _ask_space(self, sid: str) -> QMenu:
        menu = QMenu(self.parent)
        menu.setAccessibleName("Move to space")
        here = self.chat.sessions[sid].space_id
        for space_id in self.sidebar.model.space_ids():
            entry = menu.addAction(self.spaces[space_id].name if space_id in self.spaces
                                   else space_id,
                                   partial(self.move_session, sid, space_id))
            entry.setEnabled(space_id != here)
        self.space_menu = menu  # kept for tests
        index = self.sidebar.model.index_of(sid)
        if index.isValid() and self.sidebar.isVisible():
            rect = self.sidebar.tree.visualRect(index)
            pos = self.sidebar.tree.viewport().mapToGlobal(rect.center())
        else:
            pos = QCursor.pos()
        popup(menu, pos)  # a command opened it: its first space is highlighted
        return menu

    async def _move(self, sid: str, space_id: str, *, offer: bool = True) -> None:
        """Move ``sid`` with its forks in its space (they stay nested under it)."""
        before = self.chat.sessions[sid].space_id
        for moved in await self.store.move_session(sid, space_id):
            self.chat.remember_session(moved)
        if offer:
            name = self.spaces[space_id].name if space_id in self.spaces else "another space"
            self.undo.offer(f"Moved “{self._title(sid)}” to {name}",
                              undo=lambda: self._move(sid, before, offer=False))

    # -- sessions: archive, delete -------------------------------------------------
    def archive_session(self, session_id: str | None = None) -> None:
        """Archive a chat (hidden unless archived chats are shown), or unarchive it."""
        sid = session_id or self.chat.session_id
        session = self.chat.sessions.get(sid or "")
        if session is not None:
            self._spawn(self._archive(session.id, not session.archived), "archive")

    async def _archive(self, sid: str, archived: bool, *, offer: bool = True,
                       reopen: bool = False) -> None:
        """Archive (or unarchive) ``sid``; ``offer``: Undo in the toast, which reopens the
        chat when it was the open one (Ctrl+W closes the open chat by archiving it);
        ``reopen``: open it once unarchived."""
        was_open = sid == self.chat.session_id
        session = await self.store.archive_session(sid, archived)
        self.chat.sessions[sid] = session
        if archived and not self.sidebar.show_archived:
            await self._hide(sid)
        else:
            self.chat.remember_session(session)
        if reopen and sid != self.chat.session_id:
            self.chat.open_session(sid)
        if offer:
            verb = "Archived" if archived else "Unarchived"
            self.undo.offer(f"{verb} “{self._title(sid)}”",
                              undo=lambda: self._archive(sid, not archived, offer=False,
                                                         reopen=was_open and archived))

    async def _hide(self, sid: str) -> None:
        """Take a chat off the list; if it is open, open its neighbour in the same space
        (the next row, else the one above), or a new chat in that space."""
        model = self.sidebar.model
        space = model.space_of(sid)
        ids = [i for i in model.session_ids() if model.space_of(i) == space]
        model.remove(sid)
        if sid == self.chat.session_id:
            await self.chat.opener.leave(sid, ids)

    def delete_session(self, session_id: str | None = None) -> None:
        """Delete a chat (default: the open one) after asking; Undo is offered."""
        sid = session_id or self.chat.session_id
        if sid is None or sid in self.deleting or self._refused():
            return
        title = self._title(sid)
        waiting = len(self.chat.runs.queue.messages(sid))
        queued = (f" Its {waiting} queued message{'s' if waiting > 1 else ''} (not sent "
                  "yet) go with it; Undo brings them back, paused." if waiting else "")
        forks = sum(1 for s in self.chat.sessions.values() if s.parent_session_id == sid)
        kept = ("" if not forks else " Its fork is kept, as a chat of its own." if forks == 1
                else f" Its {forks} forks are kept, as chats of their own.")
        if dialogs.confirm(self.parent, "Delete chat",
                           f"Delete “{title}”? You can undo this for a few seconds.{kept}"
                           f"{queued}", action="Delete", destructive=True):
            self._spawn(self._delete(sid), "delete")

    async def _delete(self, sid: str) -> None:
        self.chat.runs.queue.hold(sid)  # nothing goes while Undo is offered
        await self.chat.runs.stop_and_wait(sid)
        before = self.chat.sessions.get(sid)
        archived_before = bool(before.archived) if before is not None else False
        was_open = sid == self.chat.session_id
        await self.store.archive_session(sid, True)  # durable hide, see module doc
        self.deleting.add(sid)
        await self._hide(sid)

        async def undo() -> None:
            self.deleting.discard(sid)
            self.chat.remember_session(await self.store.archive_session(sid, archived_before))
            if was_open:  # back where the user was
                self.chat.open_session(sid)

        async def commit() -> None:
            self.deleting.discard(sid)
            with contextlib.suppress(SessionNotFound):  # gone already (its space was deleted)
                await self.store.delete_session(sid)
            await self.chat.drafts.discard(sid)
            self.chat.sessions.pop(sid, None)
            self.sidebar.model.set_parent_gone(sid)

        self.undo.offer(f"Deleted “{self._title(sid)}”", undo=undo, commit=commit)

    async def undo_flush(self) -> None:
        """Make a pending delete final now (before closing, or deleting a space)."""
        await self.undo.flush()

    def _archived_toggled(self, shown: bool) -> None:
        self._spawn(self.chat.load_sidebar(), "show-archived" if shown else "hide-archived")

    # -- forks -------------------------------------------------------------------------
    async def describe_forks(self, sessions: list[Any]) -> None:
        """Show each fork's fork point ("from “…”") under its title in the sidebar."""
        for s in sessions:
            if not s.forked_from_turn_id:
                continue
            try:
                turn = await self.store.get_turn(s.forked_from_turn_id, hydrate=False)
            except (TurnNotFound, ParleyError):
                continue  # the parent (and its turns) were deleted
            self.sidebar.model.set_fork_point(s.id, fork_point_of(turn))
