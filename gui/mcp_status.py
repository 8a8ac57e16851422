"""What the window says about MCP servers outside Settings: in its status bar.

* a server starting for a chat: "Starting the MCP server “files”…" (cleared when it
  is ready), "… (waiting for you to sign in in your browser)" while it asks for a sign-in;
* a server failing (at start, or mid-call): "The MCP server “files” failed: …  See
  Settings → Tools." for 15 s — the model also gets the failure as the tool's error
  result;
* ``mcp.json`` not usable when the window opens: its message as the start-up notice.
"""

from __future__ import annotations

from typing import Any

from parley.core.mcp.client import ServerStatus

FAILED_MS = 15_000
STARTING_MS = 30_000


def starting_text(name: str) -> str:
    return f"Starting the MCP server “{name}”…"


def failed_text(status: ServerStatus) -> str:
    first = (status.error.splitlines() or [""])[0]
    if len(first) > 160:
        first = first[:159] + "…"
    return f"The MCP server “{status.name}” failed: {first}. See Settings → Tools."


def watch(window: Any, host: Any) -> None:
    """Show ``host``'s status changes in ``window``'s status bar, and a bad ``mcp.json``
    as the window's start-up notice (``window.pending_notice``)."""
    if host.error is not None and not window.pending_notice:
        window.pending_notice = host.error.message

    def changed(status: ServerStatus) -> None:
        bar = window.statusBar()
        if status.state == "starting":
            extra = f" ({status.error})" if status.error else ""
            bar.showMessage(starting_text(status.name) + extra, STARTING_MS)
        elif status.state == "failed":
            bar.showMessage(failed_text(status), FAILED_MS)
        elif bar.currentMessage().startswith(starting_text(status.name)):
            bar.clearMessage()

    host.on_change(changed)
