"""The row of buttons over a message: copy, edit, regenerate, fork, continue, branches.

:class:`MessageActions` floats over the bottom-right corner of one message of
the transcript: the one under the pointer, or — while the messages (or these
buttons) have the keyboard focus — the focused one. Each button does what the
message's key does (``TranscriptView.message_action``), and its tooltip names
that key as the keymap has it now. Only the buttons that apply show: Edit on
a message the person wrote, Regenerate under the last reply, Continue under a
stopped or cut-off last reply, ‹ › on a message with siblings; on the note of turns
the model no longer sees, only "Try compacting again".

Keyboard: Tab on the focused message moves into the buttons, Tab / Shift+Tab
and Left / Right move between them, Esc goes back to the message, and Tab on
the last button leaves the transcript as Tab would. Icons are the app's SVGs
(``resources/icons``), drawn in the text colour: no font is needed for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QCursor, QKeyEvent
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QToolButton, QToolTip, QWidget

from parley.gui.commands.keymap import keymap_for
from parley.gui.look.appearance import icon
from parley.gui.transcript.layout import beside_bubble, button_corners, covers
from parley.gui.transcript.specs import ACTIONS_INSET, COMPACT_AGAIN

if TYPE_CHECKING:
    from parley.gui.transcript.message_view import MessageView
    from parley.gui.transcript.rows import Node

#: (name for ``message_action``, icon, label, keymap action id or None)
BUTTONS: tuple[tuple[str, str, str, str | None], ...] = (
    ("version_previous", "chevron-left", "Previous branch", "message.version_previous"),
    ("version_next", "chevron-right", "Next branch", "message.version_next"),
    ("copy", "copy", "Copy message", "message.copy"),
    ("edit", "edit", "Edit message", "message.edit"),
    ("regenerate", "regenerate", "Regenerate", "message.regenerate"),
    ("continue", "continue", "Continue reply", "message.retry"),
    ("fork", "fork", "Fork from here", "message.fork"),
    ("compact", "summary", COMPACT_AGAIN, "message.retry"),
)
INSET = ACTIONS_INSET  # px between the buttons and the message's right and bottom edges
ICON_PX = 16


class MessageActions(QFrame):
    """Buttons over the hovered or focused message of ``view`` (module doc).

    Attributes:
        row: the row the buttons act on (None while hidden).
        buttons: ``{name: button}`` in :data:`BUTTONS` order.
    """

    def __init__(self, view: MessageView) -> None:
        lv = view.list_view
        super().__init__(lv.viewport())
        self.view = view
        self.row: int | None = None
        self._hover: QPoint | None = None
        self._keys_last = False  # the keyboard was used on the messages after the pointer
        self.setObjectName("MessageActions")
        self.setAccessibleName("Message actions")
        self.setAutoFillBackground(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        box = QHBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.setSpacing(0)
        self.buttons: dict[str, QToolButton] = {}
        for name, icon_name, label, _action in BUTTONS:
            button = QToolButton(self)
            button.setObjectName(f"MessageAction-{name}")
            button.setAutoRaise(True)
            button.setAccessibleName(label)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setProperty("icon_name", icon_name)
            button.clicked.connect(lambda _c=False, n=name: self.trigger(n))
            button.installEventFilter(self)
            box.addWidget(button)
            self.buttons[name] = button
        self._restyle()
        self.hide()
        self._later = QTimer(self, singleShot=True, interval=0)
        self._later.timeout.connect(self.sync)
        lv.viewport().installEventFilter(self)
        lv.installEventFilter(self)
        lv.verticalScrollBar().valueChanged.connect(self._soon)
        lv.selectionModel().currentChanged.connect(self._soon)
        for signal in (view.model.modelReset, view.model.rowsInserted, view.model.rowsRemoved,
                       view.model.dataChanged):
            signal.connect(self._soon)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._soon)

    # -- which message --------------------------------------------------------
    def _soon(self, *_args: object) -> None:
        self._later.start()

    def focused(self) -> bool:
        """True while the messages or these buttons have the keyboard focus."""
        focus = QApplication.focusWidget()
        return focus is not None and (focus is self.view.list_view or self.isAncestorOf(focus))

    def _target(self) -> int | None:
        """The buttons' own focus keeps their row; then the focused message while the
        keyboard was used last (or the pointer is not over the messages); then the
        message under the pointer."""
        lv = self.view.list_view
        focus = QApplication.focusWidget()
        if focus is not None and self.isAncestorOf(focus) and self.row is not None:
            return self.row
        current = lv.currentIndex().row()
        keyboard = self.focused() and current >= 0
        if keyboard and (self._keys_last or self._hover is None):
            return current
        if self._hover is not None:
            row = lv.indexAt(self._hover).row()
            return row if row >= 0 else None
        return current if keyboard else None

    def sync(self) -> None:
        """Show the buttons that apply to the hovered / focused message, at its corner."""
        row = self._target()
        rows = self.view.model.rows
        if row is None or not 0 <= row < len(rows):
            self.row = None
            focus = QApplication.focusWidget()
            if focus is None or not self.isAncestorOf(focus):
                self.hide()
            return
        self.row = row
        node = rows[row]
        shown = {name: self._applies(name, row, node) for name in self.buttons}
        keymap = keymap_for(self)  # the same window as the view
        for (name, _icon, label, action), button in zip(BUTTONS, self.buttons.values(),
                                                          strict=True):
            button.setVisible(shown[name] is not None)
            button.setEnabled(bool(shown[name]))
            keys = keymap.shown(action) if action else ""
            button.setToolTip(f"{label} ({keys})" if keys else label)
        self.adjustSize()
        self._place(row)

    def _applies(self, name: str, row: int, node: Node) -> bool | None:
        """True: the button shows and works; False: shows disabled; None: hidden."""
        view = self.view
        if node.kind == "unseen" or name == "compact":  # the note's one button
            return True if node.kind == "unseen" and name == "compact" else None
        if name in ("version_previous", "version_next"):
            shown = view.branch_of(node.key) if node.kind == "turn" else None
            if shown is None:
                return None
            return shown[0] > 1 if name == "version_previous" else shown[0] < shown[1]
        if name == "edit":
            return True if view.editable(node) else None
        if name == "regenerate":
            ok = (node.turn.role == "assistant" and view.model.is_last(row)
                  and view.can_regenerate())
            return True if ok else None
        if name == "continue":
            return True if view.retry_kind(row) == "resume" or view.continuable(row) else None
        return True

    def _place(self, row: int) -> None:
        """Inside the message's column at its bottom-right, or at its top-right when the
        bottom-right would cover what the message shows there (a tool's output, a code
        block, the end of a line) and the top-right would not; beside a user's bubble (on
        its left, level with its bottom) where there is room. Where both corners hold
        text, the row keeps a strip under it for them (``layout.keep_room_for_buttons``):
        the bottom-right is clear."""
        lv = self.view.list_view
        rect = lv.visualRect(lv.model().index(row, 0))
        area = lv.viewport().rect()
        layout = lv.layout_of(row)
        size = self.size()
        bottom, top = button_corners(layout, size)
        spot = bottom if not covers(layout, bottom) or covers(layout, top) else top
        spot = beside_bubble(layout, size) or spot
        spot.translate(rect.topLeft())
        x = max(0, spot.x())
        y = max(area.top(), rect.top(), min(spot.y(), area.bottom() - self.height()))
        self.move(x, y)
        self.show()
        self.raise_()

    # -- acting -----------------------------------------------------------------
    def trigger(self, name: str) -> bool:
        """Do what button ``name`` does on :attr:`row`; False when it does not apply."""
        row = self.row
        if row is None:
            return False
        if name == "continue":
            name = "retry" if self.view.retry_kind(row) == "resume" else "continue"
        focus = QApplication.focusWidget()
        if focus is None or not self.isAncestorOf(focus):
            # Clicked (the buttons take the focus only by Tab): typing goes on in the
            # message box, as after a click on a link of a message.
            self.view.list_view.hand_focus_back()
        done = self.view.message_action(name, row)
        if done and name == "copy":
            QToolTip.showText(QCursor.pos(), "Copied", self)
        return done

    # -- events -------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        lv = self.view.list_view
        kind = event.type()
        if obj is lv.viewport():
            if kind == QEvent.Type.MouseMove:
                self._hover = event.position().toPoint()  # type: ignore[attr-defined]
                self._keys_last = False  # the pointer was used last
                self._soon()
            elif kind == QEvent.Type.Leave:
                self._hover = None
                self._soon()
            elif kind == QEvent.Type.Resize:
                self._soon()
        elif obj is lv and kind == QEvent.Type.FocusIn:
            if event.reason() != Qt.FocusReason.MouseFocusReason:  # type: ignore[attr-defined]
                self._keys_last = True
        elif isinstance(event, QKeyEvent) and kind == QEvent.Type.KeyPress:
            if obj is lv:
                self._keys_last = True
                return self._key_on_messages(event)
            if isinstance(obj, QToolButton):
                return self._key_on_button(obj, event)
        return False

    def _live(self) -> list[QToolButton]:
        return [b for b in self.buttons.values() if not b.isHidden() and b.isEnabled()]

    def _key_on_messages(self, event: QKeyEvent) -> bool:
        if event.key() != Qt.Key.Key_Tab or event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        self.sync()
        live = self._live() if self.row is not None else []
        if not live:
            return False
        live[0].setFocus(Qt.FocusReason.TabFocusReason)
        return True

    def _key_on_button(self, button: QToolButton, event: QKeyEvent) -> bool:
        live = self._live()
        if button not in live:
            return False
        i = live.index(button)
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.view.list_view.setFocus(Qt.FocusReason.OtherFocusReason)
            return True
        if key in (Qt.Key.Key_Backtab, Qt.Key.Key_Left) or (
                key == Qt.Key.Key_Tab and event.modifiers() & Qt.KeyboardModifier.ShiftModifier):
            target: QWidget = live[i - 1] if i > 0 else self.view.list_view
            target.setFocus(Qt.FocusReason.BacktabFocusReason)
            return True
        if key in (Qt.Key.Key_Tab, Qt.Key.Key_Right):
            if i + 1 < len(live):
                live[i + 1].setFocus(Qt.FocusReason.TabFocusReason)
            elif key == Qt.Key.Key_Tab:
                self._leave()
            return True
        return False

    def _leave(self) -> None:
        """Tab on the last button: on to the next part of the window after the messages."""
        lv = self.view.list_view
        widget = lv.nextInFocusChain()
        while widget is not None and widget is not lv:
            inside = widget is self.view or self.view.isAncestorOf(widget)
            if not inside and widget.isVisible() and widget.isEnabled() and \
                    widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
                widget.setFocus(Qt.FocusReason.TabFocusReason)
                return
            widget = widget.nextInFocusChain()
        lv.setFocus(Qt.FocusReason.TabFocusReason)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()
        super().changeEvent(event)

    def _restyle(self) -> None:
        color = self.palette().windowText().color().name()
        for button in self.buttons.values():
            button.setIcon(icon(str(button.property("icon_name")), color, ICON_PX))
