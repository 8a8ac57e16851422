"""Add or edit one MCP server (Settings → Tools).

A server is a **program** (command, arguments, working folder, environment
variables: Parley starts it and talks to it over stdin/stdout) or a **URL**
(a Streamable HTTP endpoint and its headers). Arguments are typed as on a
command line (quotes group words); environment variables one ``NAME=value``
per line; headers one ``Name: value`` per line.

Values of secret-looking variables and headers (``API_KEY``, ``GITHUB_TOKEN``,
``Authorization`` …: ``parley.core.mcp.config.is_secret_name``) are not written to
``mcp.json``: :meth:`ServerDialog.values` returns them apart (``secrets``) for
the keyring, and the file holds ``<in keyring>`` instead. Editing a server
shows ``<in keyring>`` for such a value; leaving it so keeps the saved secret.

OK checks the entry with ``parley.core.mcp.config.parse_server`` and shows its
message in the dialog (which stays open) when something is wrong.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from parley.core.mcp.approvals import program_of
from parley.core.mcp.config import (
    KEYRING_MARK,
    McpConfigError,
    ServerConfig,
    is_secret_name,
    parse_server,
)
from parley.gui import dialogs


def _lines(text: str, sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, found, value = line.partition(sep)
        if not found or not name.strip():
            raise ValueError(f"{what}, line {n}: write it as NAME{sep}value")
        out[name.strip()] = value.strip()
    return out


def split_secrets(values: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split values into what the file holds and the secrets for the keyring.

    Returns:
        (values with each secret replaced by :data:`KEYRING_MARK`, ``{name: secret}``);
        a value already :data:`KEYRING_MARK` stays so and is not in the secrets.
    """
    kept, secrets = dict(values), {}
    for name, value in values.items():
        if is_secret_name(name) and value and value != KEYRING_MARK:
            kept[name] = KEYRING_MARK
            secrets[name] = value
    return kept, secrets


