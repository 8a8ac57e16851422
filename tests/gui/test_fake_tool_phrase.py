"""The README's "try it without an account" tool walk-through, on the real window: a
message ``/tool echo {"text": "hi"}`` to the unscripted fake provider makes it call the
fake MCP server's ``echo``; Parley asks, Allow once (Return) runs it, and the fake
model answers with the tool's result."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.fakes.mcp_server import stdio_entry

pytestmark = pytest.mark.timeout(90)


def test_a_tool_phrase_asks_for_approval_and_ends_with_the_result(driver, fake_provider,
                                                                  qtbot, home):
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"fake": stdio_entry()}}))
    w = driver.configured()
    driver.send('/tool echo {"text": "hi"}')  # nothing scripted: the phrase decides
    driver.until(lambda: w.mcp.approver.dialog is not None
                 and w.mcp.approver.dialog.isVisible(), timeout=30)
    dlg = w.mcp.approver.dialog
    assert json.loads(dlg.arguments.toPlainText()) == {"text": "hi"}
    # The dialog takes the focus once the window system activates it (asynchronous: a
    # busy machine delivers the activation a little after the dialog shows).
    driver.until(lambda: QApplication.focusWidget() is dlg.buttons["once"], timeout=5)
    qtbot.keyClick(dlg.buttons["once"], Qt.Key.Key_Return)  # Allow once
    driver.until(lambda: driver.last_text() == "The tool answered: echo: hi"
                 and w.tasks.pending == 0, timeout=30)
    driver.settle(w)
    roles = [t.role for t in w.chat.turns]
    assert roles[0] == "user" and roles[-1] == "assistant" and len(roles) >= 3
