"""Dialogs look like the rest of Parley and are big enough to read: the rename box shows
a whole title, selected; message boxes and the space dialog are not tiny; fields and
buttons in dialogs take the app's colours, with a rounded focus ring instead of a square
accent frame (the app's style sheet applied as ``parley.gui.app`` does; pixels read back)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QCheckBox, QLabel, QMessageBox, QWidget

from parley.gui import dialogs
from parley.gui.dialogs import MESSAGE_MIN_WIDTH, TEXT_MAX_WIDTH, TEXT_MIN_WIDTH, TextDialog
from parley.gui.sidebar.space_dialog import SpaceDialog

TITLE = "Reading a large CSV without running out of memory in Python"


def when_modal(qapp: QApplication, check: Callable[[QWidget], None]) -> list[BaseException]:
    """Run ``check`` on the next modal dialog, then close it (even when the check fails);
    returns the list its failure is put in."""
    failures: list[BaseException] = []

    def inspect() -> None:
        box = qapp.activeModalWidget()
        if box is None:
            QTimer.singleShot(10, inspect)
            return
        try:
            check(box)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)
            box.reject()  # type: ignore[attr-defined]

    QTimer.singleShot(0, inspect)
    return failures


def test_the_rename_box_shows_the_whole_title_selected(qtbot):
    dialog = TextDialog(None, "Rename chat", "Title:", TITLE)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    edit = dialog.edit
    assert dialog.width() >= TEXT_MIN_WIDTH and dialog.windowTitle() == "Rename chat"
    assert edit.fontMetrics().horizontalAdvance(TITLE) + 16 <= edit.width()  # all of it
    assert edit.selectedText() == TITLE and edit.cursorPosition() == 0


def test_a_refused_name_is_said_and_the_buttons_stay_whole(qtbot):
    """Trial 16b (shot-49): Rename space to a taken name said why, but the box did not
    grow and OK / Cancel were cut off at its bottom."""
    said = ("There is already a space named “Work”: choose another name. Nothing was "
            "changed.")
    dialog = TextDialog(None, "Rename space", "Name:", "Garden", refuse=lambda _text: said)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.edit.setText("Work")
    dialog.accept()
    qtbot.waitUntil(lambda: dialog.error_label.isVisible())
    assert dialog.isVisible() and dialog.error_label.text() == said
    for widget in (dialog.error_label, dialog.ok_button):
        bottom = widget.mapTo(dialog, widget.rect().bottomLeft()).y()
        assert bottom < dialog.height(), f"{widget.objectName() or widget} cut off"
    label = dialog.error_label
    assert label.height() >= label.heightForWidth(label.width())  # every line of it shows


def test_a_very_long_title_widens_the_box_up_to_a_limit_and_shows_its_start(qtbot):
    title = "A very long title " * 12
    dialog = TextDialog(None, "Rename chat", "Title:", title)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry().width()
    assert dialog.width() == min(TEXT_MAX_WIDTH, int(screen * 0.8))
    assert dialog.edit.selectedText() == title and dialog.edit.cursorPosition() == 0


def test_ask_text_opens_the_wide_box_and_returns_what_was_typed(qapp, qtbot):
    def rename(box: QWidget) -> None:
        assert isinstance(box, TextDialog) and box.width() >= TEXT_MIN_WIDTH
        assert box.edit.selectedText() == TITLE
        qtbot.keyClicks(box.edit, "CSV in chunks")  # typing replaces the selected title
        box.accept()

    failures = when_modal(qapp, rename)
    assert dialogs.ask_text(None, "Rename chat", "Title:", TITLE) == "CSV in chunks"
    assert not failures, failures


def test_a_short_question_box_is_wide_enough_for_its_title_and_never_cuts_its_text(qapp):
    seen: list[tuple[int, bool]] = []

    def measure(box: QWidget) -> None:
        assert isinstance(box, QMessageBox)
        label = box.findChild(QLabel, "qt_msgbox_label")
        fits = (label.heightForWidth(label.width()) <= label.height() if label.wordWrap()
                else label.fontMetrics().horizontalAdvance(label.text()) <= label.width())
        seen.append((box.width(), fits))
        box.reject()

    for text in ("Remove X?", "Remove Anthropic and its saved key? Your chats stay. " * 2):
        failures = when_modal(qapp, measure)
        assert dialogs.confirm(None, "Remove provider", text, action="Remove") is False
        assert not failures, failures
    assert all(width >= MESSAGE_MIN_WIDTH and fits for width, fits in seen), seen


def test_the_space_dialog_cannot_be_squeezed_below_a_readable_width(qtbot):
    dialog = SpaceDialog(None, [])
    qtbot.addWidget(dialog)
    assert dialog.minimumWidth() >= TEXT_MIN_WIDTH and dialog.width() >= TEXT_MIN_WIDTH


def pixel(widget: QWidget, x: int, y: int) -> str:
    return QColor(widget.grab().toImage().pixelColor(x, y)).name()


def test_dialog_fields_and_buttons_take_the_app_look_and_a_rounded_focus_ring(
    scheme, qtbot
):
    dialog = SpaceDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    dialog.name_edit.setFocus()
    qtbot.waitUntil(dialog.name_edit.hasFocus)
    qtbot.keyClicks(dialog.name_edit, "Work")
    name = dialog.name_edit
    mid = name.height() // 2
    assert pixel(name, 0, mid) == pixel(name, 1, mid) == scheme.accent  # a 2 px ring…
    assert pixel(name, 0, 0) == scheme.base  # …with rounded corners

    prompt = dialog.prompt_edit  # not focused: the app's thin border, not Qt's grey frame
    assert pixel(prompt, 0, prompt.height() // 2) == scheme.border

    cancel = next(b for b in dialog.buttons.buttons() if b is not dialog.ok_button)
    assert pixel(cancel, 0, cancel.height() // 2) == scheme.border
    assert pixel(cancel, cancel.width() // 2, 3) == scheme.surface  # flat, no gradient
    create = dialog.ok_button  # the default button: filled with the accent colour
    assert create.isEnabled() and pixel(create, create.width() // 2, 3) == scheme.accent


def test_a_focused_check_box_in_a_dialog_gets_a_thin_ring_not_a_thick_frame(scheme, qtbot):
    dialog = SpaceDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.set_tools_enabled(True)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    box = dialog.findChild(QCheckBox)
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    mid = box.height() // 2
    assert pixel(box, 0, mid) == scheme.accent and pixel(box, 1, mid) != scheme.accent
    assert pixel(box, 0, 0) != scheme.accent


def test_the_set_up_check_box_gets_a_thin_ring_round_its_label(scheme, qtbot):
    """At set-up "Use a custom server URL" took a 2 px frame running through its text."""
    from parley.gui.startup.setup_panel import SetupPanel

    panel = SetupPanel()
    qtbot.addWidget(panel)
    panel.resize(800, 700)
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    box = panel.custom_url
    box.setFocus()
    qtbot.waitUntil(box.hasFocus)
    mid = box.height() // 2
    assert pixel(box, 0, mid) == scheme.accent and pixel(box, 1, mid) != scheme.accent
    assert box.height() >= box.fontMetrics().height() + 6  # room for the ring round the text


def test_the_space_dialog_shows_no_mcp_servers_label_without_servers(qtbot):
    """An "MCP servers" label with nothing beside it (no server set up) is left out."""
    from PySide6.QtWidgets import QFormLayout

    dialog = SpaceDialog(None, [])
    qtbot.addWidget(dialog)
    dialog.set_mcp_servers([], [])
    dialog.show()
    qtbot.waitExposed(dialog)
    form = dialog.findChild(QFormLayout)
    label = form.labelForField(dialog.mcp_box)
    assert label is not None and not label.isVisible() and not dialog.mcp_box.isVisible()
    dialog.set_mcp_servers(["files"], [])
    assert label.isVisible() and dialog.mcp_checks["files"].isVisible()