class ServerDialog(QDialog):
    """The fields of one server; read :meth:`values` when ``accepted`` fires.

    Args:
        parent: the Settings dialog.
        server: the server to edit, or None to add one.
        taken: names already in use (refused for a new name).
        path: ``mcp.json``, named in error messages.
    """

    def __init__(self, parent: QWidget | None, server: ServerConfig | None = None, *,
                 taken: frozenset[str] = frozenset(), path: Path = Path("mcp.json")) -> None:
        super().__init__(parent)
        self.setObjectName("McpServerDialog")
        self.setWindowTitle("Edit MCP server" if server else "Add MCP server")
        self.setAccessibleName(self.windowTitle())
        self.server, self.taken, self.path = server, taken, path
        self.result_server: ServerConfig | None = None
        self.secrets: dict[str, dict[str, str]] = {"env": {}, "headers": {}}
        self.name_edit = QLineEdit(self)
        self.name_edit.setAccessibleName("Server name")
        self.kind = QComboBox(self)
        self.kind.setAccessibleName("Kind of server")
        self.kind.addItem("A program on this computer (stdio)", "stdio")
        self.kind.addItem("A URL (Streamable HTTP)", "http")
        self.command = QLineEdit(self)
        self.command.setAccessibleName("Command")
        self.command.setPlaceholderText("npx, uvx, python, /path/to/server …")
        self.args = QLineEdit(self)
        self.args.setAccessibleName("Arguments")
        self.args.setPlaceholderText('-y @modelcontextprotocol/server-filesystem "/my notes"')
        self.cwd = QLineEdit(self)
        self.cwd.setAccessibleName("Working folder")
        self.cwd.setPlaceholderText("Optional")
        self.env = self._box("Environment variables", "NAME=value, one a line")
        self.url = QLineEdit(self)
        self.url.setAccessibleName("URL")
        self.url.setPlaceholderText("https://example.com/mcp")
        self.headers = self._box("Headers", "Name: value, one a line")
        program = QWidget(self)
        pform = QFormLayout(program)
        pform.setContentsMargins(0, 0, 0, 0)
        pform.addRow("&Command", self.command)
        pform.addRow("A&rguments", self.args)
        pform.addRow("&Working folder", self.cwd)
        pform.addRow("&Environment", self.env)
        web = QWidget(self)
        wform = QFormLayout(web)
        wform.setContentsMargins(0, 0, 0, 0)
        wform.addRow("&URL", self.url)
        wform.addRow("&Headers", self.headers)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(program)
        self.pages.addWidget(web)
        self.kind.currentIndexChanged.connect(self.pages.setCurrentIndex)
        form = QFormLayout()
        form.addRow("&Name", self.name_edit)
        form.addRow("&Kind", self.kind)
        note = QLabel("Secrets (variables or headers named like KEY, TOKEN, SECRET, PASSWORD, "
                      "AUTH) are kept in the system keyring, not in mcp.json.", self)
        note.setWordWrap(True)
        note.setObjectName("DialogNote")
        self.error_label = QLabel(self)
        self.error_label.setObjectName("DialogError")
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("Problem")
        self.error_label.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(
            "Save" if server else "Add server")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.pages)
        lay.addWidget(note)
        lay.addWidget(self.error_label)
        lay.addWidget(buttons)
        self.setMinimumWidth(dialogs.TEXT_MIN_WIDTH)
        if server is not None:
            self._show(server)
        self.name_edit.setFocus()

    def _box(self, name: str, placeholder: str) -> QPlainTextEdit:
        box = QPlainTextEdit(self)
        box.setAccessibleName(name)
        box.setPlaceholderText(placeholder)
        box.setTabChangesFocus(True)
        box.setFixedHeight(80)
        return box

    def _show(self, s: ServerConfig) -> None:
        self.name_edit.setText(s.name)
        self.kind.setCurrentIndex(0 if s.kind == "stdio" else 1)
        self.command.setText(s.command or "")
        self.args.setText(shlex.join(s.args))
        self.cwd.setText(s.cwd or "")
        self.env.setPlainText("\n".join(f"{k}={v}" for k, v in s.env.items()))
        self.url.setText(s.url or "")
        self.headers.setPlainText("\n".join(f"{k}: {v}" for k, v in s.headers.items()))

    def show_error(self, message: str) -> None:
        """Show a problem in the dialog (it stays open)."""
        self.error_label.setText(message)
        self.error_label.setVisible(True)

    def _entry(self) -> dict[str, object]:
        if self.kind.currentData() == "stdio":
            try:
                args = shlex.split(self.args.text())
            except ValueError as exc:
                raise ValueError(f"the arguments cannot be read ({exc}); "
                                 "close every quote") from None
            env, self.secrets["env"] = split_secrets(
                _lines(self.env.toPlainText(), "=", "Environment"))
            entry: dict[str, object] = {"command": self.command.text().strip(), "args": args,
                                        "env": env}
            if self.cwd.text().strip():
                entry["cwd"] = self.cwd.text().strip()
            return entry
        headers, self.secrets["headers"] = split_secrets(
            _lines(self.headers.toPlainText(), ":", "Headers"))
        return {"url": self.url.text().strip(), "headers": headers}

    def accept(self) -> None:
        """Check the entry; close with it, or say what is wrong and stay open."""
        name = self.name_edit.text().strip()
        if not name:
            self.show_error("Give the server a name.")
            return
        if name in self.taken and (self.server is None or name != self.server.name):
            self.show_error(f"There is already a server called “{name}”; choose another name.")
            return
        try:
            parsed = parse_server(self.path, name, self._entry())
        except ValueError as exc:
            self.show_error(f"Not saved: {exc}.")
            return
        except McpConfigError as exc:
            self.show_error(f"Not saved: {exc.problem}.")
            return
        if self.server is not None:  # keep what the dialog does not edit
            # …but not the tools always allowed once the program is another one
            # (parley.core.mcp.approvals: an approval is about the program).
            same = program_of(parsed) == program_of(self.server)
            parsed = replace(parsed, always_allow=self.server.always_allow if same else (),
                             disabled_tools=self.server.disabled_tools,
                             timeout_s=self.server.timeout_s, extra=self.server.extra)
        self.result_server = parsed
        super().accept()
