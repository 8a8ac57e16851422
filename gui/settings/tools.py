"""Settings → Tools: the MCP servers, their status and their tools.

Names, descriptions and command lines are shown with their invisible characters
written out (``<U+202E>``: ``parley.core.visible``), as in the approval dialog. The page
lists the servers of ``mcp.json`` (``parley.core.mcp``) with their status
(not started, starting, ready with N tools, failed with the server's own
words), and for the selected server its tools, each with a box to offer it to
the model or not (``disabledTools``). Buttons: Add…, Edit…, Remove, Start /
Restart, and Import from Claude desktop (its ``claude_desktop_config.json``
where it exists; servers already configured under the same name are kept).
Every change is written to ``mcp.json`` at once; secrets go to the keyring
(``parley.gui.settings.mcp_server``). The generated ``tools.*`` fields (rounds per
message, the MCP time limit) follow on the page.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from parley.core.errors import ParleyError
from parley.core.mcp import config as cfg
from parley.core.mcp.client import ServerStatus
from parley.core.visible import escape_invisible
from parley.gui.settings.mcp_server import ServerDialog, split_secrets
from parley.gui.settings.widgets import hint

INTRO = ("MCP servers give the model more tools: your files, a database, a browser, your "
         "company's services. They are kept in {path}, in the same shape as Claude "
         "desktop's configuration. A program is started when a chat first needs it and "
         "stopped when Parley quits. Each tool asks before it runs, unless you allowed it.")
NO_WINDOW = "MCP servers can be set up here once Parley's window has loaded its tools."


class ToolsPage(QWidget):
    """The MCP part of Settings → Tools.

    Args:
        mcp: the window's ``parley.core.mcp.McpTools`` (None: the page only says so).
        keys: the ``parley.core.keys.KeyStore`` for the servers' secrets.
        tasks: the Settings dialog's ``TaskSet``.

    Attributes:
        claude_path: where "Import from Claude desktop" reads
            (``parley.core.mcp.config.claude_desktop_path``).
    """

    def __init__(self, mcp: Any, keys: Any, tasks: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mcp, self.keys, self.tasks = mcp, keys, tasks
        self.host = mcp.host if mcp is not None else None
        self.claude_path: Path = cfg.claude_desktop_path()
        self._unlisten = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        if self.host is None:
            lay.addWidget(hint(NO_WINDOW, self))
            return
        lay.addWidget(hint(INTRO.format(path=self.host.path), self))
        self.file_error = hint("", self, error=True)
        lay.addWidget(self.file_error)
        label = QLabel("MCP &servers", self)
        self.list = QListWidget(self)
        self.list.setAccessibleName("MCP servers")
        self.list.setMinimumHeight(110)
        label.setBuddy(self.list)
        lay.addWidget(label)
        lay.addWidget(self.list)
        row = QHBoxLayout()
        self.add_button = self._button("&Add…", row, self.add_server)
        self.edit_button = self._button("&Edit…", row, self.edit_server)
        self.remove_button = self._button("Re&move", row, self.remove_server)
        self.restart_button = self._button("Start / &restart", row, self.restart_server)
        self.import_button = self._button("&Import from Claude desktop", row,
                                          self.import_claude)
        row.addStretch(1)
        lay.addLayout(row)
        self.detail = hint("", self)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.detail)
        self.message = hint("", self)
        lay.addWidget(self.message)
        tools_label = QLabel("&Tools of this server (unticked ones are not offered to the "
                             "model)", self)
        self.tools = QListWidget(self)
        self.tools.setAccessibleName("Tools of the selected server")
        self.tools.setMinimumHeight(110)
        tools_label.setBuddy(self.tools)
        lay.addWidget(tools_label)
        lay.addWidget(self.tools)
        self.list.currentRowChanged.connect(lambda _row: self._show_selected())
        self.tools.itemChanged.connect(self._tool_toggled)
        self._unlisten = self.host.on_change(self._status_changed)
        self.refresh()
        self.tasks.spawn(self._reload(), name="mcp-reload")

    async def _reload(self) -> None:
        """Read ``mcp.json`` again as the page opens (it may have been fixed or written
        since Parley started) and list what it holds."""
        assert self.host is not None
        if await self.host.reload() and isValid(self):
            self.refresh()

    def _button(self, text: str, row: QHBoxLayout, slot: Any) -> QPushButton:
        button = QPushButton(text, self)
        button.setAutoDefault(False)
        button.clicked.connect(lambda _=False: slot())
        row.addWidget(button)
        return button

    def close_page(self) -> None:
        """Stop hearing about status changes (the dialog is closing)."""
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None

    # --- showing -----------------------------------------------------------------------

    def selected(self) -> str | None:
        """The selected server's name, or None."""
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def refresh(self, select: str | None = None) -> None:
        """List the servers again (keeping or setting the selection)."""
        assert self.host is not None
        select = select or self.selected()
        error = self.host.error
        self.file_error.setText(f"{error.message} Add… and Import wait until then."
                                if error else "")
        self.file_error.setVisible(error is not None)
        self.list.blockSignals(True)
        self.list.clear()
        for name, status in self.host.statuses().items():
            item = QListWidgetItem(self._row_text(status))
            item.setData(Qt.ItemDataRole.UserRole, name)
            self.list.addItem(item)
            if name == select:
                self.list.setCurrentItem(item)
        if self.list.currentRow() < 0 and self.list.count():
            self.list.setCurrentRow(0)
        self.list.blockSignals(False)
        has = self.list.count() > 0
        for button in (self.edit_button, self.remove_button, self.restart_button):
            button.setEnabled(has)
        # Adding rewrites the file: not while it holds something Parley cannot read.
        why = (f"{self.host.path.name} has a problem to fix first (see above)"
               if error is not None else "")
        for button in (self.add_button, self.import_button):
            button.setEnabled(error is None)
            button.setToolTip(why)
        self._show_selected()

    @staticmethod
    def _row_text(status: ServerStatus) -> str:
        text = status.describe()
        return escape_invisible(f"{status.name} — {text.splitlines()[0][:120]}")

    def _status_changed(self, status: ServerStatus) -> None:
        if not isValid(self):
            self.close_page()
            return
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == status.name:
                item.setText(self._row_text(status))
        if status.name == self.selected():
            self._show_selected()

    def _show_selected(self) -> None:
        assert self.host is not None
        name = self.selected()
        self.tools.blockSignals(True)
        self.tools.clear()
        conf = self.host.configs.get(name or "")
        if name is None or conf is None:
            self.detail.setText(
                "" if self.host.error is not None  # the file's problem is said above
                else "No MCP servers yet: add one, or import Claude desktop's.")
            self.tools.blockSignals(False)
            return
        status = self.host.status(name)
        self.detail.setText(escape_invisible(f"{conf.describe()}\n{status.describe()}"))
        for tool in status.tools:
            item = QListWidgetItem(escape_invisible(
                f"{tool.name} — {tool.description.splitlines()[0][:100]}"
                if tool.description else tool.name))
            item.setData(Qt.ItemDataRole.UserRole, tool.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            off = tool.name in conf.disabled_tools
            item.setCheckState(Qt.CheckState.Unchecked if off else Qt.CheckState.Checked)
            self.tools.addItem(item)
        if not status.tools:
            item = QListWidgetItem("Start the server to see its tools.")
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.tools.addItem(item)
        self.tools.blockSignals(False)

    def say(self, text: str) -> None:
        """Show what the last action did (or why it did nothing)."""
        self.message.setText(text)

    # --- changing ---------------------------------------------------------------------------

    async def _save(self, servers: dict[str, cfg.ServerConfig], select: str | None) -> None:
        assert self.host is not None
        if self.host.error is not None:  # rewriting it would lose what the file holds
            self.say(f"Not saved: {self.host.path} has a problem to fix first (see above); "
                     "nothing was changed.")
            return
        try:
            await self.host.save(servers)
        except ParleyError as exc:
            self.say(exc.message)
            return
        if isValid(self):
            self.refresh(select)

    async def _keep_secrets(self, name: str, secrets: dict[str, dict[str, str]]) -> None:
        for where, values in secrets.items():
            for key, value in values.items():
                await asyncio.to_thread(self.keys.set, cfg.secret_id(name, where, key), value)

    def _tool_toggled(self, item: QListWidgetItem) -> None:
        assert self.host is not None
        name, tool = self.selected(), item.data(Qt.ItemDataRole.UserRole)
        conf = self.host.configs.get(name or "")
        if conf is None or not tool:
            return
        on = item.checkState() == Qt.CheckState.Checked
        servers = dict(self.host.configs)
        servers[conf.name] = cfg.with_tool_enabled(conf, tool, on)
        self.tasks.spawn(self._save(servers, conf.name), name="mcp-tool-switch")

    def _open_dialog(self, server: cfg.ServerConfig | None) -> ServerDialog:
        assert self.host is not None
        dlg = ServerDialog(self, server, taken=frozenset(self.host.configs),
                           path=self.host.path)
        dlg.accepted.connect(lambda: self._dialog_done(dlg, server))
        self.dialog = dlg
        dlg.open()
        return dlg

    def _dialog_done(self, dlg: ServerDialog, old: cfg.ServerConfig | None) -> None:
        assert self.host is not None
        new = dlg.result_server
        if new is None:
            return
        servers: dict[str, cfg.ServerConfig] = {}
        for name, conf in self.host.configs.items():  # an edited server keeps its place
            if old is not None and name == old.name:
                servers[new.name] = new
            else:
                servers[name] = conf
        servers.setdefault(new.name, new)

        async def save() -> None:
            await self._keep_secrets(new.name, dlg.secrets)
            await self._save(servers, new.name)
            if old is not None:  # secrets the server no longer uses are forgotten
                gone = set(_secret_entries(old)) - (
                    set(_secret_entries(new)) if new.name == old.name else set())
                await self._forget(old.name, sorted(gone))

        self.tasks.spawn(save(), name="mcp-server-save")

    async def _forget(self, name: str, entries: list[tuple[str, str]]) -> None:
        for where, key in entries:
            try:
                await asyncio.to_thread(self.keys.delete, cfg.secret_id(name, where, key))
            except ParleyError as exc:
                self.say(exc.message)

    def add_server(self) -> ServerDialog:
        """Open the dialog for a new server."""
        return self._open_dialog(None)

    def edit_server(self) -> ServerDialog | None:
        """Open the dialog for the selected server."""
        assert self.host is not None
        conf = self.host.configs.get(self.selected() or "")
        return self._open_dialog(conf) if conf is not None else None

    def remove_server(self) -> None:
        """Remove the selected server (its program is stopped; its secrets and sign-in
        forgotten)."""
        assert self.host is not None
        from parley.gui import dialogs

        name = self.selected()
        conf = self.host.configs.get(name or "")
        if conf is None:
            return
        if not dialogs.confirm(self, "Remove MCP server",
                               f"Remove the MCP server “{escape_invisible(conf.name)}”? "
                               "Its tools are no longer "
                               "offered to the model.", action="Remove", destructive=True):
            return
        servers = {n: c for n, c in self.host.configs.items() if n != conf.name}

        async def remove() -> None:
            await self._save(servers, None)
            await self._forget(conf.name, _secret_entries(conf))

        self.tasks.spawn(remove(), name="mcp-server-remove")

    def restart_server(self) -> None:
        """Start the selected server, or stop and start it again."""
        assert self.host is not None
        name = self.selected()
        if name is not None:
            self.tasks.spawn(self.host.restart(name), name="mcp-server-restart")

    def import_claude(self) -> None:
        """Add Claude desktop's servers (those not configured here already)."""
        assert self.host is not None
        try:
            merged, added = cfg.import_claude_desktop(self.claude_path, self.host.configs)
        except ParleyError as exc:
            self.say(exc.message)
            return
        if not added:
            self.say(f"Nothing to import: every server in {self.claude_path} is already here.")
            return
        secrets: dict[str, dict[str, dict[str, str]]] = {}
        for name in added:
            conf = merged[name]
            env, env_secrets = split_secrets(conf.env)
            headers, header_secrets = split_secrets(conf.headers)
            merged[name] = replace(conf, env=env, headers=headers)
            secrets[name] = {"env": env_secrets, "headers": header_secrets}

        async def save() -> None:
            for name, values in secrets.items():
                await self._keep_secrets(name, values)
            await self._save(merged, added[0])
            if isValid(self):
                self.say(f"Imported from Claude desktop: {', '.join(added)}.")

        self.tasks.spawn(save(), name="mcp-import")


def _secret_entries(conf: cfg.ServerConfig) -> list[tuple[str, str]]:
    """The keyring entries a server may own: its ``<in keyring>`` env variables and
    headers, and its sign-in (``parley.core.mcp.oauth``) when it is an HTTP server."""
    out = [(where, key) for where, values in (("env", conf.env), ("headers", conf.headers))
           for key, value in values.items() if value == cfg.KEYRING_MARK]
    if conf.url:
        out += [("oauth", "tokens"), ("oauth", "client")]
    return out
