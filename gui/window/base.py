"""The window as its start-up part sees it: its state, its parts and its Qt methods.

``MainWindow`` derives from :class:`WindowBase`; ``parley.gui.startup.phases.Startup`` is
given the window typed as it: the window's state
(:class:`parley.gui.window.state.WindowState`, declared there once), its parts, and the
window's methods start-up calls (the window is also the parent of what start-up makes:
the chat, the pages of a damaged or missing file). At run time it is
:class:`WindowState`; for the type checker also a ``QMainWindow``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from parley.core.errors import ParleyError
    from parley.gui.commands.window_commands import WindowCommands
    from parley.gui.window.layout import WindowLayout
    from parley.gui.window.pages import WindowPages
    from parley.gui.window.problems import WindowProblems
    from parley.gui.window.shutdown import WindowShutdown

    class _Base(QMainWindow, WindowState):
        """The window's Qt methods and its state."""
else:
    _Base = WindowState


class WindowBase(_Base):
    """The window as start-up sees it (module doc)."""

    widgets: WindowLayout
    pages: WindowPages
    problems: WindowProblems
    quitting: WindowShutdown
    window_commands: WindowCommands

    if TYPE_CHECKING:  # the window's, start-up calls them
        def show_problem(self, error: ParleyError) -> None: ...
