"""The message box at the bottom of the window, with its Send/Stop button.

:class:`Composer` is the text editor itself (tests type into it). Its keys
(Enter sends, Shift+Enter adds a line, Esc stops, Up in an empty box edits
the last message) come from :func:`parley.gui.commands.actions.composer_keymap`; the
composer only reports which action a key means, through ``on_action``.
:class:`ComposerBar` frames it with the Send/Stop button, an Attach button,
the tray of files waiting to be sent (:mod:`parley.gui.composer.attach_tray`), a banner shown
while editing the last message, and a one-line hint.

Files come in by drag and drop (anywhere on the bar; :class:`DropTarget`
extends that to other widgets) and by paste: Ctrl+V with copied files pastes
them as attachments, with an image alone (a screenshot) pastes the image, and
with text pastes the text. The bar only reports them (``files_given``,
``image_given``); :class:`parley.gui.chat.attach.ChatAttachments` reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QMimeData, QObject, QSize, Qt, Signal
from PySide6.QtGui import (
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QImage,
    QKeyEvent,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.context.text_limits import max_text_chars
from parley.gui.look import appearance
from parley.gui.text.long_text import has_long_run

if TYPE_CHECKING:
    from parley.gui.commands.actions import Action
    from parley.gui.composer.attach_tray import AttachTray

MAX_LINES = 12
#: How the line under the box ends: what Esc does (``ComposerBar.escape_pauses``).
STOP_WORDS, PAUSE_WORDS = " to stop", " to pause the queue"


def local_files(mime: QMimeData | None) -> list[str]:
    """The local file paths a drag or a paste carries (URLs of other kinds are left out)."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


def pasted_image(mime: QMimeData | None) -> QImage | None:
    """The image a drag or a paste carries, when it carries no text and no files.

    Copying cells of a spreadsheet puts both their text and a picture of them
    on the clipboard: the text wins, as in other chat apps.
    """
    if mime is None or not mime.hasImage() or mime.hasText() or local_files(mime):
        return None
    image = mime.imageData()
    return image if isinstance(image, QImage) and not image.isNull() else None


def carries_files(mime: QMimeData | None) -> bool:
    """True when a drag or a paste would attach files (or an image) rather than type text."""
    return bool(local_files(mime)) or pasted_image(mime) is not None


class DropTarget(QObject):
    """Lets a widget take dropped files and images, and shows where they will land.

    Installed as an event filter on ``widget`` (which then accepts drops):
    a drag carrying local files or an image is accepted, ``highlight`` gets
    the ``dropping`` property while it hovers (the style sheet draws it),
    and the drop calls ``on_files(paths)`` or ``on_image(QImage)``. Drags of
    anything else are left to the widget.
    """

    def __init__(self, widget: QWidget, on_files: Callable[[list[str]], Any],
                 on_image: Callable[[QImage], Any], highlight: QWidget | None = None) -> None:
        super().__init__(widget)
        self.on_files, self.on_image = on_files, on_image
        self.highlight = highlight
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt name)
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDragMoveEvent)  # QDragEnterEvent derives from it
            if not carries_files(event.mimeData()):
                return False
            event.acceptProposedAction()
            self.show_hover(True)
            return True
        if kind == QEvent.Type.DragLeave:
            self.show_hover(False)
            return False
        if kind == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            self.show_hover(False)
            return self.take(event)
        return False

    def take(self, event: QDropEvent) -> bool:
        """Hand a drop's files or image over; False when it carries neither."""
        mime = event.mimeData()
        files, image = local_files(mime), pasted_image(mime)
        if not files and image is None:
            return False
        event.acceptProposedAction()
        if files:
            self.on_files(files)
        elif image is not None:
            self.on_image(image)
        return True

    def show_hover(self, on: bool) -> None:
        """Mark ``highlight`` as the place the files will land (or not any more)."""
        w = self.highlight
        if w is not None and bool(w.property("dropping")) != on:
            w.setProperty("dropping", on)
            w.style().unpolish(w)
            w.style().polish(w)


