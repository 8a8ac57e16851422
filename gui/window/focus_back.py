"""The window takes the keyboard back when one of its dialogs closes.

When a dialog (a question at quit, Settings, a message box) closes, the window
system should make its parent window active again. Without a window manager,
and with some, nothing does: no window of Parley is active, so keys typed next
reach nothing and the window's shortcuts (Ctrl+Q, Ctrl+N …: Qt runs them only
in the active window) do nothing until the window is clicked. A second Ctrl+Q
then seemed needed to quit after a question about unsaved text.

:class:`FocusBack` watches the window's dialogs (and theirs): when one closes and
no window has the focus, the window it belongs to is activated again. A switch
to another application (the focus is elsewhere, not nowhere) is left alone.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QWidget


class FocusBack(QObject):
    """Activates a window of Parley again when a dialog of its closes and leaves no
    window active (module doc). Watches ``window``'s dialogs and theirs."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        kind = event.type()
        if kind == QEvent.Type.ChildPolished:  # (at ChildAdded it is not a QDialog yet)
            child = event.child()  # type: ignore[attr-defined]
            if isinstance(child, QDialog):
                child.installEventFilter(self)
        elif kind == QEvent.Type.Hide and isinstance(obj, QDialog):
            parent = obj.parentWidget()
            if parent is not None:
                owner = parent.window()
                QTimer.singleShot(0, owner, lambda: self._take_back(owner))
        return False

    @staticmethod
    def _take_back(owner: QWidget) -> None:
        if QGuiApplication.focusWindow() is None and owner.isVisible():
            owner.activateWindow()
