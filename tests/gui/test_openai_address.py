""""OpenAI" typed with another server's address is a compatible server, in the window.

Driven like a person: the first-run panel and Settings → Providers, with OpenAI chosen and
the fake provider server's address typed — the fake playing a llama.cpp server (its model
id a file path, a 2,048-token window in ``/props``, no usage chunk). The hint says what
the address means, the server's own models are offered, and a message goes out as a
compatible server takes it. Real sessions.db, real SDK, real HTTP on 127.0.0.1.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from parley.gui.startup.setup_panel import COMPATIBLE_HINT, NOT_OPENAI_HINT

LEFT = Qt.MouseButton.LeftButton
TINY = "/models/SmolLM2-135M-Instruct-Q8_0.gguf"


def llamacpp(fake) -> None:
    fake.openai_models = [{"id": TINY}]
    fake.windows.llamacpp(2_048)
    fake.windows.usage_chunk = False


def test_first_run_openai_at_a_local_address_sets_up_that_server(driver, qtbot, until):
    fake = driver.fake
    llamacpp(fake)
    w = driver.open()
    panel = w.setup_panel
    qtbot.mouseClick(panel.kind_buttons[1], LEFT)  # OpenAI
    panel.custom_url.setChecked(True)
    assert not panel.url_hint.isVisible()
    qtbot.keyClicks(panel.url_edit, fake.openai_own_url)  # OpenAI's own address (the fake)
    assert not panel.url_hint.isVisible() and panel.key_label.text() == "API key"
    panel.url_edit.clear()
    qtbot.keyClicks(panel.url_edit, fake.openai_base_url)
    assert panel.url_hint.isVisible() and panel.url_hint.text() == NOT_OPENAI_HINT
    assert panel.key_label.text() == "API key (optional)"  # a local server needs none

    qtbot.mouseClick(panel.test_button, LEFT)
    until(lambda: panel.model_combo.count() > 0, timeout=30)
    offered = [panel.model_combo.itemData(i) for i in range(panel.model_combo.count())]
    assert offered == [TINY]  # the server's model, not a list of gpt-*
    qtbot.mouseClick(panel.start_button, LEFT)
    until(lambda: w.stack.currentWidget() is w.chat_page and w.tasks.pending == 0, timeout=30)
    assert w.hub.config("openai").kind == "openai_compatible"

    driver.send("Count to ten.", wait=True)
    chat = fake.model_requests[0].body
    assert chat["model"] == TINY and 256 <= chat["max_tokens"] <= 2_048
    assert "tools" not in chat and "max_completion_tokens" not in chat
    assert chat["messages"][0]["role"] == "user"  # no memory/skills tool instructions
    assert "400k" not in w.context_meter.label.text()

    qtbot.mouseClick(panel.kind_buttons[2], LEFT)  # the compatible kind: its usual hint
    assert panel.url_hint.text() == COMPATIBLE_HINT


def test_settings_says_what_an_openai_provider_at_a_local_address_is(driver, qtbot, until):
    llamacpp(driver.fake)
    window = driver.configured()
    dialog = window.window_commands.open_settings()
    until(lambda: dialog.ready and dialog.tasks.pending == 0, timeout=30)
    page = dialog.providers
    add = next(b for b in page.findChildren(QToolButton) if b.text() == "Add provider")
    next(a for a in add.menu().actions() if a.text() == "OpenAI").trigger()
    assert page.url_hint.text() == "Empty: the usual address."
    qtbot.keyClicks(page.url, driver.fake.openai_base_url)
    assert page.url_hint.text() == NOT_OPENAI_HINT
    qtbot.mouseClick(page.save_button, LEFT)

    until(lambda: f"openai:{TINY}" in [c.ref for c in window.model_picker.choices],
          timeout=30)
    assert not any(c.ref.startswith("openai:gpt-") for c in window.model_picker.choices)
    labels = [page.list.item(i).text() for i in range(page.list.count())]
    assert "OpenAI-compatible server" in labels and "OpenAI" not in labels
    page.list.setCurrentRow(labels.index("OpenAI-compatible server"))
    until(lambda: "2,048 tokens" in page.limits_hint.text(), timeout=30)  # from /props
    assert page.window_field.isVisible()  # editable, as for any compatible server
    dialog.close()


def test_an_address_without_http_connects_and_says_what_was_used(driver, qtbot, until):
    """The trial: a custom URL ``localhost:8766`` (the server running) was "could not
    reach"; it connects, and the status names the address used."""
    fake = driver.fake
    w = driver.open()
    panel = w.setup_panel
    qtbot.mouseClick(panel.kind_buttons[1], LEFT)  # OpenAI, at a custom address
    panel.custom_url.setChecked(True)
    bare = fake.openai_base_url.removeprefix("http://").replace("127.0.0.1", "localhost")
    qtbot.keyClicks(panel.url_edit, bare)
    qtbot.mouseClick(panel.test_button, LEFT)
    until(lambda: panel.model_combo.count() > 0, timeout=30)
    assert f"Connected to http://{bare}" in panel.status.text()
