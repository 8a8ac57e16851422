"""Invisible characters on the real window: written out (``<U+202E>``) in an MCP
approval dialog, left out of titles in the sidebar, the palette, search results and the
window title (``parley.core.visible``). A real stdio MCP server offers a tool whose name
hides a right-to-left override; the provider is the fake server over real HTTP."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from parley.core.content import TextBlock, Turn
from parley.core.mcp.names import wire_name
from parley.gui.commands.palette_entries import session_entries
from tests.fakes.mcp_server import SPOOF_TOOL, stdio_entry
from tests.gui.test_search_window import _search

pytestmark = pytest.mark.timeout(90)

RLO = "\u202e"


def _plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def test_the_approval_dialog_writes_out_hidden_characters(driver, fake_provider, qtbot, home):
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"fake": stdio_entry("--spoof")}}))
    w = driver.configured()
    fake_provider.script("", tool_calls=[{"name": wire_name("fake", SPOOF_TOOL),
                                          "input": {"path": f"notes{RLO}txt.exe"}}])
    fake_provider.script("Done.")
    driver.send("Open it")
    driver.until(lambda: w.mcp.approver.dialog is not None
                 and w.mcp.approver.dialog.isVisible(), timeout=30)
    dlg = w.mcp.approver.dialog
    lead = _plain(dlg.lead.text())
    assert "run report_<U+202E>fdp.exe from the MCP server fake" in lead
    assert dlg.about.text() == "Open a <U+202E>txt.exe file<U+200B> safely."
    assert '"path": "notes<U+202E>txt.exe"' in dlg.arguments.toPlainText()
    for shown in (lead, dlg.about.text(), dlg.arguments.toPlainText()):
        assert RLO not in shown and "\u200b" not in shown
    qtbot.keyClick(dlg, Qt.Key.Key_Escape)  # Deny
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)


def test_titles_in_lists_leave_hidden_characters_out(driver, qtbot):
    w = driver.configured()
    title = f"Invoice {RLO}fdp.exe\u200b"
    s = driver.run(w.store.create_session(title=title))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("the quarterly invoice")])))
    driver.run(w.chat.load_sidebar())
    index = w.sidebar.model.index_of(s.id)
    assert index.data() == "Invoice fdp.exe"  # the sidebar
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    assert w.windowTitle() == "Invoice fdp.exe — Parley"  # the window title
    assert ("Invoice fdp.exe" in [e.label for e in session_entries(w, "invoice")])  # palette
    popup = _search(driver, w, qtbot, "quarterly")  # search results
    item = popup.model.item(0)
    label = str(item.data(Qt.ItemDataRole.AccessibleTextRole))
    assert label.startswith("Invoice fdp.exe: ") and RLO not in label
    popup.hide()
    assert driver.run(w.store.get_session(s.id)).title == title  # stored as it was
