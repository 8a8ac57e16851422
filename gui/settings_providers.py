"""Settings → Providers: the providers, their keys and addresses, the model for new chats.

A provider's fields are saved together with "Save provider" (a key and its
server go together); "Saved." confirms it, and the key field then says a key
is stored instead of looking empty. Where a new key goes (the system keyring
or Parley's key file) is said as ``core.keys`` decides it. Every change of the
provider list is reported through the dialog's ``providers_changed`` signal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import ParleyError
from core.settings import SettingsError, validate
from gui import dialogs
from gui.settings_widgets import hint

if TYPE_CHECKING:
    from gui.settings_dialog import SettingsDialog

KIND_LABELS = {"anthropic": "Anthropic", "openai": "OpenAI",
               "openai_compatible": "OpenAI-compatible server"}
SOURCE_WORDS = {"settings": "set here", "environment": "from the environment",
                "default": "the default", "keyring": "saved in the keyring",
                "file": "saved in Parley's key file", "none": "none"}
#: Where a key typed in the form will be saved, by ``KeyStore.backend_name``.
KEY_DESTINATION = {"keyring": "the system keyring",
                   "file": "Parley's key file (only you can read it)"}
KEY_SAVED_PLACEHOLDER = "A key is saved — type to replace it"
KEY_ENV_PLACEHOLDER = "Using the key from the environment — type to save one here"
SAVED_TEXT = "Saved."


class _ListWide(QStyledItemDelegate):
    """Rows as wide as the list, whatever their text (a longer one is elided)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
                 ) -> QSize:  # noqa: N802
        return QSize(1, super().sizeHint(option, index).height())


