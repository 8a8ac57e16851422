"""The sidebar: spaces, each holding its sessions (pinned first, newest first)."""

from parley.gui.sidebar.model import SessionTreeModel
from parley.gui.sidebar.view import Sidebar

__all__ = ["SessionTreeModel", "Sidebar"]
