"""What start-up and the layout, still mixins of ``MainWindow``, use of the window.

``parley.gui.startup.phases`` and ``parley.gui.window.layout`` derive from
:class:`WindowBase`: the window's state (:class:`parley.gui.window.state.WindowState`,
declared there once), its parts, and the methods they call on the window. At run time
it is :class:`WindowState`; for the type checker also a ``QMainWindow``. It goes once
start-up and the layout are parts of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from parley.core.errors import ParleyError
    from parley.gui.commands.window_commands import WindowCommands
    from parley.gui.window.pages import WindowPages
    from parley.gui.window.problems import WindowProblems
    from parley.gui.window.shutdown import WindowShutdown

    class _Base(QMainWindow, WindowState):
        """The window's Qt methods and its state."""
else:
    _Base = WindowState


class WindowBase(_Base):
    """The window as its mixins see it (module doc)."""

    pages: WindowPages
    problems: WindowProblems
    quitting: WindowShutdown
    window_commands: WindowCommands

    if TYPE_CHECKING:  # one part calls these in another
        def finish_build(self) -> None: ...
        def show_problem(self, error: ParleyError) -> None: ...
        def show_setup(self) -> None: ...
        def show_chat(self) -> None: ...
        def focus_composer_unless_moved(self) -> None: ...
        async def _save_geometry(self) -> None: ...
        async def _restore_geometry(self) -> None: ...
        def _install_transcript(self) -> None: ...
        def _sources_changed(self) -> None: ...
