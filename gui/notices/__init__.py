"""What the window tells in passing: the status bar (status_line), MCP servers starting or
failing (mcp_status), the countdown of a request sent again (retry_notice), and the toast
with Undo (undo)."""
