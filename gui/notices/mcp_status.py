"""What the window says about MCP servers outside Settings: in its status bar.

* a server starting for a chat: "Starting the MCP server “files”…" (cleared when it
  is ready), "… (waiting for you to sign in in your browser)" while it asks for a sign-in;
* a server failing (at start, or mid-call): "The MCP server “files” failed: …  See
  Settings → Tools." for 15 s, quoting the last meaningful line the server wrote (a
  traceback's error), once per failure: the same failure when the server is started
  again (a new chat) is not said again until it changes or the server was ready — the
  model also gets the failure as the tool's error result;
* ``mcp.json`` not usable when the window opens: its message as the start-up notice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from parley.core.mcp.client import ServerStatus

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from parley.core.mcp.host import McpHost

FAILED_MS = 15_000
STARTING_MS = 30_000


def starting_text(name: str) -> str:
    return f"Starting the MCP server “{name}”…"


#: Lines of a Python traceback that say where, not what (skipped when quoting a server).
_NOISE = ("Traceback (most recent call last)", "During handling of the above exception",
          "The above exception was the direct cause", "File \"")
WROTE = "The server wrote: "


def _meaningful(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith(_NOISE) and set(text) - set("^~ ") != set() \
        and not line.startswith((" ", "\t"))


def failed_text(status: ServerStatus) -> str:
    """The status bar's line for a failed server: what failed and, when the server wrote
    something, its last meaningful line (a traceback's error, not its "Traceback" head),
    at most 160 characters."""
    what, _sep, wrote = status.error.partition(WROTE)
    first = what.splitlines()[0].strip() if what.strip() else ""
    if wrote:
        lines = [ln for ln in wrote.splitlines() if _meaningful(ln)]
        said = (lines[-1] if lines else wrote.splitlines()[0]).strip()
        first = f"{first} {WROTE}{said}" if first else said
    if len(first) > 160:
        first = first[:159] + "…"
    end = "" if first.endswith((".", "!", "?", "…")) else "."
    return f"The MCP server “{status.name}” failed: {first}{end} See Settings → Tools."


class NoticedWindow(Protocol):
    """What the MCP servers' status is told in: the window's status bar and its
    start-up notice (``parley.gui.window.state.WindowState.pending_notice``)."""

    pending_notice: str | None

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 (Qt's name)


def watch(window: NoticedWindow, host: McpHost) -> None:
    """Show ``host``'s status changes in ``window``'s status bar, and a bad ``mcp.json``
    as the window's start-up notice (``window.pending_notice``)."""
    if host.error is not None and not window.pending_notice:
        window.pending_notice = host.error.message

    told: dict[str, str] = {}  # server -> the failure last shown (said once until it changes)

    def changed(status: ServerStatus) -> None:
        bar = window.statusBar()
        if status.state == "starting":
            extra = f" ({status.error})" if status.error else ""
            bar.showMessage(starting_text(status.name) + extra, STARTING_MS)
        elif status.state == "failed":
            text = failed_text(status)
            if told.get(status.name) != text:
                told[status.name] = text
                bar.showMessage(text, FAILED_MS)
            elif bar.currentMessage().startswith(starting_text(status.name)):
                bar.clearMessage()
        else:
            if status.state == "ready":
                told.pop(status.name, None)  # a later failure is news again
            if bar.currentMessage().startswith(starting_text(status.name)):
                bar.clearMessage()

    host.on_change(changed)
