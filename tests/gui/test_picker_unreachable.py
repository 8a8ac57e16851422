"""A provider that cannot be reached stays in the model picker (with why), the picker groups
models under provider names, and saving a provider in Settings tests its connection first
(real sessions.db, real keys file, the real SDKs against the fake provider server and a
closed loopback port)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from parley.core.workspace import Workspace
from parley.gui.header.model_picker import ModelPicker, model_choices
from parley.gui.settings.dialog import SettingsDialog
from parley.gui.settings.providers import NOT_SAVED, SAVED_TEXT
from tests.gui.hubs import open_hub

LEFT = Qt.MouseButton.LeftButton


def menu_lines(picker) -> list[tuple[str, str]]:
    """The picker's menu as (kind, text): heading / note / model / separator."""
    lines = []
    for act in picker.menu().actions():
        if act.isSeparator():
            lines.append(("separator", ""))
        elif act.data():
            lines.append(("model", act.text()))
        else:
            lines.append(("note" if act.objectName() == "ModelMenuNote" else "heading",
                          act.text()))
    return lines


def test_an_unreachable_provider_stays_in_the_picker_with_its_model_and_why(
    driver, run, closed_port_url
):
    w = driver.configured()
    run(w.hub.add_provider("openai_compatible", name="broken-url",
                           base_url=closed_port_url + "/v1", default_model="mymodel"), timeout=10)
    run(w.chat.models.refresh_models(), timeout=20)

    lines = menu_lines(w.model_picker)
    at = lines.index(("heading", "broken-url"))
    assert lines[at - 1] == ("separator", "")
    assert lines[at + 1] == ("note", "can't connect — server not reachable at "
                                     f"{closed_port_url}/v1")
    assert lines[at + 2] == ("model", "mymodel")
    entry = next(a for a in w.model_picker.menu().actions() if a.text() == "mymodel")
    assert entry.isEnabled() and "could not reach" in entry.toolTip()
    assert "broken-url:mymodel" in [c.ref for c in w.model_picker.choices]
    assert "broken-url:mymodel" in [ref for _label, ref in w.chat.regen.model_choices()]

    chosen = []
    w.model_picker.model_chosen.connect(chosen.append)
    entry.trigger()  # selectable: sending then gives the provider's error, with Retry
    assert chosen == ["broken-url:mymodel"] and w.model_picker.text() == "mymodel"


def test_the_menu_puts_models_under_their_provider_without_a_stray_separator(
    driver, run, fake_provider
):
    w = driver.configured()
    run(w.hub.add_provider("openai_compatible", name="Ollama",
                           base_url=fake_provider.openai_base_url), timeout=10)
    run(w.chat.models.refresh_models(), timeout=20)

    lines = menu_lines(w.model_picker)
    assert lines[0] == ("heading", "Anthropic")  # no separator before the first provider
    assert [t for kind, t in lines if kind == "heading"] == ["Anthropic", "Ollama"]
    ollama = lines.index(("heading", "Ollama"))
    assert [kind for kind, _t in lines[1:ollama - 1]] == ["model"] * (ollama - 2)
    assert lines[ollama - 1] == ("separator", "")
    assert ("model", "llama3.2:3b") in lines[ollama:]
    assert sum(kind == "separator" for kind, _t in lines) == 1
    headings = [a for a in w.model_picker.menu().actions() if a.text() == "Anthropic"]
    assert not headings[0].isEnabled()  # a name, never chosen


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
    until(lambda: dialog.ready and dialog.tasks.pending == 0)
    return dialog.providers


def test_an_unreachable_provider_with_no_model_set_still_shows_its_name_and_why(
    hub, qtbot, run, closed_port_url
):
    run(hub.add_provider("openai_compatible", name="Nowhere", base_url=closed_port_url),
        timeout=10)
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_choices(run(model_choices(hub), timeout=20))
    lines = menu_lines(picker)
    assert lines[-3:] == [("separator", ""), ("heading", "Nowhere"),
                          ("note", "can't connect — server not reachable at "
                                   f"{closed_port_url}/v1")]
    assert all(c.ref.startswith("anthropic:") for c in picker.choices)  # nothing to pick


def add_compatible(page, qtbot, name: str, url: str, model: str = "") -> None:
    add = next(b for b in page.findChildren(QToolButton) if b.text() == "Add provider")
    next(a for a in add.menu().actions() if a.text() == "OpenAI-compatible server").trigger()
    qtbot.keyClicks(page.name, name)
    qtbot.keyClicks(page.url, url)
    if model:
        qtbot.keyClicks(page.model, model)


