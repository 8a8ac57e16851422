"""Asking the user before an MCP tool runs.

:class:`ApprovalDialog` names the server, the tool and what it does, the
program that will answer (its command line or URL, never its environment; shortened
in the middle to fit, whole in its tooltip) — with "This server's program changed since
you last allowed it" when an earlier approval was for another program — and shows
the arguments as indented JSON, every invisible character in them written out
(``<U+202E>``: ``parley.core.visible``); its buttons: **Allow once** (the default:
Enter), **Always for this chat**, **Always for this tool** and **Deny**
(Escape, or closing the dialog). Alt+A / Alt+C / Alt+T / Alt+D press them;
Tab moves between them and the arguments.

:class:`DialogApprover` is the ``parley.core.mcp.tools.Approver`` of a window: each
call opens the dialog (window-modal, so the rest of the window waits but
other windows do not) and returns the choice; a stopped run (Esc in the chat)
closes a dialog still open, and the call does not run.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from parley.core.mcp.tools import ApprovalRequest, Decision
from parley.core.visible import escape_invisible
from parley.gui import dialogs

#: Arguments longer than this are cut in the dialog (the call gets them whole).
MAX_SHOWN_CHARS = 20_000
#: Said when an earlier approval of this server was for another program.
PROGRAM_CHANGED = "This server's program changed since you last allowed it."


class ElidedLine(QLabel):
    """One line of plain text shortened in the middle to the label's width ("…"), the
    whole text in its tooltip; it never asks for more width than it is given.

    Attributes:
        whole: the text before shortening.
    """

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.whole = text
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setToolTip(text)
        self.setAccessibleName(text)
        self._elide()

    def _elide(self) -> None:
        width = max(self.contentsRect().width(), 40)
        self.setText(self.fontMetrics().elidedText(self.whole, Qt.TextElideMode.ElideMiddle,
                                                   width))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()


def readable_arguments(arguments: Any) -> str:
    """The arguments as indented JSON (non-ASCII kept, invisible characters escaped:
    ``parley.core.visible``), cut at :data:`MAX_SHOWN_CHARS`."""
    text = escape_invisible(json.dumps(arguments, indent=2, ensure_ascii=False, default=str))
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f"\n… ({len(text):,} characters; the rest is not shown)"
    return text


class ApprovalDialog(QDialog):
    """Allow once / Always for this chat / Always for this tool / Deny, for one call.

    Attributes:
        decision: the choice once closed (``deny`` until a button says otherwise).
        buttons: ``{decision: QPushButton}``.
        lead: the sentence naming the tool and the server (rich text).
        program: "Program: <command line or URL>" (:class:`ElidedLine`).
        changed: :data:`PROGRAM_CHANGED`, shown when the request says so.
        about: the tool's description (plain text).
    """

    def __init__(self, request: ApprovalRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("McpApprovalDialog")
        self.setWindowTitle("Allow a tool to run?")
        self.setAccessibleName(self.windowTitle())
        self.request = request
        self.decision: Decision = "deny"
        lead = QLabel(f"The model wants to run <b>{_esc(request.tool)}</b> from the MCP "
                      f"server <b>{_esc(request.server)}</b>.", self)
        lead.setWordWrap(True)
        self.lead = lead
        self.program = ElidedLine(f"Program: {escape_invisible(request.program)}", self)
        self.program.setObjectName("DialogNote")
        self.changed = QLabel(PROGRAM_CHANGED, self)
        self.changed.setWordWrap(True)
        self.changed.setVisible(request.program_changed)
        about = QLabel(escape_invisible(request.description)
                       or "(The server gives no description.)", self)
        about.setTextFormat(Qt.TextFormat.PlainText)
        about.setWordWrap(True)
        self.about = about
        about.setObjectName("DialogNote")
        args_label = QLabel("&Arguments it passes:", self)
        self.arguments = QPlainTextEdit(self)
        self.arguments.setReadOnly(True)
        self.arguments.setTabChangesFocus(True)
        self.arguments.setAccessibleName("Arguments")
        self.arguments.setPlainText(readable_arguments(dict(request.arguments)))
        self.arguments.setMinimumHeight(120)
        args_label.setBuddy(self.arguments)
        row = QHBoxLayout()
        self.buttons: dict[Decision, QPushButton] = {}
        choices: tuple[tuple[Decision, str, str], ...] = (
            ("once", "&Allow once", "Run this call only."),
            ("chat", "Always for this &chat", "Run this tool without asking in this chat."),
            ("tool", "Always for this &tool", "Run this tool without asking in every chat "
                                              "(added to “alwaysAllow” in mcp.json)."),
            ("deny", "&Deny", "Do not run it; the model is told you declined."),
        )
        for decision, text, tip in choices:
            button = QPushButton(text, self)
            button.setToolTip(tip)
            button.setAccessibleDescription(tip)
            button.setAutoDefault(False)
            button.clicked.connect(lambda _=False, d=decision: self._choose(d))
            self.buttons[decision] = button
            row.addWidget(button)
        allow = self.buttons["once"]
        allow.setDefault(True)
        lay = QVBoxLayout(self)
        lay.addWidget(lead)
        if request.program:
            lay.addWidget(self.program)
        else:
            self.program.hide()
        lay.addWidget(self.changed)
        lay.addWidget(about)
        lay.addWidget(args_label)
        lay.addWidget(self.arguments, 1)
        lay.addLayout(row)
        self.setMinimumWidth(dialogs.TEXT_MIN_WIDTH)
        self.resize(560, 360)
        allow.setFocus()

    def _choose(self, decision: Decision) -> None:
        self.decision = decision
        if decision == "deny":
            self.reject()
        else:
            self.accept()

    def reject(self) -> None:
        """Escape or closing the dialog: Deny."""
        self.decision = "deny"
        super().reject()


def _esc(text: str) -> str:
    """``text`` for rich text, its invisible characters shown (``<U+202E>``)."""
    text = escape_invisible(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class DialogApprover:
    """A window's approver: one :class:`ApprovalDialog` per call, one at a time.

    Args:
        parent: the window the dialogs belong to.

    Attributes:
        dialog: the dialog open now, or None.
    """

    def __init__(self, parent: QWidget) -> None:
        self.parent = parent
        self.dialog: ApprovalDialog | None = None
        self._lock = asyncio.Lock()

    async def __call__(self, request: ApprovalRequest) -> Decision:
        async with self._lock:  # two chats asking at once: one dialog after the other
            dlg = ApprovalDialog(request, self.parent)
            done: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
            def finished(_result: int) -> None:
                if not done.done():
                    done.set_result(dlg.decision)

            dlg.finished.connect(finished)
            self.dialog = dlg
            dlg.open()
            dlg.raise_()
            dlg.activateWindow()
            try:
                return await done
            finally:  # also when the run is stopped while the dialog is open
                self.dialog = None
                if dlg.isVisible():
                    dlg.finished.disconnect()
                    dlg.reject()
                dlg.deleteLater()
