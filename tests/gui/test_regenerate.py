"""Regenerate the last reply in the real window; open attachments from the transcript.

Real window, real store file, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMenu

from parley.core.attachments.files import text_file_block
from parley.core.content import DocumentBlock, ImageBlock, TextBlock
from parley.gui.dialogs.media_viewer import ImageViewer
from parley.gui.transcript.specs import REGENERATE_HREF, REGENERATE_WITH_HREF
from tests.gui.answers import LEFT, chat_with_answer, click_anchor, open_chat_with, until_answered
from tests.gui.transcript_reading import text_of_last


def _answers(driver: Any, w: Any, sid: str) -> list[tuple[str, bool]]:
    """(text, on the path shown) of every answer in the chat's tree, oldest first."""
    tree = driver.run(w.store.get_tree(sid))
    return [(t.turn.text(), t.on_path) for t in tree if t.turn.role == "assistant"]


def test_regenerate_link_replaces_the_reply_and_keeps_the_old_one_as_a_branch(
        driver: Any) -> None:
    w = chat_with_answer(driver)
    sid = w.chat.session_id
    last = w.chat.turns[-1].id
    assert "↻ Regenerate" in text_of_last(w.transcript)
    driver.fake.script("The second answer.")

    click_anchor(driver, w, last, REGENERATE_HREF)
    until_answered(driver, w, "The second answer.")

    assert [t.text() for t in w.chat.turns] == ["Name a colour", "The second answer."]
    stored = driver.run(w.store.get_turns(sid))
    assert [t.text() for t in stored] == ["Name a colour", "The second answer."]
    assert _answers(driver, w, sid) == [("The first answer.", False),
                                        ("The second answer.", True)]
    assert driver.run(w.store.list_forks(sid)) == []  # a branch of the chat, not a chat
    assert w.sidebar.model.session_ids() == [sid]
    assert "The previous answer is kept" in w.statusBar().currentMessage()
    assert w.chat.session_id == sid  # the chat stays open
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (2, 2))


def test_regenerate_with_another_model_leaves_the_chat_model(driver: Any) -> None:
    w = chat_with_answer(driver)
    sid = w.chat.session_id
    own = w.chat.current_model()
    driver.until(lambda: len(w.model_picker.choices) > 1, timeout=10)
    other = next(c for c in w.model_picker.choices if c.ref != own)
    driver.fake.script("From the other model.")

    click_anchor(driver, w, w.chat.turns[-1].id, REGENERATE_WITH_HREF)
    menu = w.transcript._menu
    assert isinstance(menu, QMenu) and menu.isVisible()
    labels = [a.text() for a in menu.actions()]
    assert labels[0].startswith(w.model_picker.label_of(own))  # its own model first
    entry = next(a for a in menu.actions() if a.text().startswith(other.label))
    entry.trigger()
    until_answered(driver, w, "From the other model.")

    assert driver.fake.model_requests[-1].body["model"] == other.ref.split(":", 1)[1]
    assert driver.run(w.store.get_session(sid)).model == own
    assert w.chat.turns[-1].model == other.ref


def test_shortcut_and_context_menu_regenerate(driver: Any) -> None:
    w = chat_with_answer(driver)
    driver.fake.script("Answer two.")
    w.transcript.setFocus()
    driver.qtbot.keyClick(w.transcript.list_view, Qt.Key.Key_R,
                          Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    until_answered(driver, w, "Answer two.")

    rows = w.transcript.model.rows
    center = w.mapToGlobal(w.rect().center())
    w.transcript._show_menu(w.transcript.model.index(len(rows) - 1), center, None)
    last_menu = [a.text().split("\t")[0] for a in w.transcript._menu.actions()]
    assert "Regenerate" in last_menu
    w.transcript._menu.close()
    w.transcript._show_menu(w.transcript.model.index(0), center, None)
    assert "Regenerate" not in [a.text().split("\t")[0] for a in w.transcript._menu.actions()]
    w.transcript._menu.close()

    driver.fake.script("Answer three.")
    w.transcript.message_action("last")
    assert w.transcript.message_action("regenerate")
    until_answered(driver, w, "Answer three.")
    assert _answers(driver, w, w.chat.session_id) == [
        ("The first answer.", False), ("Answer two.", False), ("Answer three.", True)]
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (3, 3))


