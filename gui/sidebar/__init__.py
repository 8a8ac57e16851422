"""The sidebar: spaces, each holding its sessions (pinned first, newest first)."""

from gui.sidebar.model import SessionTreeModel
from gui.sidebar.view import Sidebar

__all__ = ["SessionTreeModel", "Sidebar"]
