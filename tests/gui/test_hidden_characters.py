"""Invisible characters on the real window: written out (``<U+202E>``) in an MCP
approval dialog, left out of titles in the sidebar, the palette, search results, the
window title, the header and the notices naming a chat (``parley.core.visible``). A real
stdio MCP server offers a tool whose name hides a right-to-left override; the provider is
the fake server over real HTTP."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from parley.core.content import TextBlock, Turn
from parley.core.mcp.names import wire_name
from parley.gui.commands.palette_entries import session_entries
from tests.fakes.mcp_server import SPOOF_TOOL, stdio_entry
from tests.gui.helpers import search_for, show_section

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
    heading = w.chat_heading.button  # the header (trial 15: shown reversed)
    assert heading.text() == "Invoice fdp.exe" and RLO not in heading.toolTip()
    w.chat.organizer.pin_session(s.id)  # a notice naming the chat
    driver.until(lambda: "Pinned" in w.toast.message)
    assert w.toast.message == "Pinned “Invoice fdp.exe”"
    assert ("Invoice fdp.exe" in [e.label for e in session_entries(w, "invoice")])  # palette
    popup = search_for(driver, w, qtbot, "quarterly")  # search results
    item = popup.model.item(0)
    label = str(item.data(Qt.ItemDataRole.AccessibleTextRole))
    assert label.startswith("Invoice fdp.exe: ") and RLO not in label
    popup.hide()
    assert driver.run(w.store.get_session(s.id)).title == title  # stored as it was


def _tool_call_row(w) -> tuple[int, str, str]:
    """The transcript row holding the tool call: (row, its turn id, the call's id)."""
    for row, node in enumerate(w.transcript.model.rows):
        for block in node.turn.blocks:
            if getattr(block, "type", "") == "tool_use":
                return row, node.turn.id, block.id
    raise AssertionError("no tool call in the transcript")


def test_the_transcript_and_the_tools_page_write_out_hidden_characters(
        driver, fake_provider, qtbot, home):
    """A tool whose name hides U+202E (a server's name cannot: ``parley.core.mcp.config``),
    called with a hidden argument and denied: the dialog says which program runs; the
    transcript's tool line, its unfolded input and Parley's own "declined" text, and
    Settings → Tools show every hidden character written out, as the dialog does."""
    server = "fake"
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {server: stdio_entry("--spoof")}}))
    w = driver.configured()
    fake_provider.script("", tool_calls=[{"name": wire_name(server, SPOOF_TOOL),
                                          "input": {"path": f"notes{RLO}txt.exe"}}])
    fake_provider.script("Done.")
    driver.send("Open it")
    driver.until(lambda: w.mcp.approver.dialog is not None
                 and w.mcp.approver.dialog.isVisible(), timeout=30)
    dlg = w.mcp.approver.dialog
    conf = w.mcp.host.configs[server]
    assert dlg.program.toolTip() == f"Program: {conf.describe()}"
    assert conf.command in dlg.program.text() and dlg.program.isVisibleTo(dlg)
    assert not dlg.changed.isVisibleTo(dlg)  # nothing allowed before
    qtbot.keyClick(dlg, Qt.Key.Key_Escape)  # Deny
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)

    row, turn_id, call_id = _tool_call_row(w)
    view = w.transcript
    line = view.list_view.layout_of(row, fresh=True).plain_text()
    assert "fake › report_<U+202E>fdp.exe" in line
    assert 'path="notes<U+202E>txt.exe"' in line
    qtbot.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.fold_point(turn_id, f"tool:{call_id}"))
    opened = view.list_view.layout_of(row, fresh=True).plain_text()
    assert '"path": "notes<U+202E>txt.exe"' in opened
    assert "The user declined to run report_<U+202E>fdp.exe (MCP server “fake”)" \
        in opened
    assert RLO not in opened

    settings = w.window_commands.open_settings()
    show_section(settings, "Tools")
    driver.until(lambda: settings.ready)
    page = settings.tools_page
    page.list.setCurrentRow(0)
    driver.until(lambda: page.tools.count() > 1, timeout=30)
    shown = [page.list.item(0).text(), page.detail.text()] + \
        [page.tools.item(i).text() for i in range(page.tools.count())]
    assert shown[0].startswith("fake — Ready")
    assert "report_<U+202E>fdp.exe — Open a <U+202E>txt.exe file<U+200B> safely." in shown
    assert not any(RLO in text or "\u200b" in text for text in shown)
    settings.close()
    driver.settle(w)

    # After a restart, before any server runs, the chat's tool call is named the same way.
    sid = w.session_id
    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.session_id == sid)
    row, _, _ = _tool_call_row(w)
    line = w.transcript.list_view.layout_of(row, fresh=True).plain_text()
    assert "fake › report_<U+202E>fdp.exe" in line and RLO not in line
    assert w.mcp.host.status(server).state != "ready"
