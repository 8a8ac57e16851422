"""The side-by-side view of several models' answers to one message ("Ask several models").

One column per model, each streaming its answer live, with the model's name on top and,
below, its tokens and cost once it is done (or why it failed: a failure shows in its
column only). While an answer's request waits on Parley's connection process that has
stopped answering, its column says so, as the bar over a single reply does
(:data:`~parley.gui.notices.retry_notice.SILENT`, ``ProviderProcessSilent``).
One answer is chosen to continue the chat from: its column's button, or
the keyboard — Left / Right (or Tab) move between columns, Enter chooses the column
selected, 1–4 choose that column, Esc closes the view (the answer shown in the chat
stays: the first complete one). The answers are siblings in the chat either way
(‹ n/m › under the answer).

The view only shows; ``parley.gui.chat.several`` feeds it and acts on :attr:`chosen`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from parley.core.content import Usage
from parley.gui.notices.retry_notice import SILENT, SILENT_DETAIL

STREAMING = "Writing…"
HINT = ("← → move between the answers · Enter or 1–4 continues the chat from one · "
        "Esc closes (the first complete answer stays shown)")


def usage_text(usage: Usage | None) -> str:
    """"1,234 tokens in · 56 out · $0.0012" (the cost left out when unknown)."""
    if usage is None:
        return "Done"
    text = f"{usage.total_input_tokens:,} tokens in · {usage.output_tokens:,} out"
    if usage.cost_usd:
        text += f" · ${usage.cost_usd:.4f}"
    return text


@dataclass
class Column:
    """One answer's column.

    Attributes:
        turn_id: the answer's turn id ('' for a model refused before it was asked).
        model_ref: its ``provider:model``.
        frame, title, body, footer, button: its widgets.
        text: what it streamed so far.
        usable: it can be chosen (complete, or stopped with something kept).
    """

    turn_id: str
    model_ref: str
    frame: QFrame
    title: QLabel
    body: QTextBrowser
    footer: QLabel
    button: QPushButton
    text: str = ""
    usable: bool = False


class CompareView(QDialog):
    """Columns of answers (see the module doc).

    Args:
        parent: the main window.
        model_name: the display name of a ``provider:model``.

    Signals:
        chosen(str): the turn id of the answer chosen to continue from.
    """

    chosen = Signal(str)

    def __init__(self, parent: QWidget, model_name: Callable[[str], str]) -> None:
        super().__init__(parent)
        self.setObjectName("CompareView")
        self.setWindowTitle("Answers side by side")
        self.setModal(False)
        self.model_name = model_name
        self.columns: list[Column] = []
        self.selected = 0
        box = QVBoxLayout(self)
        self.row = QHBoxLayout()
        box.addLayout(self.row, 1)
        self.hint = QLabel(HINT, self)
        self.hint.setWordWrap(True)
        box.addWidget(self.hint)
        if parent is not None:
            size = parent.size()
            self.resize(max(640, int(size.width() * 0.9)), max(420, int(size.height() * 0.8)))

    # -- fed by parley.gui.chat.several ----------------------------------------
    def start(self, answers: list[tuple[str, str]], refused: list[tuple[str, str]]) -> None:
        """Make a column per answer (``(model_ref, turn_id)``), then one per model refused
        before it was asked (``(model_ref, why)``)."""
        for model_ref, turn_id in answers:
            self._add(model_ref, turn_id)
        for model_ref, why in refused:
            self._add(model_ref, "").footer.setText(why)
        self._select(0)

    def present(self) -> None:
        """Show the view and give it the keyboard: the selected column has the focus, so
        ← →, Enter and 1–4 work at once, not in the message box behind it. Activated
        explicitly: without a window manager nothing else would."""
        self.show()
        self.raise_()
        self.activateWindow()
        if self.columns:
            self.columns[self.selected].body.setFocus(Qt.FocusReason.ActiveWindowFocusReason)

    def update_text(self, turn_id: str, text: str) -> None:
        """The answer ``turn_id`` streamed more: ``text`` is all of it so far."""
        col = self.column(turn_id)
        if col is not None and text != col.text:
            col.text = text
            bar = col.body.verticalScrollBar()
            at_end = bar.value() >= bar.maximum() - 4
            col.body.setMarkdown(text)
            if at_end:
                bar.setValue(bar.maximum())

    def answer_silent(self, turn_id: str, silent: bool) -> None:
        """The answer's request waits on Parley's connection process, which does not
        answer (``silent``: :data:`SILENT` under it, why in its tooltip), or no longer
        does (back to :data:`STREAMING`). A column already done keeps what it says."""
        col = self.column(turn_id)
        if col is None or col.footer.text() not in (STREAMING, SILENT):
            return
        col.footer.setText(SILENT if silent else STREAMING)
        col.footer.setToolTip(SILENT_DETAIL if silent else "")

    def answer_done(self, turn_id: str, text: str, usage: Usage | None) -> None:
        """The answer is complete: its text, tokens and cost."""
        col = self.column(turn_id)
        if col is not None:
            self.update_text(turn_id, text)
            col.footer.setText(usage_text(usage))
            col.footer.setToolTip("")
            self._usable(col)

    def answer_failed(self, turn_id: str, why: str, kept: bool) -> None:
        """The answer failed (``why``) or was stopped; ``kept``: what arrived is kept."""
        col = self.column(turn_id)
        if col is not None:
            col.footer.setText(why)
            col.footer.setToolTip("")
            col.footer.setProperty("error", True)
            if kept:
                self._usable(col)

    def all_done(self, shown: str | None) -> None:
        """Every answer is done; ``shown`` is the one the chat shows now."""
        for i, col in enumerate(self.columns):
            if col.turn_id and col.turn_id == shown:
                self._select(i)
                col.title.setText(f"{col.title.text()}  ·  shown")

    def column(self, turn_id: str) -> Column | None:
        """The column of answer ``turn_id`` (None: not this view's)."""
        return next((c for c in self.columns if c.turn_id and c.turn_id == turn_id), None)

    # -- choosing -----------------------------------------------------------------
    def choose(self, index: int) -> bool:
        """Continue from the answer of column ``index`` (0-based); False when it cannot
        be chosen (out of range, still streaming, failed with nothing kept)."""
        if not 0 <= index < len(self.columns) or not self.columns[index].usable:
            return False
        self.chosen.emit(self.columns[index].turn_id)
        self.accept()
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt)
        """Left / Right select, Enter or 1–4 choose, Esc closes."""
        key = event.key()
        if key in (Qt.Key.Key_Left, Qt.Key.Key_Right):
            step = -1 if key == Qt.Key.Key_Left else 1
            self._select((self.selected + step) % max(1, len(self.columns)))
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.choose(self.selected)
        elif Qt.Key.Key_1 <= key <= Qt.Key.Key_4:
            self.choose(int(key) - int(Qt.Key.Key_1))
        else:
            super().keyPressEvent(event)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt)
        """The columns' text keeps the focus for scrolling: the view's keys still work."""
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress and \
                event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Return,
                                Qt.Key.Key_Enter, Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3,
                                Qt.Key.Key_4):
            self.keyPressEvent(event)
            return True
        return super().eventFilter(watched, event)

    # -- building -------------------------------------------------------------------
    def _add(self, model_ref: str, turn_id: str) -> Column:
        n = len(self.columns) + 1
        frame = QFrame(self)
        frame.setObjectName("CompareColumn")
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        box = QVBoxLayout(frame)
        title = QLabel(f"{n}. {self.model_name(model_ref)}", frame)
        title.setObjectName("CompareTitle")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        body = QTextBrowser(frame)
        body.setAccessibleName(f"Answer of {self.model_name(model_ref)}")
        body.setOpenExternalLinks(True)
        body.installEventFilter(self)
        footer = QLabel(STREAMING if turn_id else "", frame)
        footer.setWordWrap(True)
        button = QPushButton(f"Continue with this ({n})", frame)
        button.setEnabled(False)
        button.setAutoDefault(False)
        for w in (title, body, footer, button):
            box.addWidget(w, 1 if w is body else 0)
        self.row.addWidget(frame, 1)
        col = Column(turn_id, model_ref, frame, title, body, footer, button)
        index = len(self.columns)
        button.clicked.connect(lambda: self.choose(index))
        self.columns.append(col)
        return col

    def _usable(self, col: Column) -> None:
        col.usable = True
        col.button.setEnabled(True)

    def _select(self, index: int) -> None:
        if not self.columns:
            return
        self.selected = index
        for i, col in enumerate(self.columns):
            col.frame.setLineWidth(3 if i == index else 1)
            col.frame.setFrameShadow(QFrame.Shadow.Plain if i == index else QFrame.Shadow.Sunken)
        self.columns[index].body.setFocus()
