"""A command key pressed before the window is whole: the rest of the window is made first.

Start-up makes the window's costly parts (the sidebar, the header's tools, the commands
and their shortcuts) right after the first paint (``Startup.build_later``). A command key
pressed in the message box before then would find no shortcut: :class:`CommandKeyFirst`
makes the rest of the window at once, before Qt looks the key up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget


class CommandKeyFirst(QObject):
    """Until the window is whole: a command key (Ctrl/Alt/Meta + key, F1–F35) pressed in
    the message box makes the rest of it first (``finish_build``), so its shortcut runs
    (Qt looks the key up after this event). Removes itself after the first such key.

    Args:
        composer: the message box (the filter's parent: it lives as long).
        finish_build: makes what is left of the window (``Startup.finish_build``).
    """

    def __init__(self, composer: QWidget, finish_build: Callable[[], None]) -> None:
        super().__init__(composer)
        self.finish_build = finish_build
        composer.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
                | Qt.KeyboardModifier.MetaModifier
            if event.modifiers() & command or Qt.Key.Key_F1 <= event.key() <= Qt.Key.Key_F35:
                obj.removeEventFilter(self)
                self.finish_build()
        return False
