"""A space's documents in its dialog: the list, Add…, Replace…, Remove, and which way
they reach the model ("3 documents, 41,000 tokens: sent with every message").

Each change is saved at once (like a project's knowledge in the other apps): the
files are read off the GUI thread (``asyncio.to_thread``) and written by the store
(``Store.add_space_document`` …, which reads their text: ``parley.core.attachments.
document_text``). A file that cannot be a document is refused in the panel's own line,
nothing else changed. Chats already started keep the documents they were given; new
chats (and chats compacted or refreshed) get the new ones.

Keys: Insert or Ctrl+O adds, Delete removes the selected document; the buttons have
mnemonics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from parley.core.errors import ParleyError
from parley.core.store.space_documents import SpaceDocument
from parley.core.tools.space_documents import describe
from parley.gui import dialogs

FILTERS = ";;".join((
    "PDF, text, code and images (*.pdf *.txt *.md *.markdown *.rst *.csv *.tsv *.json *.jsonl "
    "*.yaml *.yml *.toml *.ini *.xml *.html *.py *.js *.ts *.rs *.go *.java *.c *.h *.cpp *.sql "
    "*.tex *.png *.jpg *.jpeg *.gif *.webp)",
    "All files (*)",
))
Spawn = Callable[[Coroutine[Any, Any, Any], str], None]


def choose_documents(parent: QWidget | None, *, several: bool) -> list[Path]:
    """Ask for files to add (or one to put in a document's place); [] when cancelled.

    A test answers through ``parley.gui.dialogs.answers`` (a list of paths, or None).
    """
    if dialogs.answers:
        answer = dialogs.answers.popleft()
        return [Path(p) for p in answer] if answer else []
    if several:
        names, _ = QFileDialog.getOpenFileNames(parent, "Add documents to the space",
                                                str(Path.home()), FILTERS)
        return [Path(n) for n in names]
    name, _ = QFileDialog.getOpenFileName(parent, "Replace the document", str(Path.home()),
                                          FILTERS)
    return [Path(name)] if name else []


def item_text(doc: SpaceDocument) -> str:
    """A document's line in the list: name, pages (PDF) or "image", tokens (an image's
    counted as a message's attached image is)."""
    pages = f" · {doc.pages} pages" if doc.media_type == "application/pdf" else ""
    if doc.media_type.startswith("image/"):
        pages = " · image"
    return f"{doc.name}{pages} · {doc.tokens:,} tokens"


def renamed(name: str, doc: SpaceDocument) -> list[str]:
    """The panel's words on a file added as something other than its name says: named
    anew (the space has one of that name), or a ".pdf" that is text."""
    words = []
    if doc.name != name:
        words.append(f"The space has a “{name}” already: this one was added as “{doc.name}”.")
    if name.casefold().endswith(".pdf") and doc.media_type != "application/pdf":
        words.append(f"“{name}” is not a PDF: it was added as text.")
    return words


class SpaceDocumentsPanel(QWidget):
    """The documents of one space, changed in place.

    Args:
        parent: the space dialog.
        store: the ``AsyncStore``.
        space_id: the space.
        spawn: runs a coroutine in the window's task group (``spawn(coro, name)``).

    Signals:
        changed: after the list was read again (loaded, added, replaced or removed).
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None, store: Any, space_id: str, spawn: Spawn) -> None:
        super().__init__(parent)
        self.setObjectName("SpaceDocuments")
        self.store, self.space_id, self._spawn = store, space_id, spawn
        self.documents: list[SpaceDocument] = []
        self.window_tokens: int | None = None
        self.model = "the model"
        self.share = 0.25
        self.tools_on = True
        self.list = QListWidget(self)
        self.list.setAccessibleName("Space documents")
        self.list.setMinimumHeight(90)
        self.add_button = QPushButton("&Add…", self)
        self.replace_button = QPushButton("Re&place…", self)
        self.remove_button = QPushButton("Re&move", self)
        self.add_button.clicked.connect(self.add)
        self.replace_button.clicked.connect(self.replace)
        self.remove_button.clicked.connect(self.remove)
        for keys, slot in (("Ins", self.add), ("Ctrl+O", self.add), ("Del", self.remove)):
            shortcut = QShortcut(QKeySequence(keys), self.list)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)
        self.status = QLabel(self)
        self.status.setObjectName("DialogNote")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("How the documents are given")
        self.problem = QLabel(self)
        self.problem.setObjectName("DialogError")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        buttons = QHBoxLayout()
        for b in (self.add_button, self.replace_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.list)
        lay.addLayout(buttons)
        lay.addWidget(self.status)
        lay.addWidget(self.problem)
        self.list.currentRowChanged.connect(lambda _row: self._update_buttons())
        self._show()

    # -- what it shows ------------------------------------------------------------
    def set_plan(self, window: int | None, model: str, share: float, tools_on: bool) -> None:
        """Say which way the documents go for the space's model (its window in tokens,
        its name, the ``spaces.documents_max_share`` setting, Parley's tools on)."""
        self.window_tokens, self.model, self.share, self.tools_on = window, model, share, tools_on
        self._show()

    def set_documents(self, documents: Sequence[SpaceDocument]) -> None:
        """Show these documents (in order), keeping the selected row where it can."""
        row = self.list.currentRow()
        self.documents = list(documents)
        self.list.clear()
        for doc in self.documents:
            item = QListWidgetItem(item_text(doc), self.list)
            item.setToolTip(doc.name)
        if self.documents:
            self.list.setCurrentRow(min(max(row, 0), len(self.documents) - 1))
        self._show()
        self.changed.emit()

    def _show(self) -> None:
        self.status.setText(describe(self.documents, self.window_tokens, self.share, self.model,
                                     tools_on=self.tools_on)
                            + " Chats already started keep the documents they were given.")
        self._update_buttons()

    def _update_buttons(self) -> None:
        chosen = self.list.currentRow() >= 0
        self.replace_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)

    def show_problem(self, message: str) -> None:
        self.problem.setText(message)
        self.problem.setVisible(bool(message))

    def selected(self) -> SpaceDocument | None:
        row = self.list.currentRow()
        return self.documents[row] if 0 <= row < len(self.documents) else None

    # -- changes --------------------------------------------------------------------
    async def load(self) -> None:
        """Read the space's documents and show them (nothing when the dialog closed)."""
        documents = await self.store.space_documents(self.space_id)
        if isValid(self):
            self.set_documents(documents)

    def add(self) -> None:
        """Ask for files and add them to the space."""
        paths = choose_documents(self, several=True)
        if paths:
            self._spawn(self._add(paths), "space-documents-add")

    def replace(self) -> None:
        """Ask for a file to put in the selected document's place."""
        doc = self.selected()
        if doc is None:
            return
        paths = choose_documents(self, several=False)
        if paths:
            self._spawn(self._replace(doc, paths[0]), "space-documents-replace")

    def remove(self) -> None:
        """Remove the selected document from the space."""
        doc = self.selected()
        if doc is not None:
            self._spawn(self._remove(doc), "space-documents-remove")

    async def _add(self, paths: Sequence[Path]) -> None:
        problems = []
        for path in paths:
            problems += await self._store_file(path, partial(
                self.store.add_space_document, self.space_id, path.name))
        await self._after(problems)

    async def _replace(self, doc: SpaceDocument, path: Path) -> None:
        problems = await self._store_file(path, partial(
            self.store.replace_space_document, doc.id, path.name))
        await self._after(problems)

    @staticmethod
    async def _store_file(
            path: Path, save: Callable[[bytes], Awaitable[SpaceDocument]]) -> list[str]:
        """Read ``path`` off the event loop and ``save`` its bytes; the lines to show (a
        rename, or why it was refused), [] when it went in as named."""
        try:
            data = await asyncio.to_thread(path.read_bytes)
            return renamed(path.name, await save(data))
        except OSError as exc:
            return [f"“{path.name}” could not be read: {exc.strerror or exc}."]
        except ParleyError as exc:
            return [str(exc)]

    async def _remove(self, doc: SpaceDocument) -> None:
        problems = []
        try:
            await self.store.remove_space_document(doc.id)
        except ParleyError as exc:
            problems.append(str(exc))
        await self._after(problems)

    async def _after(self, problems: list[str]) -> None:
        if isValid(self):
            self.show_problem(" ".join(problems))
            await self.load()


