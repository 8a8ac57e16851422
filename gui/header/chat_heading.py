"""The header's heading: the open chat's title and its space, renamed in place.

The title is a flat button (elided when long) followed by the space's name in
the muted colour (elided too: ``parley.gui.text.names``; both whole in their
tooltips). A click on the title, or F2 (``session.rename``) while the
focus is not in the chat list, puts a line edit in its place: Enter saves the
new title (as the user's: an automatic title never replaces it), Esc or
leaving the field with nothing changed cancels. A new chat (not sent yet)
shows "New chat" and cannot be renamed. Until a chat is shown (:meth:`ChatHeading.set_chat`;
while Parley starts) the heading is empty: the last chat is not read yet.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QToolButton,
    QWidget,
)

from parley.core.visible import strip_invisible
from parley.gui.look import appearance
from parley.gui.text.names import NAME_MAX_PX, elided, elided_title, name_tip

#: Widest the title may be before it is elided (px); narrower when the header is.
TITLE_MAX_PX = 420
#: The least the heading needs (px): a long title never widens the window.
MIN_WIDTH = 0
#: Below this much room for the title (px), the space's name and the documents' line
#: give theirs (they stay in the tooltip of the chat in the sidebar): a narrow window
#: showed "· General" and no title at all (trial 16).
TITLE_MIN_PX = 96
NEW_CHAT = "New chat"


class ChatHeading(QWidget):
    """Signals: ``renamed(str)`` when Enter saves a new, non-empty title."""

    renamed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatHeading")
        self._title = ""  # no chat shown yet (starting): set_chat
        self._editable = False
        self._ending = False
        self._space_wanted = self._docs_wanted = False  # shown when there is room
        self.button = QToolButton(self)
        self.button.setObjectName("ChatTitle")
        self.button.setAutoRaise(True)
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.setAccessibleName("Chat title")
        self.button.setMinimumWidth(1)  # elided to the room it gets (resizeEvent)
        bold = QFont(self.button.font())
        bold.setWeight(QFont.Weight.DemiBold)  # set here, not in the style sheet: measured
        self.button.setFont(bold)
        self.button.clicked.connect(self.begin_edit)
        self.editor = QLineEdit(self)
        self.editor.setObjectName("ChatTitleEditor")
        self.editor.setAccessibleName("Chat title")
        self.editor.setPlaceholderText("Chat title")
        self.editor.installEventFilter(self)
        self.editor.returnPressed.connect(self.commit)
        self.editor.editingFinished.connect(self._left)
        self.editor.hide()  # shown in the button's place while renaming
        self.space = QLabel(self)
        self.space.setObjectName("ChatSpace")
        self.space.setTextFormat(Qt.TextFormat.PlainText)
        self.space.setMinimumWidth(1)  # cut in a very narrow window rather than widen it
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addStretch(1)  # centred in the room the header gives it
        row.addWidget(self.button)
        row.addWidget(self.editor)
        row.addWidget(self.space)
        # The space documents the chat was given (set_documents): "· 2 documents".
        self.documents = QLabel(self)
        self.documents.setObjectName("ChatDocuments")
        self.documents.setAccessibleName("Space documents of this chat")
        self.documents.setVisible(False)
        row.addWidget(self.documents)
        row.addStretch(1)
        # The header gives the heading the room the model picker and the meter leave (its
        # size hint ignored there): the title is cut first, the model's name stays whole.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.restyle()
        self._show_title()

    def restyle(self) -> None:
        """Colours of the current scheme (call after the theme changed)."""
        t = appearance.current()
        # Its own sheet overrides the app's focus ring (parley.qss), so it draws one: Tab
        # from the message box stops here and Space renames (trial 17: no mark at all).
        self.button.setStyleSheet(f"QToolButton {{ color: {t.text};"
                                  f" border: none; padding: 2px 6px; border-radius: 6px; }}"
                                  f"QToolButton:hover {{ background: {t.hover}; }}"
                                  f"QToolButton:focus {{ border: 2px solid {t.accent};"
                                  f" padding: 0px 4px; }}")
        self.space.setStyleSheet(f"color: {t.muted};")
        self.documents.setStyleSheet(f"color: {t.muted};")

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()
        super().changeEvent(event)

    # -- what it shows ---------------------------------------------------------
    @property
    def title(self) -> str:
        """The title shown (``"New chat"`` for a chat not sent yet; "" before any chat
        is shown)."""
        return self._title

    @property
    def editing(self) -> bool:
        """True while the line edit is shown."""
        return not self.editor.isHidden()

    def set_chat(self, title: str | None, space: str | None, *, editable: bool) -> None:
        """Show a chat's title and space name.

        Args:
            title: the chat's title (None or empty: "New chat").
            space: the space's name ('' or None: no space shown).
            editable: False for a new chat, which has nothing to rename yet.
        """
        self._title = title or NEW_CHAT
        self._editable = editable
        label = f"· {space}" if space else ""
        shown = elided(label, self.space.fontMetrics(), NAME_MAX_PX, Qt.TextElideMode.ElideRight)
        self.space.setText(shown)
        self.space.setToolTip(name_tip(space or "", shown[2:], "The chat's space"))
        self._space_wanted = bool(space)
        self.space.setVisible(bool(space))
        if self.editing and not editable:
            self.cancel()
        self._show_title()

    def set_documents(self, text: str, tip: str) -> None:
        """Show which space documents the chat was given ('' hides the line)."""
        self.documents.setText(f"· {text}" if text else "")
        self.documents.setToolTip(tip)
        self._docs_wanted = bool(text)
        self.documents.setVisible(bool(text))
        self._show_title()  # the title makes room (and asks for more)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(MIN_WIDTH, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Room for the whole title (up to :data:`TITLE_MAX_PX`) and the space's name,
        whatever is shown now (the shown text is elided to the width given)."""
        title = QFontMetrics(self.button.font()).horizontalAdvance(self._title)
        space = self._side_width()
        return QSize(min(TITLE_MAX_PX, title + 4) + 20 + space, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._show_title()

    def _room(self, side: int) -> int:
        """Width the title may take (px): the heading's, less ``side`` (the space's name)."""
        if not self.isVisible():
            return TITLE_MAX_PX
        chrome = (self.button.sizeHint().width()
                  - QFontMetrics(self.button.font()).horizontalAdvance(self.button.text()))
        return max(12, min(TITLE_MAX_PX, self.width() - side - max(20, chrome)))

    def _sides(self) -> list[QLabel]:
        """What follows the title when there is room: the space's name, the documents."""
        return [label for label, wanted in ((self.space, self._space_wanted),
                                            (self.documents, self._docs_wanted)) if wanted]

    def _side_width(self) -> int:
        """Width of what follows the title: the space's name and the documents' line (px)."""
        return sum(label.sizeHint().width() + 6 for label in self._sides())

    def side_width(self) -> int:
        """Width (px) the space's name and the documents' line want beside the title (the
        header keeps room for them before the context meter's words)."""
        return self._side_width()

    def _show_title(self) -> None:
        metrics = QFontMetrics(self.button.font())
        # No U+202E turning it around; no chat shown yet (starting): nothing, never a
        # "New chat" the last chat is not (trial 21).
        title = strip_invisible(self._title) or (NEW_CHAT if self._title else "")
        need = min(metrics.horizontalAdvance(title) + 2, TITLE_MIN_PX)
        # the space's name goes first (the sidebar shows it too), then the documents' line
        sides = sorted(self._sides(), key=lambda label: label is self.space)
        kept = len(sides)
        while kept and self._room(sum(s.sizeHint().width() + 6 for s in sides[:kept])) < need:
            kept -= 1
        for i, label in enumerate(sides):
            if label.isHidden() == (i < kept):
                label.setVisible(i < kept)
        room = self._room(sum(s.sizeHint().width() + 6 for s in sides[:kept]))
        shown = elided_title(title, metrics, room)
        self.button.setText(shown.replace("&", "&&"))
        self.button.setToolTip(f"{title} — click or press F2 to rename"
                               if self._editable else title)
        self.button.setEnabled(self._editable)
        self.updateGeometry()  # a longer title asks for more room (then resizeEvent)

    # -- renaming ---------------------------------------------------------------
    def begin_edit(self) -> bool:
        """Put a line edit with the title (selected) in its place; False for a new chat."""
        if not self._editable:
            return False
        self.editor.setText(self._title)
        self.editor.setMinimumWidth(min(TITLE_MAX_PX, max(
            200, QFontMetrics(self.editor.font()).horizontalAdvance(self._title) + 40)))
        self.button.hide()
        self.editor.show()
        self.editor.selectAll()
        self.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True

    def commit(self) -> None:
        """Enter: save the typed title (unchanged or empty: nothing happens)."""
        if not self.editing:
            return
        text = " ".join(self.editor.text().split())
        self._end()
        if text and text != self._title:
            self._title = text
            self._show_title()
            self.renamed.emit(text)

    def cancel(self) -> None:
        """Esc: leave the title as it was."""
        if self.editing:
            self.editor.setText(self._title)  # the focus leaving must not save what was typed
            self._end()

    def _left(self) -> None:
        """The field lost the focus (a click elsewhere): keep what was typed, as Enter."""
        if self.editing and not self._ending and not self.editor.hasFocus():
            self.commit()

    def _end(self) -> None:
        had_focus = self.editor.hasFocus()
        self._ending = True
        try:
            self.editor.hide()
            self.button.show()
        finally:
            self._ending = False
        if had_focus:
            composer = getattr(self.window(), "composer", None)  # the main window's
            if isinstance(composer, QWidget):
                composer.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if obj is self.editor and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() == Qt.Key.Key_Escape:
                self.cancel()
                return True
        return super().eventFilter(obj, event)
