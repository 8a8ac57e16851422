"""The MCP servers Parley connects to: ``mcp.json`` in the data folder.

The file has the shape Claude desktop's ``claude_desktop_config.json`` uses,
so an existing configuration can be copied over as it is::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem",
                  "/home/me/notes"], "env": {"DEBUG": "1"}, "cwd": "/home/me"},
        "company": {"url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer ..."}},
    }}

A server is either **stdio** (``command``, optional ``args``, ``env``,
``cwd``: Parley starts the program and talks to it over its stdin/stdout) or
**Streamable HTTP** (``url``, optional ``headers``). Parley also reads, per
server:

* ``alwaysAllow``: tool names that run without asking (as some clients accept);
* ``disabledTools``: tool names never offered to the model (Settings → Tools);
* ``timeout``: seconds one tool call may take (default: the setting
  ``tools.mcp_timeout_s``).

Secrets: an ``env`` or ``headers`` value written as :data:`KEYRING_MARK` is
kept in the keyring (``parley.core.keys``) under :func:`secret_id`, not in the file;
Settings puts values there when a server is saved (:func:`is_secret_name`).

Every problem with the file is a :class:`McpConfigError` naming the file, the
server and what is wrong.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from parley.core.errors import ParleyError

FILE_NAME = "mcp.json"
#: An env or header value kept in the keyring instead of the file.
KEYRING_MARK = "<in keyring>"
#: Server names: what the file may use (they also name the tools: ``parley.core.mcp.names``).
_NAME_RE = re.compile(r"^[A-Za-z0-9 _.-]{1,40}$")
_SECRET_RE = re.compile(r"key|token|secret|passw|auth|credential|cookie", re.IGNORECASE)
_KNOWN_KEYS = frozenset({"command", "args", "env", "cwd", "url", "headers", "alwaysAllow",
                         "disabledTools", "timeout", "type", "transport", "disabled"})


class McpConfigError(ParleyError):
    """``mcp.json`` (or a server's entry in it) cannot be used.

    Attributes:
        path: the file.
        server: the server's name, or None for the file as a whole.
        problem: what is wrong, alone (for a form that names the server itself).
    """

    def __init__(self, path: Path | str, problem: str, server: str | None = None,
                 advice: str = "") -> None:
        where = f"the server “{server}” in {path}" if server else str(path)
        advice = advice or ("Fix the file, then choose Refresh memory, skills and tools "
                            "(or open Settings → Tools) to read it again, no restart needed; "
                            "MCP servers stay off until then.")
        super().__init__(f"MCP configuration problem in {where}: {problem}. {advice}")
        self.path = Path(path)
        self.server = server
        self.problem = problem


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server as configured.

    Attributes:
        name: its key in ``mcpServers`` (shown to people, part of its tools' names).
        command: the program to start (stdio servers), else None.
        args: the program's arguments.
        env: extra environment variables (values may be :data:`KEYRING_MARK`).
        cwd: the folder the program starts in (None: Parley's own).
        url: the Streamable HTTP endpoint (HTTP servers), else None.
        headers: HTTP headers sent with every request (values may be :data:`KEYRING_MARK`).
        always_allow: tools that run without asking.
        disabled_tools: tools not offered to the model.
        timeout_s: seconds a call may take, or None for the setting.
        extra: keys of the entry Parley does not use, kept when the file is rewritten.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    always_allow: tuple[str, ...] = ()
    disabled_tools: tuple[str, ...] = ()
    timeout_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command else "http"

    def launch(self) -> tuple[Any, ...]:
        """What starting or reaching the server depends on: a change here needs a restart
        (``alwaysAllow``, ``disabledTools`` and ``timeout`` do not)."""
        return (self.command, self.args, tuple(self.env.items()), self.cwd, self.url,
                tuple(self.headers.items()))

    def describe(self) -> str:
        """One line for people: the command line (quoted as a POSIX shell would need it,
        so an argument holding a space reads as one) or the URL; never the environment."""
        if self.command:
            return shlex.join([self.command, *self.args])
        return self.url or ""

    def to_json(self) -> dict[str, Any]:
        """The entry as written in ``mcpServers`` (Claude desktop's keys first)."""
        out: dict[str, Any] = {}
        if self.command:
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd:
                out["cwd"] = self.cwd
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        if self.always_allow:
            out["alwaysAllow"] = list(self.always_allow)
        if self.disabled_tools:
            out["disabledTools"] = list(self.disabled_tools)
        if self.timeout_s is not None:
            out["timeout"] = self.timeout_s
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


def _strings(path: Path, server: str, key: str, value: Any, *, listed: bool) -> Any:
    if listed:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise McpConfigError(path, f"“{key}” must be a list of strings", server)
        return tuple(value)
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise McpConfigError(path, f"“{key}” must be an object of text values "
                                   '(like {"NAME": "value"})', server)
    return dict(value)


def parse_server(path: Path, name: str, entry: Any) -> ServerConfig:
    """Read one ``mcpServers`` entry.

    Args:
        path: the file (named in errors).
        name: the entry's key.
        entry: its JSON value.

    Raises:
        McpConfigError: the name or the entry is not usable (the message says how).
    """
    if not _NAME_RE.match(name):
        raise McpConfigError(path, "a server name may use letters, digits, spaces, “_”, “.” "
                                   "and “-”, at most 40 characters", name)
    if not isinstance(entry, dict):
        raise McpConfigError(path, "the entry must be an object with a “command” or a “url”",
                             name)
    command, url = entry.get("command"), entry.get("url")
    if command is not None and url is not None:
        raise McpConfigError(path, "it has both a “command” and a “url”; keep one", name)
    if command is None and url is None:
        raise McpConfigError(path, "it has neither a “command” (a program to start) nor a "
                                   "“url” (an HTTP server)", name)
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise McpConfigError(path, "“command” must be the program to start, as text", name)
    if url is not None and (not isinstance(url, str)
                            or not re.match(r"^https?://[^\s/]+", url)):
        raise McpConfigError(path, f"“url” must start with http:// or https://, not {url!r}",
                             name)
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise McpConfigError(path, "“cwd” must be a folder, as text", name)
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 1 <= timeout <= 3600):
        raise McpConfigError(path, "“timeout” must be a number of seconds from 1 to 3600", name)
    return ServerConfig(
        name=name,
        command=command.strip() if command else None,
        args=_strings(path, name, "args", entry.get("args", []), listed=True),
        env=_strings(path, name, "env", entry.get("env", {}), listed=False),
        cwd=cwd or None,
        url=url,
        headers=_strings(path, name, "headers", entry.get("headers", {}), listed=False),
        always_allow=_strings(path, name, "alwaysAllow", entry.get("alwaysAllow", []),
                              listed=True),
        disabled_tools=_strings(path, name, "disabledTools", entry.get("disabledTools", []),
                                listed=True),
        timeout_s=float(timeout) if timeout is not None else None,
        extra={k: v for k, v in entry.items() if k not in _KNOWN_KEYS},
    )


def parse_config(path: Path, text: str) -> dict[str, ServerConfig]:
    """Read the text of an ``mcp.json`` (or of Claude desktop's config).

    Returns:
        ``{name: ServerConfig}`` in the file's order.

    Raises:
        McpConfigError: not JSON, not the ``mcpServers`` shape, or a bad entry.
    """
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise McpConfigError(path, f"it is not valid JSON (line {exc.lineno}, column "
                                   f"{exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise McpConfigError(path, 'the file must hold an object like {"mcpServers": {…}}')
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(path, "“mcpServers” must be an object of servers by name")
    return {name: parse_server(path, name, entry) for name, entry in servers.items()}


def config_path(data_dir: Path) -> Path:
    """Where ``mcp.json`` lives: in Parley's data folder."""
    return Path(data_dir) / FILE_NAME


def load(path: Path) -> dict[str, ServerConfig]:
    """Read ``mcp.json``; a missing file means no servers.

    Raises:
        McpConfigError: the file cannot be read or is not usable.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise McpConfigError(path, f"it cannot be read ({exc})") from None
    return parse_config(path, text)


def save(path: Path, servers: Mapping[str, ServerConfig]) -> None:
    """Write ``mcp.json`` (atomically: a crash leaves the old or the new file).

    Other top-level keys of an existing file are kept.

    Raises:
        McpConfigError: the file could not be written.
    """
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        data = old if isinstance(old, dict) else {}
    except (OSError, ValueError):
        data = {}
    data["mcpServers"] = {name: s.to_json() for name, s in servers.items()}
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise McpConfigError(path, f"it could not be written ({exc})",
                             advice="Your change was not saved; check the folder's "
                                    "permissions and free space.") from None


def with_tool_allowed(server: ServerConfig, tool: str) -> ServerConfig:
    """The server with ``tool`` added to ``alwaysAllow``."""
    if tool in server.always_allow:
        return server
    return replace(server, always_allow=(*server.always_allow, tool))


def with_tool_enabled(server: ServerConfig, tool: str, on: bool) -> ServerConfig:
    """The server with ``tool`` offered to the model (``on``) or not."""
    rest = tuple(t for t in server.disabled_tools if t != tool)
    return replace(server, disabled_tools=rest if on else (*rest, tool))


# --- secrets ------------------------------------------------------------------------


def is_secret_name(name: str) -> bool:
    """True for an env variable or header whose value should go to the keyring
    (``API_KEY``, ``GITHUB_TOKEN``, ``Authorization``, ``X-Secret`` …)."""
    return bool(_SECRET_RE.search(name))


def secret_id(server: str, where: str, name: str) -> str:
    """The keyring entry of one secret: ``mcp:<server>:<env|headers>:<name>``."""
    return f"mcp:{server}:{where}:{name}"


# --- Claude desktop --------------------------------------------------------------------


def claude_desktop_path(platform: str = sys.platform,
                        environ: Mapping[str, str] | None = None,
                        home: Path | None = None) -> Path:
    """Where Claude desktop keeps its configuration on this platform.

    Linux ``~/.config/Claude``, macOS ``~/Library/Application Support/Claude``,
    Windows ``%APPDATA%\\Claude``; the file is ``claude_desktop_config.json``.
    """
    env = os.environ if environ is None else environ
    home = home or Path.home()
    if platform == "darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif platform.startswith("win"):
        folder = Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        folder = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def import_claude_desktop(source: Path, current: Mapping[str, ServerConfig]
                          ) -> tuple[dict[str, ServerConfig], list[str]]:
    """Merge Claude desktop's servers into ``current``.

    A server whose name is already configured is left as it is (not overwritten).

    Returns:
        The merged servers, and the names added.

    Raises:
        McpConfigError: the file does not exist, cannot be read or is not usable.
    """
    if not source.exists():
        raise McpConfigError(source, "Claude desktop's configuration is not there",
                             advice="Is Claude desktop installed and set up for this user? "
                                    "Nothing was imported.")
    found = load(source)
    merged = dict(current)
    added = [name for name in found if name not in merged]
    for name in added:
        merged[name] = found[name]
    return merged, added
