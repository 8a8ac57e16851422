"""``OPENAI_BASE_URL`` naming a server other than OpenAI's is an OpenAI-compatible server.

A fresh home with ``OPENAI_BASE_URL`` at the fake server (playing llama-cpp-python's server:
its model is a file path, no window told) and ``OPENAI_API_KEY`` set: the real window
offers the server's own model, sends what a compatible server takes (``max_tokens``, no
tools, no OpenAI-only parameters), shows no OpenAI window or prompt-cache timer, and
Settings → Providers names it as it is. Real sessions.db, real SDK, the fake server.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from parley.core.providers.registry import builtin_providers, is_openai_url
from parley.gui.settings.providers import ENV_COMPATIBLE_LABEL
from tests.gui.helpers import problem_boxes

TINY = "/models/SmolLM2-135M-Instruct-Q8_0.gguf"


def test_only_openais_address_is_openai():
    assert is_openai_url("https://api.openai.com/v1")
    assert not is_openai_url("http://127.0.0.1:8794/v1")
    assert not is_openai_url("https://api.openai.com.example.net/v1")
    openai = {c.id: c for c in builtin_providers({"OPENAI_BASE_URL": "https://api.openai.com/v1"})}
    assert openai["openai"].kind == "openai"
    local = {c.id: c for c in builtin_providers({"OPENAI_BASE_URL": "http://127.0.0.1:8794/v1"})}
    assert local["openai"].kind == "openai_compatible" and local["openai"].default_model is None


def test_a_local_server_behind_openai_base_url_is_not_treated_as_openai(driver, until):
    fake = driver.fake
    fake.openai_models = [{"id": TINY}, {"id": "second-model"}]
    fake.windows.llamacpp(2_048, overflow="llamacpp_python")
    w = driver.open(env={"OPENAI_BASE_URL": fake.openai_base_url, "OPENAI_API_KEY": "x"})
    until(lambda: w.stack.currentWidget() is w.chat_page, timeout=10)
    until(lambda: w.hub.default_model_ref() == f"openai:{TINY}", timeout=10)  # its first model

    driver.send("Hello there", wait=True)

    chats = fake.model_requests
    assert chats and all(r.body["model"] == TINY for r in chats)
    for r in chats:  # the chat and the title request alike
        assert "max_tokens" in r.body and "max_completion_tokens" not in r.body
        assert "reasoning_effort" not in r.body
    assert "tools" not in chats[0].body  # tools off by default on a compatible server
    meter = w.context_meter.label.text()
    assert "400k" not in meter and "cache warm" not in meter
    assert "gpt-5" not in [c.ref.split(":", 1)[1] for c in w.model_picker.choices]

    dialog = w.window_commands.open_settings()
    until(lambda: dialog.ready and dialog.tasks.pending == 0, timeout=10)
    page = dialog.providers
    labels = [page.list.item(i).text() for i in range(page.list.count())]
    assert labels == [ENV_COMPATIBLE_LABEL]
    assert "from the environment" in page.url_hint.text()
    until(lambda: "8,192 tokens" in page.limits_hint.text())  # the server does not say
    dialog.close()


def test_the_header_shows_the_servers_model_once_it_is_listed(driver, until):
    """Only ``OPENAI_BASE_URL`` (no key, no provider saved): the picker shows the model the
    server lists, not "No model", before and after a message is sent."""
    fake = driver.fake
    fake.openai_models = [{"id": TINY}]
    w = driver.open(env={"OPENAI_BASE_URL": fake.openai_base_url})
    until(lambda: w.stack.currentWidget() is w.chat_page, timeout=10)
    until(lambda: w.model_picker.current == f"openai:{TINY}", timeout=10)
    assert w.model_picker.text() != "No model"
    assert "0 tokens" not in w.context_meter.label.text()

    driver.send("Hello there", wait=True)
    assert w.model_picker.current == f"openai:{TINY}" and w.model_picker.text() != "No model"


def test_a_server_that_cannot_be_reached_is_named_and_the_message_kept(
        driver, until, closed_port_url):
    """``OPENAI_BASE_URL`` where nothing listens: the greeting and a send say the server
    at that address cannot be reached (not "choose a model"), and the typed text stays."""
    url = closed_port_url + "/v1"
    w = driver.open(env={"OPENAI_BASE_URL": url})
    until(lambda: w.stack.currentWidget() is w.chat_page, timeout=10)
    until(lambda: w.model_picker.problems, timeout=20)
    until(lambda: f"could not reach {url} (from OPENAI_BASE_URL)" in w.greeting.text())
    (problem,) = w.model_picker.problems
    note = problem.note
    assert url in note  # the menu says where it tried

    driver.send("Are you there?")
    until(lambda: problem_boxes(w))
    (box,) = problem_boxes(w)
    assert f"could not reach {url} (from OPENAI_BASE_URL)" in box.text()
    assert "Check the address, and that the server is running" in box.text()
    assert w.composer.toPlainText() == "Are you there?"


def test_a_message_over_the_servers_window_says_why_now_and_after_a_restart(driver, until):
    """llama-cpp-python with ``--n_ctx 2048`` (no /props): a ~4,600-token first message is
    refused; the window learnt stays over a restart, and the unanswered message then says
    why it was not answered (not a bare "Not sent")."""
    fake = driver.fake
    fake.openai_models = [{"id": TINY}]
    fake.windows.llamacpp(2_048, overflow="llamacpp_python")
    env = {"OPENAI_BASE_URL": fake.openai_base_url}
    w = driver.open(env=env)
    until(lambda: w.model_picker.current == f"openai:{TINY}", timeout=10)
    text = " ".join(f"word{i}" for i in range(4_600))
    w.composer.set_text(text)
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until(lambda: "too long" in driver.error_text(w), timeout=20)
    assert "The newest message is too long" in driver.error_text(w)  # issue 30 wording
    assert "2,048" in driver.error_text(w) and "compacting" not in driver.error_text(w)
    until(lambda: "2k" in w.context_meter.label.text(), timeout=10)
    driver.settle(w)
    driver.close(w)

    again = driver.open(env=env)
    until(lambda: again.chat.session_id is not None and again.chat.turns, timeout=10)
    assert again.hub.model_info(f"openai:{TINY}").context_window == 2_048
    until(lambda: "2k" in again.context_meter.label.text(), timeout=10)
    until(lambda: driver.error_text(again), timeout=10)
    assert "too long" in driver.error_text(again) and "2,048" in driver.error_text(again)
