"""Approval before an MCP tool runs, on the real window with a real stdio MCP server:
the dialog names the server, the tool and its arguments, and is driven by keyboard."""

from __future__ import annotations

import json
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from shiboken6 import isValid

from parley.core.mcp.tools import declined_text
from tests.fakes.mcp_server import stdio_entry

pytestmark = pytest.mark.timeout(90)


def _results(request) -> list[dict]:
    return [b for m in request.body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def _last_result(fake) -> dict:
    """The last tool result the fake model was sent (title requests have none)."""
    return [_results(r) for r in fake.model_requests if _results(r)][-1][-1]


def _text(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


@pytest.fixture
def mcp_json(home):
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"fake": stdio_entry()}}))
    return path


def _dialog(driver, w):
    """The approval dialog once it is the active window: keys a person presses go to
    it only then, and Alt+T is a shortcut, which Qt gives to the active window only
    (activation arrives after the dialog is shown, later under load)."""
    driver.until(lambda: w.mcp.approver.dialog is not None
                 and w.mcp.approver.dialog.isVisible()
                 and QApplication.activeWindow() is w.mcp.approver.dialog, timeout=30)
    return w.mcp.approver.dialog


def _ask_echo(driver, fake, text: str) -> None:
    fake.script("", tool_calls=[{"name": "mcp__fake__echo", "input": {"text": text}}])
    fake.script("Done.")
    driver.send("Echo it")  # typed: ASCII only (QTest)


def test_approval_by_keyboard_allow_once_deny_and_always(driver, fake_provider, qtbot,
                                                         mcp_json):
    w = driver.configured()
    _ask_echo(driver, fake_provider, "héllo")
    dlg = _dialog(driver, w)
    assert dlg.windowTitle() == "Allow a tool to run?"
    assert json.loads(dlg.arguments.toPlainText()) == {"text": "héllo"}
    assert "héllo" in dlg.arguments.toPlainText()  # readable, not \\u-escaped
    assert QApplication.focusWidget() is dlg.buttons["once"]
    qtbot.keyClick(dlg.buttons["once"], Qt.Key.Key_Return)  # Enter: Allow once
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)
    assert _text(_last_result(fake_provider)) == "echo: héllo"

    # Asked again (only once); Escape denies and the model reads that.
    _ask_echo(driver, fake_provider, "two")
    dlg = _dialog(driver, w)
    qtbot.keyClick(dlg, Qt.Key.Key_Escape)
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)
    denied = _last_result(fake_provider)
    assert denied["is_error"] and _text(denied) == declined_text("fake", "echo")

    # Alt+T: always for this tool, written to mcp.json; not asked again.
    _ask_echo(driver, fake_provider, "three")
    dlg = _dialog(driver, w)
    qtbot.keyClick(dlg, Qt.Key.Key_T, Qt.KeyboardModifier.AltModifier)
    driver.until(lambda: driver.last_text() == "Done." and w.tasks.pending == 0, timeout=30)
    driver.settle(w)
    assert json.loads(mcp_json.read_text())["mcpServers"]["fake"]["alwaysAllow"] == ["echo"]
    _ask_echo(driver, fake_provider, "four")
    driver.until(lambda: _text(_last_result(fake_provider)) == "echo: four", timeout=30)
    assert w.mcp.approver.dialog is None
    driver.settle(w)


def test_stopping_the_reply_closes_the_dialog_and_runs_nothing(driver, fake_provider, qtbot,
                                                                mcp_json):
    w = driver.configured()
    _ask_echo(driver, fake_provider, "never")
    dlg = _dialog(driver, w)
    assert w.window_commands.stop_run() is not False
    driver.until(lambda: w.mcp.approver.dialog is None
                 and (not isValid(dlg) or not dlg.isVisible()), timeout=10)
    driver.settle(w)
    assert not any(r.body.get("messages") and _results(r) for r in fake_provider.model_requests)


def _chat_requests(fake) -> list:
    """The chat's requests (they carry Parley's tools; title requests carry none)."""
    return [r for r in fake.model_requests if r.body.get("tools")]


def _tool_names(request) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in request.body.get("tools", [])]