class Composer(QPlainTextEdit):
    """A plain-text editor that grows with its text (1 to ``MAX_LINES`` lines).

    Attributes:
        on_action: called with the :class:`Action` a key press means; when it
            returns False the key goes to the editor as usual.

    Signals:
        files_given(list): local file paths were dropped or pasted.
        image_given(QImage): an image (no text, no file) was dropped or pasted.
        text_refused(int): a paste was refused: the text would be longer than any
            model can read (``parley.core.context.text_limits``); its length in characters.
    """

    files_given = Signal(list)
    image_given = Signal(QImage)
    text_refused = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.on_action: Callable[[Action], Any] | None = None
        #: {portable key text: action}; the defaults are read at the first key (the
        #: command table is not needed for the first paint), the window sets the keys
        #: in force (``parley.gui.commands.install.apply_keymap``).
        self._keymap: dict[str, Action] | None = None
        self.setObjectName("Composer")
        self.setAccessibleName("Message")
        self.setAccessibleDescription("Type a message. Enter sends, Shift+Enter adds a line.")
        self.setPlaceholderText("Message Parley…")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTabChangesFocus(True)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        # Qt records the margin as an undoable edit: a fresh box had "something to undo",
        # so its first Ctrl+Z undid the margin instead of reaching the window's Undo.
        self.document().clearUndoRedoStacks()
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def text(self) -> str:
        """Return the text typed so far."""
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        long_run = has_long_run(text)
        if long_run:  # the mode changes before a long line is laid out, and after one goes
            self._wrap_for(text)
        self.setPlainText(text)
        if not long_run:
            self._wrap_for(text, replace=True)
        self.moveCursor(self.textCursor().MoveOperation.End)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt name)
        if self._keymap is None and types_text(event):
            # No default key of the message box types text (a test checks): until a keymap
            # is in force the first keys typed at the first paint go in at once, not after
            # the actions are imported (~15 ms then, issue 33).
            super().keyPressEvent(event)
            return
        from parley.gui.commands import actions

        if self._keymap is None:
            self._keymap = actions.composer_keymap()
        action = self._keymap.get(actions.key_text(event.key(), event.modifiers()))
        handler = self.on_action
        if action is not None and handler is not None and handler(action) is not False:
            event.accept()
            return
        super().keyPressEvent(event)

    # -- paste and drop: files and images become attachments ----------------
    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 (Qt name)
        return carries_files(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        files, image = local_files(source), pasted_image(source)
        if files:
            self.files_given.emit(files)
        elif image is not None:
            self.image_given.emit(image)
        elif source.hasText():
            text = source.text()
            cursor = self.textCursor()
            total = self.document().characterCount() - 1 - len(cursor.selectedText()) + len(text)
            if total > max_text_chars():  # could never be sent: not taken (nor kept as a draft)
                self.text_refused.emit(total)
                return
            self._wrap_for(text)
            cursor.insertText(text)
            self.ensureCursorVisible()
        else:
            super().insertFromMimeData(source)

    def _wrap_for(self, text: str, *, replace: bool = False) -> None:
        """Wrap anywhere while the text holds a very long unbroken run (word-boundary
        wrapping lays such a line out in time that grows with its square: seconds
        for a pasted 256 kB line); back to word wrapping for a text without one."""
        mode = QTextOption.WrapMode
        if has_long_run(text):
            self.setWordWrapMode(mode.WrapAnywhere)
        elif replace:
            self.setWordWrapMode(mode.WrapAtWordBoundaryOrAnywhere)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        if carries_files(event.mimeData()):
            event.acceptProposedAction()
            self._hover(True)
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        if carries_files(event.mimeData()):
            event.acceptProposedAction()  # no text cursor follows a file
        else:
            super().dragMoveEvent(event)

    def dragLeaveEvent(self, event: Any) -> None:  # noqa: N802
        self._hover(False)
        super().dragLeaveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        self._hover(False)
        if carries_files(event.mimeData()):
            event.acceptProposedAction()
            self.insertFromMimeData(event.mimeData())
        else:
            super().dropEvent(event)

    def _hover(self, on: bool) -> None:
        bar = self.parent()
        while bar is not None and not isinstance(bar, ComposerBar):
            bar = bar.parent()
        if isinstance(bar, ComposerBar):
            bar.drop_target.show_hover(on)

    def _fit(self, *_args: object) -> None:
        line = self.fontMetrics().lineSpacing()
        lines = max(1, min(MAX_LINES, int(self.document().size().height())))
        margins = self.contentsMargins()
        height = lines * line + 2 * int(self.document().documentMargin()) + margins.top() \
            + margins.bottom() + 4
        if height != self.height():
            self.setFixedHeight(height)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, self.height())