class ProvidersPage(QWidget):
    """The providers, their keys and addresses, the model for new chats, the prompt cache."""

    def __init__(self, dialog: SettingsDialog) -> None:
        super().__init__()
        self.dialog, self.hub = dialog, dialog.hub
        self._new_kind: str | None = None
        self.list = QListWidget(self)
        self.list.setAccessibleName("Providers")
        self.list.setMaximumHeight(120)
        # A long name is cut with "…" (whole in its tooltip): the page never scrolls sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setItemDelegate(_ListWide(self.list))
        self.list.currentItemChanged.connect(lambda *_: self._show_selected())
        add = QToolButton(self)
        add.setText("Add provider")
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(add)
        for kind, label in KIND_LABELS.items():
            menu.addAction(label, lambda k=kind: self.start_new(k))
        add.setMenu(menu)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.clicked.connect(self._remove)
        self.name, self.url, self.key, self.model = (QLineEdit(self) for _ in range(4))
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.kind_label = QLabel(self)
        self.url_hint, self.key_hint = hint("", self), hint("", self)
        form = QFormLayout()
        form.addRow("Kind", self.kind_label)
        for label, edit, note in (("Name", self.name, None), ("Server address", self.url,
                                  self.url_hint), ("API key", self.key, self.key_hint),
                                  ("Default model", self.model, None)):
            edit.setAccessibleName(label)
            edit.textEdited.connect(lambda *_: self.saved_note.setVisible(False))
            form.addRow(label, edit)
            if note is not None:
                form.addRow("", note)
        self.save_button = QPushButton("Save provider", self)
        self.save_button.clicked.connect(lambda: self.dialog.tasks.spawn(self._save()))
        self.saved_note = QLabel(SAVED_TEXT, self)
        self.saved_note.setObjectName("SavedNote")
        self.saved_note.setAccessibleName("Provider saved")
        self.saved_note.setVisible(False)
        self.message = hint("", self, error=True)
        self.default_model = QLineEdit(self)
        self.default_model.setAccessibleName("Model for new chats")
        self.default_model.editingFinished.connect(
            lambda: self.dialog.tasks.spawn(self._set_default(self.default_model.text())))
        self.default_error = hint("", self, error=True)
        self.keys_note = hint("", self)
        buttons = QHBoxLayout()
        for w in (add, self.remove_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
        buttons.addWidget(self.saved_note)
        buttons.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.addWidget(self.list)
        lay.addLayout(buttons)
        lay.addLayout(form)
        for w in (self.message, QLabel("Model for new chats"), self.default_model,
                  self.default_error, self.keys_note, QLabel("<b>Prompt cache</b>")):
            lay.addWidget(w)
        dialog.add_fields("Providers", lay, self)
        lay.addStretch(1)

    async def refresh(self, select: str | None = None) -> None:
        """Re-read the providers from the hub and show them."""
        current = select or self.selected_id()
        self.list.blockSignals(True)
        self.list.clear()
        for config in self.hub.configs:
            kind = KIND_LABELS[config.kind]
            label = config.name if config.name == kind else f"{config.name} — {kind}"
            item = QListWidgetItem(label)
            item.setToolTip(label)
            item.setData(Qt.ItemDataRole.UserRole, config.id)
            self.list.addItem(item)
            if config.id == current or current is None:
                self.list.setCurrentItem(item)
                current = config.id
        self.list.blockSignals(False)
        self.default_model.setText(self.hub.default_model_ref() or "")
        self.keys_note.setText(f"API keys are kept in {self.hub.keys.backend_description}.")
        await self._fill()

    def selected_id(self) -> str | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _show_selected(self) -> None:
        self._new_kind = None
        self.saved_note.setVisible(False)
        self.dialog.tasks.spawn(self._fill())

    def key_destination(self) -> str:
        """Where a key typed now will be saved, in words (follows ``core.keys``: the
        system keyring, or Parley's key file where no keyring answers)."""
        return KEY_DESTINATION[self.hub.keys.backend_name]

    def start_new(self, kind: str) -> None:
        """Clear the form for a new provider of ``kind``."""
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self._new_kind = kind
        self.kind_label.setText(KIND_LABELS[kind])
        for edit in (self.name, self.url, self.key, self.model):
            edit.clear()
        self.key.setPlaceholderText("Optional for most local servers"
                                    if kind == "openai_compatible" else "")
        self.name.setText(KIND_LABELS[kind] if kind != "openai_compatible" else "")
        self.url_hint.setText("For example http://localhost:11434/v1 (Ollama)."
                              if kind == "openai_compatible" else "Empty: the usual address.")
        self.key_hint.setText(f"Saved in {self.key_destination()}, never in sessions.db.")
        self.message.setVisible(False)
        self.saved_note.setVisible(False)
        self.remove_button.setEnabled(False)
        self.name.setFocus()

    async def _fill(self) -> None:
        from core.providers.registry import resolve_base_url

        pid = self.selected_id()
        self.remove_button.setEnabled(pid is not None)
        if pid is None:
            return
        config = self.hub.config(pid)
        self.kind_label.setText(KIND_LABELS[config.kind])
        self.name.setText(config.name)
        self.url.setText(config.base_url or "")
        self.model.setText(config.default_model or "")
        self.key.clear()
        url = resolve_base_url(config, self.hub.environ)
        self.url_hint.setText(f"Using {url.value} ({SOURCE_WORDS[url.source]})."
                              if url.value else "No address set.")
        source = self.hub.key_source(pid)  # read by the hub's last load(), off this thread
        self.key.setPlaceholderText(
            KEY_SAVED_PLACEHOLDER if source in ("keyring", "file")
            else KEY_ENV_PLACEHOLDER if source == "environment" else "")
        if source == "none":
            self.key_hint.setText("No key (fine for most local servers); one typed here "
                                  f"is saved in {self.key_destination()}.")
        else:
            self.key_hint.setText(f"Key: {SOURCE_WORDS[source]}.")

    async def _save(self) -> None:
        pid = self.selected_id()
        kind = self._new_kind or (self.hub.config(pid).kind if pid else None)
        if kind is None:
            return
        self.saved_note.setVisible(False)
        try:
            config = await self.hub.add_provider(
                kind, name=self.name.text(), base_url=self.url.text() or None,
                api_key=self.key.text() or None, default_model=self.model.text().strip() or None,
                provider_id=pid)
        except ParleyError as exc:
            self.message.setText(exc.message)
            self.message.setVisible(True)
            return
        self.message.setVisible(False)
        self._new_kind = None
        await self.refresh(select=config.id)
        self.saved_note.setVisible(True)
        self.dialog.providers_changed.emit()

    def _remove(self) -> None:
        pid = self.selected_id()
        if pid is None:
            return
        name = self.hub.config(pid).name
        if dialogs.confirm(self, "Remove provider", f"Remove {name} and its saved key? "
                           "Your chats stay.", action="Remove", destructive=True):
            self.dialog.tasks.spawn(self._removed(pid))

    async def _removed(self, pid: str) -> None:
        await self.hub.remove_provider(pid)
        self.saved_note.setVisible(False)
        await self.refresh()
        self.dialog.providers_changed.emit()

    async def _set_default(self, text: str) -> None:
        try:
            ref = validate("default_model", text)
        except SettingsError as exc:
            self.default_error.setText(exc.message)
            self.default_error.setVisible(True)
            return
        self.default_error.setVisible(False)
        if ref == self.hub.default_model_ref():
            return
        if ref is None:
            await self.dialog.settings.reset("default_model")
            await self.hub.load()
        else:
            await self.hub.set_default_model(ref)
        self.default_model.setText(self.hub.default_model_ref() or "")
