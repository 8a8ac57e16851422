"""Settings → Tools on the real window: MCP servers listed with their status, started,
added, edited, removed, imported from Claude desktop, tools switched off; by keyboard
where a person would."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.core.mcp.config import KEYRING_MARK
from parley.gui import dialogs
from tests.fakes.mcp_server import stdio_entry
from tests.gui.helpers import show_section

pytestmark = pytest.mark.timeout(90)


def _servers(path) -> dict:
    return json.loads(path.read_text())["mcpServers"]


@pytest.fixture
def mcp_json(home):
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "fake": stdio_entry(), "broken": stdio_entry("--fail-start")}}))
    return path


def _tools_page(driver, w):
    dlg = w.window_commands.open_settings()
    show_section(dlg, "Tools")
    # Alt+R / Alt+I are shortcuts: Qt gives them to the active window only.
    driver.until(lambda: dlg.ready and QApplication.activeWindow() is dlg)
    return dlg, dlg.tools_page


def _rows(page) -> list[str]:
    return [page.list.item(i).text() for i in range(page.list.count())]


def test_servers_start_show_status_and_tools_can_be_switched_off(driver, qtbot, mcp_json):
    w = driver.configured()
    dlg, page = _tools_page(driver, w)
    assert _rows(page) == ["fake — Not started (starts when a chat first needs it)",
                           "broken — Not started (starts when a chat first needs it)"]
    page.list.setFocus()
    qtbot.keyClick(page.list, Qt.Key.Key_Home)
    qtbot.keyClick(page, Qt.Key.Key_R, Qt.KeyboardModifier.AltModifier)  # Start / restart
    driver.until(lambda: _rows(page)[0].startswith("fake — Ready — "), timeout=30)
    tools = [page.tools.item(i).data(Qt.ItemDataRole.UserRole)
             for i in range(page.tools.count())]
    assert tools[:3] == ["echo", "add", "picture"]
    assert all(page.tools.item(i).checkState() == Qt.CheckState.Checked
               for i in range(page.tools.count()))
    # Untick "crash" with the keyboard: it is written to mcp.json.
    page.tools.setFocus()
    page.tools.setCurrentRow(tools.index("crash"))
    qtbot.keyClick(page.tools, Qt.Key.Key_Space)
    driver.until(lambda: _servers(mcp_json)["fake"].get("disabledTools") == ["crash"]
                 and page.tools.item(tools.index("crash")).checkState()
                 == Qt.CheckState.Unchecked and dlg.tasks.pending == 0)
    assert _rows(page)[0].startswith("fake — Ready — ")  # not restarted for that
    # The failing server shows the server's own words.
    page.list.setCurrentRow(1)
    page.restart_server()
    driver.until(lambda: _rows(page)[1].startswith("broken — Failed"), timeout=30)
    assert "cannot open the database /nowhere/db.sqlite" in page.detail.text()
    dlg.close()


def test_add_edit_and_remove_a_server_with_a_secret_in_the_keyring(driver, qtbot, mcp_json):
    w = driver.configured()
    dlg, page = _tools_page(driver, w)
    server = page.add_server()
    qtbot.keyClicks(server.name_edit, "notes")
    qtbot.keyClicks(server.command, "npx")
    qtbot.keyClicks(server.args, '-y server-fs "/my notes"')
    server.env.setPlainText("DEBUG=1\nNOTES_API_KEY=sk-very-secret")
    qtbot.keyClick(server.command, Qt.Key.Key_Return)
    driver.until(lambda: "notes" in _servers(mcp_json) and dlg.tasks.pending == 0)
    entry = _servers(mcp_json)["notes"]
    assert entry == {"command": "npx", "args": ["-y", "server-fs", "/my notes"],
                     "env": {"DEBUG": "1", "NOTES_API_KEY": KEYRING_MARK}}
    assert "sk-very-secret" not in mcp_json.read_text()
    driver.until(lambda: w.hub.keys.get("mcp:notes:env:NOTES_API_KEY") is not None)
    assert w.hub.keys.get("mcp:notes:env:NOTES_API_KEY").value == "sk-very-secret"
    assert _rows(page)[-1].startswith("notes — ") and page.selected() == "notes"

    # A bad URL is refused in the dialog, which stays open.
    edit = page.edit_server()
    assert edit.env.toPlainText() == f"DEBUG=1\nNOTES_API_KEY={KEYRING_MARK}"
    edit.kind.setCurrentIndex(1)
    edit.url.setText("ftp://example.com/mcp")
    edit.accept()
    assert edit.isVisible() and "must start with http:// or https://" in edit.error_label.text()
    edit.url.setText("http://127.0.0.1:9/mcp")
    edit.accept()
    driver.until(lambda: _servers(mcp_json)["notes"] == {"url": "http://127.0.0.1:9/mcp"}
                 and dlg.tasks.pending == 0)
    assert list(_servers(mcp_json)) == ["fake", "broken", "notes"]  # kept its place

    w.hub.keys.set("mcp:notes:oauth:tokens", "{}")  # as a sign-in would have left
    dialogs.answers.append(True)
    page.remove_server()
    driver.until(lambda: "notes" not in _servers(mcp_json) and dlg.tasks.pending == 0)
    assert w.hub.keys.get("mcp:notes:env:NOTES_API_KEY") is None
    assert w.hub.keys.get("mcp:notes:oauth:tokens") is None
    assert "notes" not in " ".join(_rows(page))
    dlg.close()


def test_import_from_claude_desktop(driver, qtbot, mcp_json, tmp_path):
    w = driver.configured()
    dlg, page = _tools_page(driver, w)
    page.claude_path = tmp_path / "nothing.json"
    page.import_claude()
    assert "Claude desktop's configuration is not there" in page.message.text()
    claude = tmp_path / "claude_desktop_config.json"
    claude.write_text(json.dumps({"mcpServers": {
        "fake": {"command": "other"},
        "github": {"command": "npx", "args": ["-y", "gh"],
                   "env": {"GITHUB_TOKEN": "ghp_secret"}}}}))
    page.claude_path = claude
    qtbot.keyClick(page, Qt.Key.Key_I, Qt.KeyboardModifier.AltModifier)
    driver.until(lambda: "github" in _servers(mcp_json) and dlg.tasks.pending == 0)
    servers = _servers(mcp_json)
    assert servers["fake"]["args"][-1] == "tests.fakes.mcp_server"  # kept, not overwritten
    assert servers["github"]["env"] == {"GITHUB_TOKEN": KEYRING_MARK}
    driver.until(lambda: "Imported from Claude desktop: github." in page.message.text())
    assert w.hub.keys.get("mcp:github:env:GITHUB_TOKEN").value == "ghp_secret"
    dlg.close()


def test_a_bad_mcp_json_is_explained_on_the_page(driver, home):
    (home / "mcp.json").write_text('{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}')
    w = driver.configured()
    dlg, page = _tools_page(driver, w)
    assert page.file_error.isVisibleTo(page)
    assert "the server “x”" in page.file_error.text()
    assert "both a “command” and a “url”" in page.file_error.text()
    assert page.list.count() == 0
    # Adding would rewrite the file: Add… and Import say why they wait; no "add one".
    assert not page.add_button.isEnabled() and not page.import_button.isEnabled()
    assert "problem to fix first" in page.add_button.toolTip()
    assert "No MCP servers yet" not in page.detail.text()
    page.add_server()  # refused even when called
    page.dialog.name_edit.setText("new")
    page.dialog.command.setText("prog")
    page.dialog.accept()
    driver.until(lambda: "has a problem to fix first" in page.message.text())
    assert (home / "mcp.json").read_text().startswith('{"mcpServers": {"x"')  # untouched
    dlg.close()


def test_a_fixed_mcp_json_is_read_again_by_refresh_and_by_the_tools_page(driver, home,
                                                                       fake_provider):
    """No restart: Refresh memory, skills and tools (or Settings → Tools) reads the file
    again, and a new chat's request carries the servers' tools."""
    path = home / "mcp.json"
    path.write_text('{"mcpServers": {')  # broken at start
    w = driver.configured()
    assert w.mcp.host.error is not None
    assert "Refresh memory, skills and tools" in w.mcp.host.error.message

    w.commands.run("session.refresh_prompt")  # still broken: said again
    driver.until(lambda: w.statusBar().currentMessage() == w.mcp.host.error.message)

    path.write_text(json.dumps({"mcpServers": {"fake": stdio_entry()}}))
    w.commands.run("session.refresh_prompt")
    driver.until(lambda: w.mcp.host.error is None and list(w.mcp.host.configs) == ["fake"])
    assert "“fake”" in w.statusBar().currentMessage()
    fake_provider.script("Hi.")
    driver.send("Hello")
    driver.until(lambda: driver.last_text() == "Hi.", timeout=30)
    sent = [r for r in fake_provider.model_requests if r.body.get("tools")][-1]
    assert "mcp__fake__echo" in [t["name"] for t in sent.body["tools"]]

    # Written while running, seen when Settings → Tools opens.
    path.write_text(json.dumps({"mcpServers": {"fake": stdio_entry(),
                                               "second": stdio_entry()}}))
    dlg, page = _tools_page(driver, w)
    driver.until(lambda: [r.split(" — ")[0] for r in _rows(page)] == ["fake", "second"])
    assert page.add_button.isEnabled() and not page.file_error.isVisibleTo(page)
    dlg.close()


def test_editing_a_servers_program_drops_its_always_allowed_tools(driver, qtbot, home):
    mcp_json = home / "mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"fake": stdio_entry(alwaysAllow=["echo"])}}))
    w = driver.configured()
    dlg, page = _tools_page(driver, w)
    page.list.setCurrentRow(0)
    edit = page.edit_server()
    qtbot.keyClick(edit.command, Qt.Key.Key_Return)  # saved as it was: still allowed
    driver.until(lambda: dlg.tasks.pending == 0 and not edit.isVisible())
    assert _servers(mcp_json)["fake"]["alwaysAllow"] == ["echo"]
    edit = page.edit_server()
    qtbot.keyClicks(edit.args, " --another-program")
    qtbot.keyClick(edit.command, Qt.Key.Key_Return)
    driver.until(lambda: dlg.tasks.pending == 0
                 and _servers(mcp_json)["fake"]["args"][-1] == "--another-program")
    assert "alwaysAllow" not in _servers(mcp_json)["fake"]  # another program: asks again
    dlg.close()