class ComposerBar(QWidget):
    """The composer inside its rounded frame, with the Send/Stop button.

    Signals:
        send_clicked: the Send button was pressed.
        stop_clicked: the Stop button was pressed.
        attach_clicked: the Attach (+) button was pressed.
        files_given(list): local file paths were dropped on the bar or pasted.
        image_given(QImage): an image was dropped on the bar or pasted.

    Attributes:
        tray: the pending files (:class:`parley.gui.composer.attach_tray.AttachTray`).
    """

    send_clicked = Signal()
    stop_clicked = Signal()
    attach_clicked = Signal()
    files_given = Signal(list)
    image_given = Signal(QImage)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ComposerBar")
        self.editor = Composer(self)
        self._busy = False
        self._send_key, self._stop_key = "Enter", "Esc"  # as the keymap has them (set_keys)

        self.frame = QFrame(self)
        self.frame.setObjectName("ComposerFrame")
        # A click anywhere in the rounded frame (its margins too) focuses the editor.
        self.frame.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.frame.setFocusProxy(self.editor)
        self.banner = QLabel(self.frame)
        self.banner.setObjectName("ComposerBanner")
        self.banner.setAccessibleName("Editing notice")
        self.banner.hide()

        self.button = QToolButton(self.frame)
        self.button.setObjectName("SendButton")
        self.button.setIconSize(QSize(18, 18))
        self.button.setFixedSize(34, 34)
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.clicked.connect(self._clicked)
        self.button.setProperty("busy", False)  # before its first polish: none needed now

        self.attach_button = QToolButton(self.frame)
        self.attach_button.setObjectName("AttachButton")
        self.attach_button.setText("+")
        self.attach_button.setFixedSize(30, 30)
        self.attach_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.attach_button.setAccessibleName("Attach files")
        self.attach_button.setToolTip("Attach images, PDFs or text files (Ctrl+O)")
        self.attach_button.clicked.connect(self.attach_clicked)

        self._tray: AttachTray | None = None  # made when first used (not for the first paint)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.attach_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.editor, 1, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        inner = QVBoxLayout(self.frame)
        inner.setContentsMargins(10, 10, 10, 10)
        inner.setSpacing(8)
        inner.addWidget(self.banner)
        inner.addLayout(row)  # the tray goes between them (see ``tray``)
        self._inner = inner

        self.hint = QLabel("Enter to send  ·  Shift+Enter for a new line  ·  Esc to stop", self)
        self.hint.setObjectName("ComposerHint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)  # two lines in a narrow window, never wider than the box
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addWidget(self.frame)
        outer.addWidget(self.hint)

        self.editor.textChanged.connect(self._refresh_button)
        self.editor.files_given.connect(self.files_given)
        self.editor.image_given.connect(self.image_given)
        self.drop_target = DropTarget(self, self.files_given.emit, self.image_given.emit,
                                      highlight=self.frame)
        self._refresh_button()

    @property
    def tray(self) -> AttachTray:
        """The pending files (:class:`parley.gui.composer.attach_tray.AttachTray`), made at first
        use."""
        if self._tray is None:
            from parley.gui.composer.attach_tray import AttachTray

            self._tray = AttachTray(self.frame)
            self._tray.changed.connect(self._refresh_button)
            self._inner.insertWidget(1, self._tray)
        return self._tray

    @property
    def busy(self) -> bool:
        """True while a reply streams: the button shows Stop."""
        return self._busy

    def set_keys(self, send: str, stop: str) -> None:
        """The keys that send and stop, as shown ("" for none): the button's tooltip
        names them (``parley.gui.commands.install.apply_keymap`` calls this)."""
        self._send_key, self._stop_key = send, stop
        self._refresh_button()

    def escape_pauses(self, pauses: bool) -> None:
        """The line under the box says what Esc does now: pause the queue of messages
        (``pauses``, while one is going out and the box is empty) or stop the reply."""
        text = self.hint.text()
        old, new = (STOP_WORDS, PAUSE_WORDS) if pauses else (PAUSE_WORDS, STOP_WORDS)
        if text.endswith(old):
            self.hint.setText(text[: -len(old)] + new)

    def set_busy(self, busy: bool) -> None:
        """Switch the button between Send and Stop."""
        self._busy = busy
        self._refresh_button()

    def set_editing(self, editing: bool) -> None:
        """Show or hide the "editing your last message" banner."""
        self.banner.setText("Editing your last message  ·  Enter to resend, Esc to cancel")
        self.banner.setVisible(editing)

    def _refresh_button(self) -> None:
        t = appearance.current()
        if self._busy:
            self.button.setIcon(appearance.icon("stop", t.accent_text, 18))
            self.button.setToolTip(_with_key("Stop the reply", self._stop_key))
            self.button.setAccessibleName("Stop")
            self.button.setEnabled(True)
        else:
            tray = self._tray
            reading = tray is not None and any(item.kind == "reading" for item in tray.items())
            self.button.setIcon(appearance.icon("send", t.accent_text, 18))
            self.button.setToolTip("Reading the attached file…" if reading
                                   else _with_key("Send", self._send_key))
            self.button.setAccessibleName("Send")
            has_content = bool(self.editor.text().strip()) or (tray is not None
                                                               and tray.count() > 0)
            self.button.setEnabled(has_content and not reading)
        if self.button.property("busy") != self._busy:  # restyled only when it changes
            self.button.setProperty("busy", self._busy)
            self.button.style().unpolish(self.button)
            self.button.style().polish(self.button)

    def _clicked(self) -> None:
        (self.stop_clicked if self._busy else self.send_clicked).emit()


def _with_key(words: str, key: str) -> str:
    return f"{words} ({key})" if key else words


def types_text(event: QKeyEvent) -> bool:
    """True when ``event`` types a printable character (no Ctrl, Alt or Meta held)."""
    command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
        | Qt.KeyboardModifier.MetaModifier
    text = event.text()
    return bool(text) and text.isprintable() and not event.modifiers() & command
