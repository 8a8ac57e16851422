"""The greeting of a new chat: where it is, which model answers, and a few keys.

A new chat is not a blank page: over the empty conversation, centred, it
says "New chat in <space>", "<model> answers", and a keyboard hint (find
anything), with the key the person's key map has. Send and new line are not
repeated here: the line under the message box says them.
It shows while the conversation has no row, so the first message sent makes
it go; it never takes the focus or a click. Not before the window said which chat it
shows (:meth:`Greeting.set_chat`): while Parley starts, the empty conversation is the
last chat not read yet, not a new one.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from parley.gui.look import appearance
from parley.gui.text.names import MENU_NAME_MAX_PX, elided

#: (action id, what its key does) of the hints, in order.
HINTS = (("palette.open", "finds chats, messages and commands"),)


class Greeting(QWidget):
    """Centred over ``view``'s viewport while ``model`` has no row.

    Args:
        view: the transcript's list view (the greeting floats over its viewport).
        model: the transcript model (rows inserted, removed, reset are followed).
        keys: ``keys(action_id)`` -> the key as shown ("Enter"); "" for none.
    """

    def __init__(self, view: QWidget, model: QObject, keys: Callable[[str], str]) -> None:
        viewport = getattr(view, "viewport", lambda: view)()
        super().__init__(viewport)
        self.setObjectName("Greeting")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._keys = keys
        self._model = model
        self._space = ""
        self._model_name = ""
        self._problem = ""
        self._pending = False  # the model is not known yet: no line about it
        self._told = False  # set_chat called: a chat is shown (not still starting)
        self.heading = QLabel(self)
        self.heading.setObjectName("GreetingHeading")
        self.line = QLabel(self)
        self.line.setObjectName("GreetingModel")
        self.hints = QLabel(self)
        self.hints.setObjectName("GreetingHints")
        for label in (self.heading, self.line, self.hints):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            label.setWordWrap(True)
        col = QVBoxLayout(self)
        col.setSpacing(6)
        col.addWidget(self.heading)
        col.addWidget(self.line)
        col.addSpacing(10)
        col.addWidget(self.hints)
        for signal in ("rowsInserted", "rowsRemoved", "modelReset", "layoutChanged"):
            getattr(model, signal).connect(self.refresh)
        viewport.installEventFilter(self)
        self.restyle()
        self.refresh()

    def restyle(self) -> None:
        t = appearance.current()
        size = self.font().pointSizeF()
        self.heading.setStyleSheet(f"color: {t.text}; font-size: {size * 1.5:.1f}pt;"
                                   " font-weight: 600;")
        self.line.setStyleSheet(f"color: {t.muted};")
        self.hints.setStyleSheet(f"color: {t.faint};")

    def set_chat(self, space: str | None, model_name: str | None,
                 problem: str | None = None, *, pending: bool = False) -> None:
        """Say which space the new chat is in and which model answers it (with no model:
        ``problem``, why there is none, e.g. a server that cannot be reached; ``pending``:
        not known yet, the providers are loading: no line about the model)."""
        self._space = space or ""
        self._model_name = model_name or ""
        self._problem = problem or ""
        self._pending = pending
        self._told = True
        self.refresh()

    def text(self) -> str:
        """What the greeting says, one line per label ('' when hidden)."""
        if self.isHidden():
            return ""
        return "\n".join(label.text() for label in (self.heading, self.line, self.hints))

    def refresh(self) -> None:
        """Show it (with current words) while the conversation is empty, else hide it."""
        empty = self._model.rowCount() == 0  # type: ignore[attr-defined]
        if not empty or not self._told:
            self.hide()
            return
        space = elided(self._space, self.heading.fontMetrics(), MENU_NAME_MAX_PX)
        model = elided(self._model_name, self.line.fontMetrics(), MENU_NAME_MAX_PX)
        self.heading.setText(f"New chat in {space}" if space else "New chat")
        self.line.setText(f"{model} answers" if model
                          else "" if self._pending
                          else self._problem or "Choose a model above to start")
        hints = [f"{key} {what}" for action, what in HINTS if (key := self._keys(action))]
        self.hints.setText("   ·   ".join(hints))
        self.place()
        self.show()

    def place(self) -> None:
        parent = self.parentWidget()
        if parent is None:
            return
        width = min(560, max(240, parent.width() - 48))
        self.setFixedWidth(width)
        self.adjustSize()
        self.move((parent.width() - width) // 2, max(12, (parent.height() - self.height()) // 3))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.place()
        return False

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self.restyle()
        super().changeEvent(event)
