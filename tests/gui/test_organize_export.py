"""Export and import on the real window: the four formats written, the three JSON forms
read back as new chats, and a file that is not a conversation refused with its reason."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QMessageBox

from parley.core.content import TextBlock, ThinkingBlock, Turn
from parley.core.convert.history import FORMAT_NAMES
from parley.gui.dialogs import export_dialog, import_dialog

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _no_scripted_files():
    yield
    export_dialog.answers.clear()


def _chat(driver, w):
    s = driver.run(w.store.create_session(title="Soup recipes", system_prompt="Be a chef."))
    for turn in (Turn("user", [TextBlock("How do I make gazpacho?")]),
                 Turn("assistant", [ThinkingBlock("cold soup", "sig"),
                                    TextBlock("Blend tomatoes, cucumber and bread.")])):
        driver.run(w.store.append_turn(s.id, turn))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    return s.id


def _problems(w) -> list[str]:
    return [b.text() for b in w.findChildren(QMessageBox) if b.isVisible()]


def test_export_every_format_then_import_the_json_ones(driver, tmp_path):
    w = driver.configured()
    sid = _chat(driver, w)
    written = {}
    for fmt in ("markdown", "parley", "anthropic", "openai"):
        export_dialog.answers.append((fmt, tmp_path / f"soup-{fmt}"))
        assert w.window_commands.export_session() is True
        driver.until(lambda f=fmt: "Exported to soup-" + f in w.toast.message)
        written[fmt] = w.toast.message
    md = (tmp_path / "soup-markdown.md").read_text(encoding="utf-8")
    assert "gazpacho" in md and "Soup recipes" in md
    anthropic = json.loads((tmp_path / "soup-anthropic.anthropic.json").read_text("utf-8"))
    assert anthropic["system"] == "Be a chef."
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant"]
    openai = json.loads((tmp_path / "soup-openai.openai.json").read_text("utf-8"))
    assert openai["messages"][0] == {"role": "system", "content": "Be a chef."}
    assert "thinking" in written["openai"]  # what the format could not carry is said
    for fmt, name in (("parley", "soup-parley.parley.json"),
                      ("anthropic", "soup-anthropic.anthropic.json"),
                      ("openai", "soup-openai.openai.json")):
        export_dialog.answers.append(tmp_path / name)
        assert w.window_commands.import_conversation() is True
        driver.until(lambda: w.session_id != sid and "Imported" in w.toast.message)
        new = w.session_id
        turns = driver.run(w.store.get_turns(new))
        assert [t.role for t in turns][:2] == ["user", "assistant"], fmt
        assert "gazpacho" in turns[0].text()
        assert w.sidebar.model.has(new)
        assert f"from {FORMAT_NAMES[fmt]}." in w.toast.message  # "Parley's JSON export"…
        w.chat.open_session(sid)
        driver.until(lambda: w.session_id == sid)
    assert len(driver.run(w.store.list_sessions())) == 4


def test_a_file_that_is_not_a_conversation_is_refused_with_a_reason(driver, tmp_path):
    w = driver.configured()
    bad = tmp_path / "config.json"
    bad.write_text('{"theme": "dark", "fontSize": 12}', encoding="utf-8")
    export_dialog.answers.append(bad)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _problems(w))
    assert "not a conversation" in _problems(w)[0]
    assert driver.run(w.store.list_sessions()) == []
    export_dialog.answers.append(tmp_path / "missing.json")
    w.window_commands.import_conversation()
    driver.until(lambda: any("could not read" in p for p in _problems(w)))


def test_cancelled_dialogs_do_nothing(driver):
    w = driver.configured()
    _chat(driver, w)
    export_dialog.answers.extend([None, None])
    assert w.window_commands.export_session() is False
    assert w.window_commands.import_conversation() is False


def test_export_from_the_sidebar_menu(driver, tmp_path):
    w = driver.configured()
    sid = _chat(driver, w)
    export_dialog.answers.append(("markdown", tmp_path / "menu.md"))
    w.sidebar.export_requested.emit(sid)
    driver.until(lambda: (tmp_path / "menu.md").exists())


def test_the_import_dialog_starts_where_the_last_export_went(driver, tmp_path, monkeypatch):
    w = driver.configured()
    _chat(driver, w)
    folder = tmp_path / "exports"
    folder.mkdir()
    export_dialog.answers.append(("markdown", folder / "soup.md"))
    assert export_dialog.export_chat(w, w)
    driver.until(lambda: (folder / "soup.md").exists() and w.tasks.pending == 0)

    started_in: list[str] = []

    def dialog(_parent, _title, directory, _filter):  # the person cancels
        started_in.append(directory)
        return "", ""

    monkeypatch.setattr(import_dialog.QFileDialog, "getOpenFileName", dialog)
    assert not import_dialog.import_chat(w, w)
    assert started_in == [str(folder)]
