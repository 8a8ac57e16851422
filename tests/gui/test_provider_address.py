"""Settings → Providers: a malformed server address is called not valid (a typed error,
before any connection is tried), not "could not reach"; and after "Save provider" the
keyboard focus stays on the button, not in "Model for new chats" with its text
selected (the next key typed would have replaced it). Real sessions.db, real keys
file, the real SDKs against the fake provider server.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from parley.core.providers.address import InvalidServerAddress, check_server_address
from parley.core.workspace import Workspace
from parley.gui.settings.dialog import SettingsDialog
from parley.gui.settings.providers import NOT_SAVED, SAVED_TEXT
from tests.gui.hubs import open_hub

pytestmark = pytest.mark.timeout(90)
BAD = "ht!tp://bad url:99999/"


@pytest.fixture
def hub(run, tmp_path, fake_provider):
    async def build() -> Workspace:
        ws = await open_hub(tmp_path)
        await ws.hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                                  api_key="sk-ant-test", default_model="claude-haiku-4-5")
        return ws

    ws = run(build(), timeout=30)
    yield ws.hub
    run(ws.close())


@pytest.fixture
def page(hub, qtbot, until):
    dialog = SettingsDialog(hub.store, hub)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.activateWindow()
    until(lambda: dialog.ready and dialog.tasks.pending == 0, timeout=60)  # first: imports
    return dialog.providers


def _add_compatible(page, qtbot, name: str, url: str) -> None:
    add = next(b for b in page.findChildren(QToolButton) if b.text() == "Add provider")
    next(a for a in add.menu().actions() if a.text() == "OpenAI-compatible server").trigger()
    qtbot.keyClicks(page.name, name)
    qtbot.keyClicks(page.url, url)


def _save_by_keyboard(page, qtbot) -> None:
    page.save_button.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(page.save_button, Qt.Key.Key_Space)


def test_a_malformed_address_is_said_to_be_not_valid_and_nothing_is_tried(
    hub, page, qtbot, until, run
):
    tried = []
    real = hub.test_connection
    hub.test_connection = lambda *a, **k: (tried.append(a), real(*a, **k))[1]
    _add_compatible(page, qtbot, "Bad", BAD)
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    until(lambda: page.message.isVisible() and page.dialog.tasks.pending == 0, timeout=10)
    text = page.message.text()
    assert text.startswith(f"{NOT_SAVED} “{BAD.strip()}” is not a valid server address")
    assert "could not reach" not in text and "http:// or https://" in text
    assert not page.save_anyway.isVisible()  # nothing to save anyway
    assert tried == [] and [c.id for c in hub.configs] == ["anthropic"]
    with pytest.raises(InvalidServerAddress):  # nor through the hub ("Save anyway", scripts)
        run(hub.add_provider("openai_compatible", name="Bad", base_url=BAD))


@pytest.mark.parametrize(("address", "why"), [
    (BAD, "http:// or https://"), ("ftp://host", "http:// or https://"),
    ("http://bad url", "host name"), ("http://host:99999", "1 to 65535"),
    ("http://host:0/v1", "1 to 65535"), ("https://host:port", "1 to 65535"),
])
def test_check_server_address_says_what_is_wrong(address: str, why: str) -> None:
    with pytest.raises(InvalidServerAddress) as caught:
        check_server_address(address)
    assert why in caught.value.message and caught.value.address == address


def test_check_server_address_keeps_valid_ones_with_their_scheme() -> None:
    assert check_server_address("localhost:11434") == "http://localhost:11434"
    assert check_server_address("api.example.com/v1") == "https://api.example.com/v1"
    assert check_server_address("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert check_server_address("https://h.example:65535") == "https://h.example:65535"


def test_after_saving_the_focus_stays_on_save_provider(hub, page, qtbot, until,
                                                       fake_provider):
    _add_compatible(page, qtbot, "Ollama", fake_provider.openai_base_url)
    _save_by_keyboard(page, qtbot)
    until(lambda: page.saved_note.isVisible() and page.dialog.tasks.pending == 0, timeout=20)
    assert page.saved_note.text() == SAVED_TEXT
    assert [c.name for c in hub.configs] == ["Anthropic", "Ollama"]
    focus = QApplication.focusWidget()
    assert focus is page.save_button, focus
    assert not page.default_model.hasSelectedText()


def test_after_save_anyway_the_focus_goes_to_save_provider(hub, page, qtbot, until,
                                                            closed_port_url):
    _add_compatible(page, qtbot, "Nowhere", closed_port_url + "/v1")
    _save_by_keyboard(page, qtbot)
    until(lambda: page.save_anyway.isVisible() and page.dialog.tasks.pending == 0, timeout=20)
    assert QApplication.focusWidget() is page.save_button
    page.save_anyway.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.keyClick(page.save_anyway, Qt.Key.Key_Space)
    until(lambda: page.saved_note.isVisible() and page.dialog.tasks.pending == 0, timeout=20)
    assert not page.save_anyway.isVisible()
    assert QApplication.focusWidget() is page.save_button
    assert not page.default_model.hasSelectedText()
