"""Settings pages scroll up and down, never sideways: at the default size, with long
names and addresses, when the dialog is made narrow, and when a long text comes later."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QAbstractScrollArea, QLabel

from parley.core.workspace import Workspace
from parley.gui.settings.dialog import DEFAULT_SIZE, SettingsDialog
from tests.gui.helpers import show_section
from tests.gui.hubs import open_hub

pytestmark = pytest.mark.timeout(60)

LONG_NAME = "LM Studio on the big workstation in the lab downstairs (the one with the GPU)"
# A gateway's long address, on 127.0.0.1 (nothing listens on port 9: tests send nothing
# beyond this machine, and a model list asked of it fails at once).
GATEWAY = ("http://127.0.0.1:9/v1/0123456789abcdef0123456789abcdef/"
           "team-gateway.example-company.internal/anthropic")


@pytest.fixture
def hub(run, tmp_path, fake_provider):
    async def build() -> Workspace:
        env = {"ANTHROPIC_BASE_URL": GATEWAY, "ANTHROPIC_API_KEY": "sk-ant-test"}
        ws = await open_hub(tmp_path, env)
        await ws.hub.add_provider(
            "openai_compatible", name=LONG_NAME, base_url=fake_provider.openai_base_url,
            api_key=None, default_model="lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF")
        return ws

    ws = run(build(), timeout=30)
    yield ws.hub
    run(ws.close())


@pytest.fixture
def dialog(hub, qtbot, until):
    d = SettingsDialog(hub.store, hub)
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    until(lambda: d.ready and d.tasks.pending == 0, timeout=10)
    return d


def sideways(dialog, qtbot) -> list[str]:
    """What scrolls sideways, page by page ([] when nothing does)."""
    found = []
    for row in range(dialog.nav.count()):
        dialog.nav.setCurrentRow(row)
        qtbot.wait(60)  # the page is laid out (its scroll bars set) after it shows
        area = dialog.stack.currentWidget()
        page = area.widget()
        name = dialog.nav.item(row).text()
        if area.horizontalScrollBar().isVisible():
            found.append(f"{name}: page scroll bar")
        if page.width() > area.viewport().width():
            found.append(f"{name}: page cut ({page.width()} > {area.viewport().width()} px)")
        if page.width() < page.minimumSizeHint().width():
            found.append(f"{name}: page squeezed below its minimum")
        found += [f"{name}: {type(inner).__name__}" for inner in
                  page.findChildren(QAbstractScrollArea) if inner.isVisible()
                  and inner.horizontalScrollBar().isVisible()]
    return found


def test_no_page_scrolls_sideways_at_the_default_size(dialog, qtbot):
    assert (dialog.width(), dialog.height()) == DEFAULT_SIZE  # it fits: not grown
    assert sideways(dialog, qtbot) == []
    providers = dialog.providers.list
    (item,) = [providers.item(i) for i in range(providers.count())
               if LONG_NAME in providers.item(i).text()]
    assert LONG_NAME in item.toolTip()  # cut with "…" on screen, whole in its tooltip
    assert providers.visualItemRect(item).width() <= providers.viewport().width()


def test_the_dialog_is_never_made_so_narrow_that_a_page_scrolls_sideways(dialog, qtbot):
    dialog.resize(300, 400)
    qtbot.waitUntil(lambda: dialog.width() >= dialog.minimumSizeHint().width())
    assert dialog.width() > 300
    problems = sideways(dialog, qtbot)
    # The Keyboard table's own columns are gui/settings/keyboard.py's (not checked here).
    assert [p for p in problems if "QTableWidget" not in p] == []


def test_a_long_text_shown_later_wraps_or_widens_the_dialog(dialog, qtbot, until):
    providers = dialog.providers
    show_section(dialog, "Providers")
    area = dialog.stack.currentWidget()
    providers.keys_note.setText("API keys are kept in a file only you can read: "
                                + "C:\\Users\\" + "x" * 20 + "\\AppData\\Local\\Parley\\keys.json "
                                + "and nowhere else; " * 12)
    until(lambda: providers.keys_note.height() > 2 * providers.keys_note.fontMetrics().height())
    assert providers.keys_note.wordWrap()
    until(lambda: sideways(dialog, qtbot) == [])
    assert area.widget().width() <= area.viewport().width()


def test_a_big_system_font_widens_the_dialog_instead_of_scrolling(hub, qtbot, until):
    d = SettingsDialog(hub.store, hub)
    qtbot.addWidget(d)
    font = d.font()
    font.setPointSizeF(font.pointSizeF() * 2.2)
    d.setFont(font)
    d.show()
    qtbot.waitExposed(d)
    until(lambda: d.ready and d.tasks.pending == 0, timeout=10)
    assert d.width() >= DEFAULT_SIZE[0]
    assert [p for p in sideways(d, qtbot) if "QTableWidget" not in p] == []
    hints = [label for label in d.findChildren(QLabel) if label.objectName() == "FieldHint"]
    assert hints and all(label.wordWrap() for label in hints)


def test_tab_on_the_providers_page_goes_down_the_page(dialog, qtbot):
    """Default model → Save provider (under the fields) → Model for new chats: Tab never
    jumps back up to the top of the page in between."""
    from PySide6.QtCore import QPoint, Qt

    show_section(dialog, "Providers")
    page = dialog.providers
    qtbot.wait(60)
    page.model.setFocus(Qt.FocusReason.TabFocusReason)
    seen = [page.model]
    for _ in range(6):
        qtbot.keyClick(dialog.focusWidget(), Qt.Key.Key_Tab)
        seen.append(dialog.focusWidget())
        if seen[-1] is page.default_model:
            break
    assert seen[-1] is page.default_model, [w.accessibleName() or w.text() for w in seen]
    assert page.save_button in seen
    tops = [w.mapTo(page, QPoint(0, 0)).y() for w in seen]
    assert tops == sorted(tops), tops  # each stop is at or below the one before


def test_the_storage_page_keeps_its_parts_together_inside_the_margins(dialog, qtbot):
    """Storage's texts, fields and buttons follow each other at the top of the page (they
    were spread over its height with big gaps) and start at the margin the other pages
    have (they were flush with the page's left edge)."""
    from PySide6.QtCore import QPoint

    dialog.resize(DEFAULT_SIZE[0], DEFAULT_SIZE[1] + 300)  # room to spread into
    dialog.nav.setCurrentRow([dialog.nav.item(r).text()
                              for r in range(dialog.nav.count())].index("Storage"))
    qtbot.wait(100)
    storage = dialog.storage
    page = dialog.stack.currentWidget().widget()
    parts = [storage.where, storage.url, storage.password, storage.test_button]
    tops = [p.mapTo(page, QPoint(0, 0)).y() for p in parts]
    bottoms = [t + p.height() for t, p in zip(tops, parts, strict=True)]
    hint_h = max(label.height() for label in storage.findChildren(QLabel)
                 if label not in (storage.where, storage.status))
    assert tops[1] - bottoms[0] <= hint_h + 30  # the hint between, and spacing only
    assert all(tops[i + 1] - bottoms[i] <= 16 for i in (1, 2))
    backups = dialog.stack.widget([dialog.nav.item(r).text()
                                   for r in range(dialog.nav.count())].index("Backups"))
    first = backups.widget().layout().itemAt(0).widget()
    assert storage.where.mapTo(page, QPoint(0, 0)).x() == first.mapTo(
        backups.widget(), QPoint(0, 0)).x() > 0


@pytest.mark.usefixtures("scheme")
def test_the_theme_list_opens_under_its_box_with_every_entry_shown(dialog, qtbot):
    """The app look's menu-like popup, laid over the box, showed two of the three themes
    and a scroll arrow (under X11): a plain list opens under the box instead."""
    from PySide6.QtCore import QPoint

    combo = dialog.editors["appearance.theme"].input
    dialog.nav.setCurrentRow([dialog.nav.item(r).text()
                              for r in range(dialog.nav.count())].index("Appearance"))
    qtbot.wait(100)
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    container = view.window()
    assert container.mapToGlobal(QPoint(0, 0)).y() >= combo.mapToGlobal(
        QPoint(0, combo.height())).y() - 1
    area = view.viewport().rect()
    for row in range(combo.count()):
        assert area.contains(view.visualRect(combo.model().index(row, 0)))
    combo.hidePopup()
