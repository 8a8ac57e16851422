"""Parley as an MCP client: tools from Model Context Protocol servers, on the ``mcp`` SDK.

* :mod:`core.mcp.config` — ``mcp.json`` (Claude desktop's ``mcpServers`` shape),
  its errors, secrets in the keyring, importing Claude desktop's servers;
* :mod:`core.mcp.client` — one server's connection and status;
* :mod:`core.mcp.host` — every server, on an event loop of their own;
* :mod:`core.mcp.names` — the tools' names and schemas on the wire;
* :mod:`core.mcp.results` — a tool's result as a tool_result block;
* :mod:`core.mcp.tools` — what a chat is offered, approval, running a call.
"""

from core.mcp.client import ServerFailed, ServerStatus, ToolInfo
from core.mcp.config import McpConfigError, ServerConfig
from core.mcp.host import McpHost
from core.mcp.tools import ApprovalRequest, Approver, Decision, McpTools

__all__ = [
    "ApprovalRequest",
    "Approver",
    "Decision",
    "McpConfigError",
    "McpHost",
    "McpTools",
    "ServerConfig",
    "ServerFailed",
    "ServerStatus",
    "ToolInfo",
]