def open_panel(dialog: Any, store: Any, space: Any, spawn: Spawn, *, hub: Any,
               tools: Any) -> SpaceDocumentsPanel:
    """Put a space's documents panel in its dialog (``SpaceDialog.add_documents``) and
    fill it in the background: the documents, then which way they go for the space's
    model (its default, else Parley's).

    Args:
        dialog: the ``SpaceDialog`` of an existing space.
        store: the ``AsyncStore``.
        space: the space (``id``, ``default_model``).
        spawn: the window's task spawner.
        hub: the ``ProviderHub`` (None before it is loaded: no window known).
        tools: the ``ToolExecutor`` (None: Parley's tools are off in this window).
    """
    panel = SpaceDocumentsPanel(dialog, store, space.id, spawn)
    dialog.add_documents(panel)
    spawn(_fill(panel, store, space, hub, tools), "space-documents-load")
    return panel


async def _fill(panel: SpaceDocumentsPanel, store: Any, space: Any, hub: Any,
                tools: Any) -> None:
    from parley.core.providers.model_ref import parse_model_ref
    from parley.core.tools.space_documents import max_share
    from parley.gui.header.model_picker import model_label

    await panel.load()
    ref = space.default_model or (hub.default_model_ref() if hub is not None else None)
    window, model, tools_on = None, "the model", tools is not None
    if hub is not None and ref:
        try:
            info = hub.model_info(ref)
            window, model = info.context_window, model_label(info)  # as the menu names it
            kind = hub.config(parse_model_ref(ref)[0]).kind
            if tools is not None:
                tools_on = await tools.enabled(space.id, kind, ref, proven=info.tools is True)
        except (ParleyError, KeyError, ValueError):  # a provider removed, a malformed ref
            pass
    share = await max_share(store)
    if isValid(panel):
        panel.set_plan(window, model, share, tools_on)