def test_saving_an_unreachable_provider_says_so_and_offers_save_anyway(
    hub, page, qtbot, until, run, closed_port_url
):
    add_compatible(page, qtbot, "broken-url", closed_port_url + "/v1", "mymodel")
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.message.isVisible() and page.dialog.tasks.pending == 0, timeout=10)
    assert page.message.text().startswith(f"{NOT_SAVED} Parley could not reach "
                                          f"{closed_port_url}/v1. Check the address")
    assert page.save_anyway.isVisible() and not page.saved_note.isVisible()
    assert [c.id for c in hub.configs] == ["anthropic"]  # nothing saved yet

    qtbot.mouseClick(page.save_anyway, LEFT)
    until(lambda: page.saved_note.isVisible() and page.dialog.tasks.pending == 0, timeout=10)
    assert page.saved_note.text() == SAVED_TEXT
    assert not page.message.isVisible() and not page.save_anyway.isVisible()
    assert [c.name for c in hub.configs] == ["Anthropic", "broken-url"]
    until(lambda: any(c.ref == "broken-url:mymodel" for c in page.dialog.models), timeout=10)
    mine = next(c for c in page.dialog.models if c.ref == "broken-url:mymodel")
    assert mine.note == f"can't connect — server not reachable at {closed_port_url}/v1"


def test_fixing_the_address_after_a_failed_test_saves_at_once(
    hub, page, qtbot, until, fake_provider, closed_port_url
):
    add_compatible(page, qtbot, "Ollama", closed_port_url + "/v1")
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.save_anyway.isVisible(), timeout=10)

    page.url.selectAll()
    qtbot.keyClicks(page.url, fake_provider.openai_base_url)  # the fix: the offer goes
    assert not page.save_anyway.isVisible() and not page.message.isVisible()
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.saved_note.isVisible() and page.dialog.tasks.pending == 0, timeout=10)
    assert [c.name for c in hub.configs] == ["Anthropic", "Ollama"]
    assert not page.message.isVisible() and not page.save_anyway.isVisible()


@pytest.mark.parametrize("saved_key", ["sk-local", "sk-stale"])
def test_the_test_uses_the_saved_key_when_the_key_field_is_left_empty(
    hub, qtbot, until, run, fake_provider, saved_key
):
    fake_provider.valid_keys = {"sk-ant-test", "sk-local"}
    run(hub.add_provider("openai_compatible", name="Local", api_key=saved_key,
                         base_url=fake_provider.openai_base_url), timeout=10)
    dialog = SettingsDialog(hub.store, hub)
    qtbot.addWidget(dialog)
    dialog.show()
    until(lambda: dialog.ready and dialog.tasks.pending == 0)
    page = dialog.providers
    page.list.setCurrentRow(1)
    until(lambda: page.name.text() == "Local" and dialog.tasks.pending == 0)
    assert page.key.text() == ""  # the saved key is kept, not shown

    qtbot.keyClicks(page.name, " server")
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.saved_note.isVisible() or page.message.isVisible(), timeout=10)
    names = [c.name for c in hub.configs]
    if saved_key == "sk-local":  # tried with the saved key, which works: saved
        assert not page.message.isVisible(), page.message.text()
        assert "Local server" in names
    else:  # the saved key is refused: said, and not saved yet
        assert page.message.text().startswith(f"{NOT_SAVED} The key was refused.")
        assert page.message.text().endswith("then save again.")
        assert page.save_anyway.isVisible() and "Local server" not in names


def test_a_compatible_server_without_an_address_is_not_offered_save_anyway(page, qtbot, until):
    add_compatible(page, qtbot, "Nowhere", "")
    qtbot.mouseClick(page.save_button, LEFT)
    until(lambda: page.message.isVisible() and page.dialog.tasks.pending == 0, timeout=10)
    assert "Enter the server's address" in page.message.text()
    assert not page.save_anyway.isVisible()  # saving it as it is would fail the same way


def test_a_model_two_providers_offer_shows_once_under_each_with_its_providers_name(
    driver, run, fake_provider
):
    w = driver.configured()
    for name in ("Ollama", "LM Studio"):  # two servers listing the same models
        run(w.hub.add_provider("openai_compatible", name=name,
                               base_url=fake_provider.openai_base_url), timeout=10)
    run(w.chat.models.refresh_models(), timeout=20)

    labels = [text for kind, text in menu_lines(w.model_picker) if kind == "model"]
    assert len(labels) == len(set(labels))  # no two models under one name
    assert "llama3.2:3b (Ollama)" in labels and "llama3.2:3b (LM Studio)" in labels
    refs = [c.ref for c in w.model_picker.choices]
    assert len(refs) == len(set(refs))
    entry = next(a for a in w.model_picker.menu().actions()
                 if a.text() == "llama3.2:3b (LM Studio)")
    entry.trigger()
    assert w.model_picker.text() == "llama3.2:3b (LM Studio)"  # the button tells them apart


def test_distinct_names_models_apart_and_lists_each_once():
    from parley.gui.header.model_picker import ModelChoice, distinct

    got = distinct([
        ModelChoice("a:m1", "Model", "A"), ModelChoice("a:m1", "Model", "A"),
        ModelChoice("a:m2", "Model", "A"), ModelChoice("b:m1", "Model", "B"),
        ModelChoice("b:x", "X", "B"), ModelChoice("", "", "C", note="can't connect"),
    ])
    assert [(c.ref, c.label) for c in got] == [
        ("a:m1", "Model (A, m1)"), ("a:m2", "Model (A, m2)"), ("b:m1", "Model (B)"),
        ("b:x", "X"), ("", ""),
    ]