def test_no_regenerate_while_a_reply_streams(driver: Any) -> None:
    w = chat_with_answer(driver)
    driver.fake.script("slow " * 40, token_delay_ms=25, chunk_size=2)
    driver.send("again", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    assert "Regenerate" not in text_of_last(w.transcript)
    assert w.window_commands.regenerate_reply() is False
    assert "A reply is being written" in w.statusBar().currentMessage()
    until_answered(driver, w, ("slow " * 40))
    assert "↻ Regenerate" in text_of_last(w.transcript)


def test_regenerated_answer_and_the_old_one_survive_a_restart(driver: Any) -> None:
    w = chat_with_answer(driver)
    sid = w.chat.session_id
    driver.fake.script("Kept after restart.")
    assert w.window_commands.regenerate_reply()
    until_answered(driver, w, "Kept after restart.")
    driver.close(w)

    w2 = driver.open()
    driver.until(lambda: w2.chat.session_id == sid and bool(w2.chat.turns))
    assert driver.last_text(w2) == "Kept after restart."
    assert _answers(driver, w2, sid) == [("The first answer.", False),
                                         ("Kept after restart.", True)]
    driver.until(lambda: w2.transcript.branch_of(w2.chat.turns[-1].id) == (2, 2))


# -- attachments opened from the transcript -------------------------------------------
def _png(size: tuple[int, int], color: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def test_click_on_a_thumbnail_opens_the_image_full_size(driver: Any, tmp_path: Path) -> None:
    data = _png((900, 600))
    image = ImageBlock("image/png", base64.b64encode(data).decode(), name="holiday.png")
    w, turn_id = open_chat_with(driver, [image, TextBlock("What is this?")])

    click_anchor(driver, w, turn_id, "parley:media/0")
    driver.until(lambda: bool(w.findChildren(ImageViewer)))
    viewer = w.findChildren(ImageViewer)[0]
    assert (viewer.image.width(), viewer.image.height()) == (900, 600)
    assert viewer.name == "holiday.png"  # the name it was attached as, kept by the store
    assert viewer.windowTitle().startswith("holiday.png") and "900 × 600" in viewer.windowTitle()
    shown = viewer.label.pixmap().size()  # the size the image is drawn at
    assert shown.width() <= 900 and abs(shown.width() / shown.height() - 1.5) < 0.01
    assert shown.width() >= min(900, viewer.width() - 60)  # fitted to the window, not tiny
    saved = viewer.save_as(str(tmp_path / "copy.png"))
    assert saved is not None and saved.read_bytes() == data  # the original bytes
    viewer.close()


class _Opened(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_click_on_a_document_chip_opens_it_in_its_app(driver: Any) -> None:
    pdf = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<<>>\n%%EOF\n"
    doc = DocumentBlock("application/pdf", base64.b64encode(pdf).decode(), "../../report.pdf")
    w, turn_id = open_chat_with(driver, [doc, TextBlock("Summarize")])
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        chip = w.transcript.list_view.layout_of(0, fresh=True).plain_text()
        assert "report.pdf" in chip and "PDF" in chip
        click_anchor(driver, w, turn_id, "parley:media/0")
        driver.until(lambda: bool(opened.urls))
    finally:
        QDesktopServices.unsetUrlHandler("file")
    path = Path(opened.urls[0].toLocalFile())
    assert path.read_bytes() == pdf
    assert path.name == "report.pdf"  # no folders from the name
    assert driver.home in path.parents


def test_an_attached_text_file_shows_as_a_chip_that_unfolds(driver: Any) -> None:
    code = "def f():\n    return 1\n"
    w, turn_id = open_chat_with(driver, [text_file_block("util.py", code),
                                          TextBlock("Explain")])
    row = w.transcript.model.row_of(turn_id)
    shown = w.transcript.list_view.layout_of(row, fresh=True).plain_text()
    assert "util.py · 2 lines" in shown
    assert "return 1" not in shown  # folded
    point = w.transcript.fold_point(turn_id, "file:0")
    assert point is not None
    driver.qtbot.mouseClick(w.transcript.list_view.viewport(), LEFT, pos=point)
    driver.until(lambda: "return 1" in w.transcript.list_view.layout_of(row, fresh=True)
                 .plain_text())


def test_palette_command_offers_the_models_then_regenerates(driver: Any) -> None:
    w = chat_with_answer(driver)
    driver.until(lambda: len(w.model_picker.choices) > 1, timeout=10)
    assert w.qactions["run.regenerate_with"].isEnabled()
    assert w.window_commands.regenerate_with_model()
    menu = w.transcript._menu
    assert menu.isVisible() and len(menu.actions()) == len(w.model_picker.choices)
    expected = w.chat.regen.model_choices()[-1][1]  # the menu's last entry
    driver.fake.script("Picked from the palette.")
    menu.actions()[-1].trigger()
    until_answered(driver, w, "Picked from the palette.")
    assert w.chat.turns[-1].model == expected


def test_nothing_to_regenerate_in_a_new_chat(driver: Any) -> None:
    w = driver.configured()
    assert w.chat.session_id is None
    assert w.window_commands.regenerate_reply() is False
    assert "send a message first" in w.statusBar().currentMessage()
    assert w.window_commands.regenerate_with_model() is False
    assert not driver.fake.model_requests


def test_a_click_opens_the_image_under_the_pointer_in_a_row_scrolled_half_out(driver: Any
                                                                             ) -> None:
    first = ImageBlock("image/png", base64.b64encode(_png((300, 200), "red")).decode())
    second = ImageBlock("image/png", base64.b64encode(_png((200, 300), "blue")).decode())
    w, turn_id = open_chat_with(driver, [first, second, TextBlock("Two pictures")])
    w.resize(900, 420)  # the row is taller than the view
    lv = w.transcript.list_view
    driver.until(lambda: lv.verticalScrollBar().maximum() > 0)
    row = w.transcript.model.row_of(turn_id)
    layout = lv.layout_of(row, fresh=True)
    media = [p for p in layout.pieces if p.piece.media]
    assert len(media) == 2
    # Scroll so the row's top is above the view and the second image is in it.
    top = lv.visualRect(w.transcript.model.index(row)).top() + lv.verticalScrollBar().value()
    lv.verticalScrollBar().setValue(top + media[1].rect.top() - 20)
    lv.settle()
    rect = lv.visualRect(w.transcript.model.index(row))
    piece = media[1].rect
    point = rect.topLeft() + QPoint(piece.left() + 20, piece.center().y())  # on the image
    before = lv.verticalScrollBar().value()
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=point)
    driver.until(lambda: bool(w.findChildren(ImageViewer)))
    viewer = w.findChildren(ImageViewer)[0]
    assert (viewer.image.width(), viewer.image.height()) == (200, 300)  # the one clicked
    assert viewer.label.pixmap().size().toTuple() == (200, 300)  # it fits: shown at 100%
    assert lv.verticalScrollBar().value() == before  # the click did not scroll
    viewer.close()


def test_a_press_and_a_release_on_two_different_images_open_nothing(driver: Any) -> None:
    first = ImageBlock("image/png", base64.b64encode(_png((300, 200), "red")).decode())
    second = ImageBlock("image/png", base64.b64encode(_png((300, 200), "blue")).decode())
    w, turn_id = open_chat_with(driver, [first, second, TextBlock("Two pictures")])
    lv = w.transcript.list_view
    row = w.transcript.model.row_of(turn_id)
    w.transcript.scroll_to_turn(turn_id)
    lv.settle()
    rect = lv.visualRect(w.transcript.model.index(row))
    media = [p for p in lv.layout_of(row, fresh=True).pieces if p.piece.media]
    at = [rect.topLeft() + QPoint(m.rect.left() + 20, m.rect.center().y()) for m in media]
    assert [lv.hit_at(p)[1].href for p in at] == ["parley:media/0"] * 2  # the same href
    driver.qtbot.mousePress(lv.viewport(), LEFT, pos=at[0])
    driver.qtbot.mouseRelease(lv.viewport(), LEFT, pos=at[1])
    driver.qtbot.wait(100)
    assert not w.findChildren(ImageViewer)  # released elsewhere: not a click on either
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=at[1])
    driver.until(lambda: bool(w.findChildren(ImageViewer)))
    assert w.findChildren(ImageViewer)[0].image.pixel(5, 5) == 0xFF0000FF  # the blue one


def test_a_document_no_app_opens_is_offered_for_saving(driver: Any, tmp_path: Path) -> None:
    from parley.gui import dialogs

    pdf = b"%PDF-1.4\n%%EOF\n"
    doc = DocumentBlock("application/pdf", base64.b64encode(pdf).decode(), "notes.pdf")
    w, turn_id = open_chat_with(driver, [doc, TextBlock("Read this")])
    chip = w.transcript.list_view.layout_of(0, fresh=True).plain_text()
    assert "notes.pdf · PDF · 15 B" in chip  # the exact size, not the base64's
    target = tmp_path / "saved.pdf"
    dialogs.answers.append(str(target))
    from parley.gui.dialogs import media_viewer

    shown = media_viewer.QDesktopServices
    try:
        media_viewer.QDesktopServices = _NoLauncher  # type: ignore[misc,assignment]
        click_anchor(driver, w, turn_id, "parley:media/0")
        driver.until(lambda: target.exists())
    finally:
        media_viewer.QDesktopServices = shown  # type: ignore[misc]
    assert target.read_bytes() == pdf


class _NoLauncher:
    """A desktop without an app for the file (``openUrl`` fails, as Qt's does then)."""

    @staticmethod
    def openUrl(url: QUrl) -> bool:  # noqa: N802 (Qt's name)
        return False
