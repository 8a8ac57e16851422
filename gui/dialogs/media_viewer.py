"""Opening an attachment full size: an image in a viewer window, a document in its app.

A click on a thumbnail in the transcript opens :class:`ImageViewer` (the
image fitted to the window, 100% when it fits; Save As…; Esc closes). A
click on a document chip (a PDF) writes its bytes to
``<data folder>/opened/<sha256 prefix>/<name>`` and opens that file with the
system's default app (``QDesktopServices.openUrl``); where no app takes it,
Parley says so and offers to save it. The bytes come from the
block (transcript turns are hydrated) or, when it holds only its
``attachment_id``, from the store (``attachment_data``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSize, Qt, QUrl
from PySide6.QtGui import (
    QDesktopServices,
    QGuiApplication,
    QImage,
    QPixmap,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from parley.core import paths
from parley.core.content import DocumentBlock, ImageBlock
from parley.core.errors import ParleyError
from parley.gui import dialogs

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtWidgets import QWidget

    from parley.core.store.async_store import AsyncStore

EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif",
              "image/webp": ".webp", "application/pdf": ".pdf"}
_UNSAFE = re.compile(r"[^\w.\- ()]+")


class MediaNotWritten(ParleyError):
    """An attachment could not be written to a file (to save it, or to open it)."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(f"Parley could not write {path}: {exc.strerror or exc}. "
                         "The attachment is still in the conversation.")


class MediaUnavailable(ParleyError):
    """An attachment's bytes cannot be shown (missing from the file, or damaged)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"This {what} cannot be opened: its data is missing or damaged. "
                         "The conversation itself is unchanged.")


def safe_name(name: str | None, media_type: str) -> str:
    """A file name that is safe in any folder: no separators or control characters, the
    extension of its media type; "attachment.<ext>" when nothing is left."""
    ext = EXTENSIONS.get(media_type, "")
    base = re.split(r"[/\\]", name or "")[-1]  # never a folder from the name
    stem = _UNSAFE.sub("_", base).strip(" .")
    stem = stem[:120] or "attachment"
    return stem if not ext or stem.lower().endswith(ext) else stem + ext


async def block_bytes(store: AsyncStore, block: ImageBlock | DocumentBlock) -> bytes:
    """The bytes of an image or document block: its base64 data, or ``store``'s copy.

    Raises:
        MediaUnavailable: no data and no stored attachment, or damaged base64.
    """
    what = "image" if isinstance(block, ImageBlock) else "file"
    if block.data:
        try:
            return base64.b64decode(block.data, validate=False)
        except (binascii.Error, ValueError) as exc:
            raise MediaUnavailable(what) from exc
    if block.attachment_id:
        try:
            return bytes(await store.attachment_data(block.attachment_id))
        except ParleyError as exc:
            raise MediaUnavailable(what) from exc
    raise MediaUnavailable(what)


async def open_media(store: AsyncStore, parent: QWidget, home: Path | None,
                     block: ImageBlock | DocumentBlock) -> Any:
    """Open an attachment clicked in the transcript (see the module docstring): its bytes
    from ``store``, an image in a viewer over ``parent``, a document written under the
    data folder ``home`` (None: the default one) and opened.

    Returns:
        The :class:`ImageViewer` shown, or the path of the document written and opened.

    Raises:
        MediaUnavailable: see :func:`block_bytes`; or an image Qt cannot decode.
        MediaNotWritten: the document could not be written to open it.
    """
    data = await block_bytes(store, block)
    if isinstance(block, ImageBlock):
        image = QImage()
        if not image.loadFromData(QByteArray(data)):
            raise MediaUnavailable("image")
        name = safe_name(block.name or "Image", block.media_type)
        viewer = ImageViewer(image, data, name, parent)
        viewer.show()
        viewer.raise_()
        viewer.activateWindow()  # its keys (Esc) work at once
        return viewer
    name = safe_name(block.name, block.media_type)
    folder = paths.open_dir(home) / hashlib.sha256(data).hexdigest()[:16]
    path = folder / name
    try:
        folder.mkdir(exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise MediaNotWritten(path, exc) from exc
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
        offer_save(parent, data, name)
    return path


def offer_save(parent: QWidget, data: bytes, name: str) -> Path | None:
    """No app opened a file: say so and offer to save it somewhere (returns where)."""
    if dialogs.answers:  # tests answer as a person would: a path to save to, or None
        answer = dialogs.answers.popleft()
        return save_bytes(parent, data, name, answer) if answer else None
    box = QMessageBox(QMessageBox.Icon.Information, "Parley",
                      f"No app on this computer opened “{name}”. You can save it and open "
                      "it with an app of your choice.",
                      QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Close, parent)
    if box.exec() != QMessageBox.StandardButton.Save:
        return None
    return save_bytes(parent, data, name)


def save_bytes(parent: QWidget, data: bytes, name: str, path: str | None = None
               ) -> Path | None:
    """Write an attachment's bytes to a file the person picks (or ``path``).

    Returns:
        The file written; None when the person cancelled or writing failed
        (then a message says why).
    """
    if not path:
        path, _ = QFileDialog.getSaveFileName(parent, "Save attachment", name)
    if not path:
        return None
    target = Path(path)
    try:
        target.write_bytes(data)
    except OSError as exc:
        dialogs.show_problem(parent, "Parley", MediaNotWritten(target, exc).message)
        return None
    return target


class ImageViewer(QDialog):
    """An image at full size (scaled down to fit the window, never up), with Save As…"""

    def __init__(self, image: QImage, data: bytes, name: str, parent: QWidget | None = None
                 ) -> None:
        super().__init__(parent)
        self.setObjectName("ImageViewer")
        self.setWindowTitle(f"{name} — {image.width()} × {image.height()} px")
        self.setAccessibleName("Image viewer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.image, self.data, self.name = image, data, name
        self.label = QLabel(self)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setAccessibleName("Image")
        self.area = QScrollArea(self)
        self.area.setWidget(self.label)
        self.area.setWidgetResizable(True)
        self.area.setAlignment(Qt.AlignmentFlag.AlignCenter)
        save = QPushButton("Save As…", self)
        save.clicked.connect(self.save_as)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close)
        close.setDefault(True)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(save)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.area, 1)
        layout.addLayout(buttons)
        self.resize(self._initial_size())

    def _initial_size(self) -> QSize:
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() * 0.85 if screen is not None else QSize(1200, 800)
        want = QSize(self.image.width() + 40, self.image.height() + 80)
        return want.boundedTo(room).expandedTo(QSize(320, 240))

    def _fit(self) -> None:
        room = self.area.viewport().size() - QSize(4, 4)
        pixmap = QPixmap.fromImage(self.image)
        if pixmap.width() > room.width() or pixmap.height() > room.height():
            pixmap = pixmap.scaled(room, Qt.AspectRatioMode.KeepAspectRatio,
                                   Qt.TransformationMode.SmoothTransformation)
        self.label.setPixmap(pixmap)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        self._fit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt name)
        super().showEvent(event)
        layout = self.layout()
        if layout is not None:
            layout.activate()  # the scroll area gets its real size before the image is fitted
        self._fit()

    def save_as(self, path: str | None = None) -> Path | None:
        """Write the original bytes to a file the person picks (or ``path``); see
        :func:`save_bytes`."""
        return save_bytes(self, self.data, self.name, path)