def test_a_space_turns_an_mcp_server_off_in_its_dialog(driver, fake_provider, qtbot, mcp_json):
    w = driver.configured()
    fake_provider.script("With MCP.")
    driver.send("Hi.", wait=True)
    assert "mcp__fake__echo" in _tool_names(_chat_requests(fake_provider)[-1])
    w.chat.organizer.edit_space(w.chat.space_id)
    dlg = w.chat.organizer.dialog
    driver.until(lambda: "fake" in dlg.mcp_checks)
    box = dlg.mcp_checks["fake"]
    assert box.isChecked() and box.isVisibleTo(dlg)
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Space)
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.run(w.mcp.servers_off(w.chat.space_id)) == ["fake"])
    fake_provider.script("Without MCP.")
    driver.send("Again.", wait=True)
    names = _tool_names(_chat_requests(fake_provider)[-1])
    assert names and not any(n.startswith("mcp__") for n in names)  # Parley's own stay


def test_a_failing_server_is_told_in_the_status_bar_and_the_model_gets_the_error(
        driver, fake_provider, home):
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "fake": stdio_entry(alwaysAllow=["crash"])}}))
    w = driver.configured()
    fake_provider.script("", tool_calls=[{"name": "mcp__fake__crash", "input": {}}])
    fake_provider.script("It crashed.")
    driver.send("Crash it")
    driver.until(lambda: driver.last_text() == "It crashed.", timeout=30)
    assert w.statusBar().currentMessage().startswith("The MCP server “fake” failed: ")
    assert "See Settings → Tools." in w.statusBar().currentMessage()
    result = _last_result(fake_provider)
    assert result["is_error"] and "crashing on purpose" in _text(result)
    driver.settle(w)


def test_a_bad_mcp_json_is_told_when_the_window_opens(driver, home):
    (home / "mcp.json").write_text("{broken")
    w = driver.configured()
    driver.until(lambda: "not valid JSON" in w.toast.message, timeout=10)
    assert str(home / "mcp.json") in w.toast.message
    assert "MCP servers stay off until then" in w.toast.message


def test_a_failing_server_is_quoted_by_its_error_line_once_per_failure(driver, home):
    """A Python server's traceback is quoted by its last line (the error), not by
    "Traceback (most recent call last):"; starting it again for another chat does not
    say the same failure again."""
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"py": {
        "command": sys.executable, "args": ["-c", "import parley_no_such_module"]}}}))
    w = driver.configured()
    bar = w.statusBar()
    status = driver.run(w.mcp.host.restart("py"))
    assert status.state == "failed" and "Traceback" in status.error
    driver.until(lambda: "failed" in bar.currentMessage())
    said = bar.currentMessage()
    assert said.startswith("The MCP server “py” failed: ")
    assert "ModuleNotFoundError: No module named 'parley_no_such_module'" in said
    assert "Traceback" not in said and said.endswith(". See Settings → Tools.")

    bar.clearMessage()
    driver.run(w.mcp.host.restart("py"))  # the same failure again (e.g. a new chat)
    driver.settle(w)
    assert "failed" not in bar.currentMessage()


def test_the_dialog_shows_the_program_and_says_when_it_changed(driver, fake_provider, qtbot,
                                                               mcp_json):
    """Allowed for the chat, then mcp.json is edited to start another program (a long
    command line, a secret in its environment): the next call asks again, shows the new
    command line shortened (whole in the tooltip, no secret) and says it changed."""
    w = driver.configured()
    _ask_echo(driver, fake_provider, "one")
    dlg = _dialog(driver, w)
    assert dlg.program.toolTip() == f"Program: {sys.executable} -m tests.fakes.mcp_server"
    assert not dlg.changed.isVisibleTo(dlg)
    qtbot.keyClick(dlg, Qt.Key.Key_C, Qt.KeyboardModifier.AltModifier)  # always for the chat
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)
    assert _text(_last_result(fake_provider)) == "echo: one"

    long_arg = "--profile=" + "x" * 300
    mcp_json.write_text(json.dumps({"mcpServers": {"fake": stdio_entry(
        long_arg, env={"FAKE_MCP_SECRET": "hunter2"})}}))
    _ask_echo(driver, fake_provider, "two")
    dlg = _dialog(driver, w)
    whole = dlg.program.toolTip()
    assert whole.endswith(f"-m tests.fakes.mcp_server {long_arg}")
    assert dlg.program.text() != whole and "…" in dlg.program.text()
    assert dlg.program.sizeHint().width() < 2000 and dlg.width() < 1000
    assert "hunter2" not in whole + dlg.program.text()
    assert dlg.changed.isVisibleTo(dlg)
    assert dlg.changed.text() == "This server's program changed since you last allowed it."
    qtbot.keyClick(dlg.buttons["once"], Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Done.", timeout=30)
    driver.settle(w)
    assert _text(_last_result(fake_provider)) == "echo: two"
