"""Parley as an MCP client: tools from Model Context Protocol servers, on the ``mcp`` SDK.

* :mod:`parley.core.mcp.config` — ``mcp.json`` (Claude desktop's ``mcpServers`` shape),
  its errors, secrets in the keyring, importing Claude desktop's servers;
* :mod:`parley.core.mcp.client` — one server's connection and status;
* :mod:`parley.core.mcp.host` — every server, on an event loop of their own;
* :mod:`parley.core.mcp.oauth` — signing in to a server that asks for it (OAuth);
* :mod:`parley.core.mcp.names` — the tools' names and schemas on the wire;
* :mod:`parley.core.mcp.results` — a tool's result as a tool_result block;
* :mod:`parley.core.mcp.tools` — what a chat is offered, approval, running a call.
"""

from parley.core.mcp.client import ServerFailed, ServerStatus, ToolInfo
from parley.core.mcp.config import McpConfigError, ServerConfig
from parley.core.mcp.host import McpHost
from parley.core.mcp.tools import ApprovalRequest, Approver, Decision, McpTools

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
