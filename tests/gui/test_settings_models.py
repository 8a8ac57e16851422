"""Settings, driven like a person: the summary-model field, provider changes reaching the
model picker at once, and what "Save provider" says (real sessions.db, real keys file,
the real SDKs against the fake provider server)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QToolButton

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store.async_store import AsyncStore
from parley.gui import dialogs
from parley.gui.settings.dialog import SettingsDialog
from parley.gui.settings.providers import KEY_SAVED_PLACEHOLDER, SAVED_TEXT

LEFT = Qt.MouseButton.LeftButton
SUMMARY_MODEL = "compaction.model"
FAKE_CLAUDES = ["anthropic:claude-sonnet-4-6", "anthropic:claude-opus-4-6",
                "anthropic:claude-haiku-4-5", "anthropic:claude-opus-4-1"]


class MemoryKeyring:
    """Stands in for the OS keyring (none on CI): same interface as ``KeyringBackend``."""

    name = "keyring"

    def __init__(self) -> None:
        self.keys: dict[str, str] = {}

    def get(self, provider_id: str) -> str | None:
        return self.keys.get(provider_id)

    def set(self, provider_id: str, key: str) -> None:
        self.keys[provider_id] = key

    def delete(self, provider_id: str) -> None:
        self.keys.pop(provider_id, None)

    def describe(self) -> str:
        return "the system keyring (test)"


@pytest.fixture
def make_hub(run, tmp_path, fake_provider):
    """``make_hub(backend)``: a store and a hub with Anthropic set up (closed at the end)."""
    opened = []

    def make(backend=None):
        async def build():
            store = await AsyncStore.open(tmp_path / f"sessions{len(opened)}.db")
            keys = KeyStore(backend=backend or FileBackend(tmp_path / "keys.json"), environ={})
            hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
            await hub.load()
            await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                                   api_key="sk-ant-test", default_model="claude-haiku-4-5")
            return store, hub

        store, hub = run(build(), timeout=30)
        opened.append((store, hub))
        return hub

    yield make
    for store, hub in opened:
        run(hub.aclose())
        run(store.close())


@pytest.fixture
def open_dialog(qtbot, until):
    def make(hub):
        d = SettingsDialog(hub.store, hub)
        qtbot.addWidget(d)
        d.show()
        until(lambda: d.ready and d.tasks.pending == 0)
        return d

    return make


def show_section(qtbot, dialog, name: str) -> None:
    item = dialog.nav.findItems(name, Qt.MatchFlag.MatchExactly)[0]
    qtbot.mouseClick(dialog.nav.viewport(), LEFT, pos=dialog.nav.visualItemRect(item).center())


def type_into(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    if text:
        qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def items(combo: QComboBox) -> list[str]:
    """The references the combo offers (item data; its entries show display names)."""
    return [combo.itemData(i) for i in range(combo.count())]


def test_summary_model_offers_known_models_and_refuses_a_provider_not_set_up(
    make_hub, open_dialog, qtbot, until, run
):
    hub = make_hub()
    dialog = open_dialog(hub)
    show_section(qtbot, dialog, "Compaction")
    editor = dialog.editors[SUMMARY_MODEL]
    combo = editor.input
    assert isinstance(combo, QComboBox) and combo.isEditable()
    assert combo.currentText() == "" and combo.lineEdit().placeholderText() == "Automatic"
    until(lambda: items(combo) == FAKE_CLAUDES)  # the model picker's list
    assert "Claude Haiku 4.5" in combo.itemData(2, Qt.ItemDataRole.ToolTipRole)
    # issue 30: entries show display names, not raw ids
    assert combo.itemText(2) == "Claude Haiku 4.5"
    assert not any(":" in combo.itemText(i) for i in range(combo.count()))

    type_into(qtbot, combo.lineEdit(), "openai:gpt-4o")
    assert editor.error.isVisible()
    assert "names the provider 'openai', which is not set up" in editor.error.text()
    assert combo.currentText() == "openai:gpt-4o"  # kept, to be corrected
    until(lambda: dialog.tasks.pending == 0)
    assert run(hub.store.get_setting(SUMMARY_MODEL)) is None  # nothing saved
    assert items(combo) == FAKE_CLAUDES  # typing added no entry

    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # pick from the list
    picked = combo.currentData()
    assert picked in FAKE_CLAUDES and not editor.error.isVisible()
    assert combo.currentText() == combo.itemText(combo.currentIndex())  # its name shows
    until(lambda: run(hub.store.get_setting(SUMMARY_MODEL)) == picked)  # the id is saved
    combo.lineEdit().setFocus()
    combo.lineEdit().editingFinished.emit()  # leaving the field keeps the id, not the name
    until(lambda: dialog.tasks.pending == 0)
    assert run(hub.store.get_setting(SUMMARY_MODEL)) == picked

    reopened = open_dialog(hub)  # a saved id is shown by its name
    show_section(qtbot, reopened, "Compaction")
    again = reopened.editors[SUMMARY_MODEL].input
    until(lambda: items(again) == FAKE_CLAUDES and again.currentText()
          == again.itemText(FAKE_CLAUDES.index(picked)))
    reopened.close()

    type_into(qtbot, combo.lineEdit(), "claude-opus-4-6")  # free text: the chat's provider
    until(lambda: run(hub.store.get_setting(SUMMARY_MODEL)) == "claude-opus-4-6")
    type_into(qtbot, combo.lineEdit(), "")  # empty: automatic again
    until(lambda: run(hub.store.get_setting(SUMMARY_MODEL)) is None)
    assert not editor.error.isVisible()


def test_a_provider_added_in_settings_reaches_the_model_picker_at_once(driver, qtbot, until):
    window = driver.configured()
    until(lambda: window.model_picker.choices and window.tasks.pending == 0, timeout=10)
    assert not any("llama3.2:3b" in c.ref for c in window.model_picker.choices)
    dialog = window.window_commands.open_settings()
    until(lambda: dialog.ready and dialog.tasks.pending == 0, timeout=10)
    page = dialog.providers

    add = next(b for b in page.findChildren(QToolButton) if b.text() == "Add provider")
    next(a for a in add.menu().actions() if a.text() == "OpenAI-compatible server").trigger()
    assert page.key_hint.text() == (
        "Saved in Parley's key file (only you can read it), never in sessions.db.")
    qtbot.keyClicks(page.name, "Ollama")
    qtbot.keyClicks(page.url, driver.fake.openai_base_url)
    qtbot.mouseClick(page.save_button, LEFT)

    until(lambda: "ollama:llama3.2:3b" in [c.ref for c in window.model_picker.choices],
          timeout=10)
    labels = [a.text() for a in window.model_picker.menu().actions()]
    assert "llama3.2:3b" in labels and "Ollama" in labels  # the entry, under its provider
    assert page.saved_note.isVisible() and page.saved_note.text() == SAVED_TEXT
    summary = dialog.editors[SUMMARY_MODEL].input
    until(lambda: "ollama:llama3.2:3b" in items(summary))

    dialogs.answers.append(True)  # "Remove Ollama and its saved key?"
    qtbot.mouseClick(page.remove_button, LEFT)
    until(lambda: not any(c.ref.startswith("ollama:") for c in window.model_picker.choices)
          and window.model_picker.choices, timeout=10)
    dialog.close()


def test_save_provider_confirms_and_the_key_field_says_a_key_is_saved(
    make_hub, open_dialog, qtbot, until, run
):
    hub = make_hub()
    dialog = open_dialog(hub)
    page = dialog.providers
    assert page.selected_id() == "anthropic"
    assert page.key.text() == "" and page.key.placeholderText() == KEY_SAVED_PLACEHOLDER
    assert not page.saved_note.isVisible()

    type_into(qtbot, page.key, "sk-ant-new-key")  # Enter commits nothing: Save does
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.saved_note.isVisible())
    assert page.saved_note.text() == SAVED_TEXT
    assert page.key.text() == "" and page.key.placeholderText() == KEY_SAVED_PLACEHOLDER
    assert "saved in Parley's key file" in page.key_hint.text()
    key = run(hub._in_keys_thread(hub.keys.get, "anthropic"))
    assert key is not None and key.value == "sk-ant-new-key"

    qtbot.keyClicks(page.name, " 2")  # editing again: the confirmation goes
    assert not page.saved_note.isVisible()


def test_the_key_wording_follows_where_keys_really_go(make_hub, open_dialog):
    file_dialog = open_dialog(make_hub())
    page = file_dialog.providers
    assert "keys.json" in page.keys_note.text()
    page.start_new("openai")
    assert "Parley's key file" in page.key_hint.text()
    assert "keyring" not in page.key_hint.text()

    keyring_dialog = open_dialog(make_hub(MemoryKeyring()))
    page = keyring_dialog.providers
    assert "system keyring" in page.keys_note.text()
    assert page.key_hint.text() == "Key: saved in the keyring."
    page.start_new("openai")
    assert page.key_hint.text() == "Saved in the system keyring, never in sessions.db."


def test_the_default_models_limits_show_with_where_they_came_from(
    make_hub, open_dialog, fake_provider, until
):
    fake_provider.anthropic_models = [{"id": "claude-haiku-4-5", "display_name": "Haiku",
                                       "max_input_tokens": 150_000}]  # no output limit listed
    dialog = open_dialog(make_hub())
    page = dialog.providers
    until(lambda: "150,000" in page.limits_hint.text())
    text = page.limits_hint.text()
    assert "Context window 150,000 tokens (reported by Anthropic)" in text
    assert "replies up to 64,000 tokens (from Parley's model catalog)" in text
    assert page.limits_hint.isVisible()


def test_a_compatible_servers_unknown_window_can_be_set_and_says_where_it_came_from(
    make_hub, open_dialog, fake_provider, run, until, qtbot
):
    tiny = "/models/SmolLM2-135M-Instruct-Q8_0.gguf"  # llama-cpp-python: no window told
    fake_provider.openai_models = [{"id": tiny}]
    fake_provider.windows.llamacpp(2_048, overflow="llamacpp_python")
    hub = make_hub()
    run(hub.add_provider("openai_compatible", name="Local server", provider_id="local",
                         base_url=fake_provider.openai_base_url, default_model=tiny))
    dialog = open_dialog(hub)
    page = dialog.providers
    page.list.setCurrentRow([c.id for c in hub.configs].index("local"))
    until(lambda: "Local server does not say" in page.limits_hint.text())
    assert "8,192 tokens (a safe default" in page.limits_hint.text()
    field = page.window_field
    assert field.isVisible() and field.edit.text() == "8192"

    type_into(qtbot, field.edit, "20 tokens")
    until(lambda: field.error.isVisible())
    assert "whole number" in field.error.text()
    type_into(qtbot, field.edit, "2,048")
    until(lambda: "2,048 tokens (set here" in page.limits_hint.text())
    assert not field.error.isVisible()
    assert run(hub.store.get_setting("model_overrides", {})) == {tiny: {"context_window": 2048}}
    info = hub.model_info(f"local:{tiny}")
    assert (info.context_window, info.window_source) == (2_048, "settings")

    type_into(qtbot, field.edit, "")  # empty: back to what the server says, or the default
    until(lambda: "8,192 tokens (a safe default" in page.limits_hint.text())
    assert run(hub.store.get_setting("model_overrides", {})) == {}
    page.list.setCurrentRow([c.id for c in hub.configs].index("anthropic"))
    until(lambda: not field.isVisible())  # Anthropic's window comes from its model list
