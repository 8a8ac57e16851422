"""Settings → Providers: the providers, their keys and addresses, the model for new chats.

A provider's fields are saved together with "Save provider" (a key and its
server go together). Saving first tests the connection, as first-run set-up's
"Test connection" does (the same :func:`parley.gui.startup.setup_panel.check_connection`): if
the provider cannot be reached, nothing is saved yet, the problem is shown
under the fields and "Save anyway" saves it as it is (the model picker then
lists it with "can't connect"). A malformed address is said to be not a valid
URL before anything is tried, and cannot be saved anyway
(``parley.core.providers.address``). "Saved." confirms a save, and the key field
then says a key is stored instead of looking empty. Where a new key goes (the
system keyring or Parley's key file) is said as ``parley.core.keys`` decides it. Every
change of the provider list is reported through the dialog's
``providers_changed`` signal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

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
from shiboken6 import isValid

from parley.core.errors import ParleyError
from parley.core.providers.registry import (
    ENV_API_KEY,
    ENV_COMPATIBLE,
    ProviderConfigError,
    is_openai_url,
)
from parley.core.settings import SettingsError, validate
from parley.gui import dialogs
from parley.gui.settings.widgets import hint
from parley.gui.settings.window_field import WindowField
from parley.gui.startup.setup_panel import NOT_OPENAI_HINT, ConnectionCheck, check_connection

if TYPE_CHECKING:
    from PySide6.QtWidgets import QVBoxLayout

    from parley.core.settings import Settings
    from parley.core.tasks import TaskSet


class SettingsHost(Protocol):
    """What the Providers page uses of the Settings dialog
    (``parley.gui.settings.dialog.SettingsDialog``), typed here so this module does not
    import the dialog that imports it."""

    @property
    def hub(self) -> Any: ...  # ProviderHub

    @property
    def settings(self) -> Settings: ...

    @property
    def tasks(self) -> TaskSet: ...

    @property
    def providers_changed(self) -> Any: ...  # its Qt signal

    @property
    def finished(self) -> Any: ...  # QDialog's signal

    def add_fields(self, section: str, layout: QVBoxLayout, parent: QWidget) -> None: ...

KIND_LABELS = {"anthropic": "Anthropic", "openai": "OpenAI",
               "openai_compatible": "OpenAI-compatible server"}
#: The list's name for the compatible server ``OPENAI_BASE_URL`` names.
ENV_COMPATIBLE_LABEL = "OpenAI-compatible (from the environment)"
SOURCE_WORDS = {"settings": "set here", "environment": "from the environment",
                "default": "the default", "keyring": "saved in the keyring",
                "file": "saved in Parley's key file", "none": "none"}
#: Where a key typed in the form will be saved, by ``KeyStore.backend_name``.
KEY_DESTINATION = {"keyring": "the system keyring",
                   "file": "Parley's key file (only you can read it)"}
KEY_SAVED_PLACEHOLDER = "A key is saved — type to replace it"
KEY_ENV_PLACEHOLDER = "Using the key from the environment — type to save one here"
SAVED_TEXT = "Saved."
CHECKING_TEXT = "Testing the connection…"
SAVE_ANYWAY = "Save anyway"
TEST_TIMEOUT_S = 20.0  # the longest "Save provider" waits for the provider to answer
NOT_SAVED = "Not saved:"
#: Where a model's context window or output limit came from, in words ({name}: the provider).
LIMIT_SOURCES = {"provider": "reported by {name}", "settings": "set here (model_overrides)",
                 "catalog": "from Parley's model catalog",
                 "default": "a safe default: {name} does not say"}


class _ListWide(QStyledItemDelegate):
    """Rows as wide as the list, whatever their text (a longer one is elided)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
                 ) -> QSize:  # noqa: N802
        return QSize(1, super().sizeHint(option, index).height())


class ProvidersPage(QWidget):
    """The providers, their keys and addresses, the model for new chats, the prompt cache."""

    def __init__(self, dialog: SettingsHost) -> None:
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
            menu.addAction(label, self._start_new_of(kind))
        add.setMenu(menu)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.clicked.connect(self._remove)
        self.name, self.url, self.key, self.model = (QLineEdit(self) for _ in range(4))
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.kind_label = QLabel(self)
        self.url_hint, self.key_hint = hint("", self), hint("", self)
        self.limits_hint = hint("", self)
        self.limits_hint.setAccessibleName("Model limits")
        form = QFormLayout()
        form.addRow("Kind", self.kind_label)
        for label, edit, note in (("Name", self.name, None), ("Server address", self.url,
                                  self.url_hint), ("API key", self.key, self.key_hint),
                                  ("Default model", self.model, self.limits_hint)):
            edit.setAccessibleName(label)
            edit.textEdited.connect(lambda *_: self._edited())
            form.addRow(label, edit)
            if note is not None:
                form.addRow("", note)
        self.url.textEdited.connect(lambda *_: self._say_compatible())
        self.window_field = WindowField(self)  # compatible servers only: see show_limits
        form.addRow("Context window", self.window_field)
        self._form = form
        form.setRowVisible(self.window_field, False)
        self.save_button = QPushButton("Save provider", self)
        self.save_button.clicked.connect(lambda: self._start_save(test=True))
        self.save_anyway = QPushButton(SAVE_ANYWAY, self)
        self.save_anyway.setAccessibleDescription("Save the provider without a working "
                                                  "connection")
        self.save_anyway.clicked.connect(lambda: self._start_save(test=False))
        self.save_anyway.setVisible(False)
        self._saving: asyncio.Task[None] | None = None
        # Closing Settings during a connection test saves nothing (and touches no
        # deleted field when the test ends).
        dialog.finished.connect(lambda *_: self._saving is not None and self._saving.cancel())
        self.saved_note = QLabel(SAVED_TEXT, self)
        self.saved_note.setObjectName("SavedNote")
        self.saved_note.setAccessibleName("Provider saved")
        self.saved_note.setVisible(False)
        self.progress = QLabel(CHECKING_TEXT, self)
        self.progress.setAccessibleName("Connection test")
        self.progress.setVisible(False)
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
        # Save provider under the provider's fields: Tab goes down the page (the fields,
        # Save provider, then the model for new chats), never back up to its top.
        save_row = QHBoxLayout()
        save_row.addStretch(1)
        save_row.addWidget(self.progress)
        save_row.addWidget(self.saved_note)
        save_row.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.addWidget(self.list)
        lay.addLayout(buttons)
        lay.addLayout(form)
        lay.addLayout(save_row)
        problem = QHBoxLayout()
        problem.addWidget(self.message, 1)
        problem.addWidget(self.save_anyway, 0, Qt.AlignmentFlag.AlignTop)
        lay.addLayout(problem)
        for part in (QLabel("Model for new chats"), self.default_model,
                     self.default_error, self.keys_note, QLabel("<b>Prompt cache</b>")):
            lay.addWidget(part)
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
            if config == ENV_COMPATIBLE:  # OPENAI_BASE_URL names a server other than OpenAI
                label = ENV_COMPATIBLE_LABEL
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
        self._edited()
        self.dialog.tasks.spawn(self._fill())

    def _edited(self) -> None:
        """A field changed: an earlier "Saved." or connection problem no longer holds."""
        self.saved_note.setVisible(False)
        self.message.setVisible(False)
        self.save_anyway.setVisible(False)

    def _say_compatible(self) -> None:
        """Under the address of a new "OpenAI" provider: say that another server's
        address makes it an OpenAI-compatible server (``registry.as_used``)."""
        if self._new_kind != "openai":
            return
        url = self.url.text().strip()
        self.url_hint.setText(NOT_OPENAI_HINT if url and not is_openai_url(url)
                              else "Empty: the usual address.")

    def key_destination(self) -> str:
        """Where a key typed now will be saved, in words (follows ``parley.core.keys``: the
        system keyring, or Parley's key file where no keyring answers)."""
        return KEY_DESTINATION[self.hub.keys.backend_name]

    def _start_new_of(self, kind: str) -> Callable[[], None]:
        """A menu slot that starts a new provider of ``kind``."""
        return lambda: self.start_new(kind)

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
        self.limits_hint.setText("")
        self._form.setRowVisible(self.window_field, False)
        self.url_hint.setText("For example http://localhost:11434/v1 (Ollama)."
                              if kind == "openai_compatible" else "Empty: the usual address.")
        self.key_hint.setText(f"Saved in {self.key_destination()}, never in sessions.db.")
        self._edited()
        self.remove_button.setEnabled(False)
        self.name.setFocus()

    async def _fill(self) -> None:
        from parley.core.providers.registry import resolve_base_url

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
        self.show_limits()

    def show_limits(self) -> None:
        """Say the default model's context window and output limit, and where each came
        from (the provider's model list, settings, the catalog or a default)."""
        pid = self.selected_id()
        config = self.hub.config(pid) if pid is not None else None
        listed = self.hub.listed_ids(config.id) if config is not None else None
        model = config.default_model or (listed[0] if listed else None) if config else None
        editable = config is not None and config.kind == "openai_compatible" and bool(model)
        self._form.setRowVisible(self.window_field, editable)
        if config is None or not model:
            self.limits_hint.setText("")
            self.window_field.show_for(None, None)
            return
        try:
            info = self.hub.model_info(f"{config.id}:{model}")
        except ParleyError:
            self.limits_hint.setText("")
            self.window_field.show_for(None, None)
            return
        self.limits_hint.setText(limits_text(info, config.name))
        self.window_field.show_for(model if editable else None, info)

    def _start_save(self, *, test: bool) -> None:
        if self._saving is not None and not self._saving.done():
            return  # a test or save is under way
        self._saving = self.dialog.tasks.spawn(self._save(test=test), name="save-provider")

    async def _save(self, *, test: bool = True) -> None:
        """Save the form's provider; with ``test``, only once its connection works (else
        say why and offer "Save anyway")."""
        pid = self.selected_id()
        kind = self._new_kind or (self.hub.config(pid).kind if pid else None)
        if kind is None:
            return
        if self.save_anyway.hasFocus():  # it is hidden now: its focus would go to a field
            self.save_button.setFocus(Qt.FocusReason.OtherFocusReason)
        self._edited()
        base_url, api_key = self.url.text().strip() or None, self.key.text() or None
        if test and (base_url or kind != "openai_compatible"):  # no address: said below
            check = await self._test(kind, pid, base_url, api_key)
            if not check.ok:
                self._show_message(f"{NOT_SAVED} {check.problem or ''}",
                                   anyway=not isinstance(check.error, ProviderConfigError))
                return
        try:
            config = await self.hub.add_provider(
                kind, name=self.name.text(), base_url=base_url, api_key=api_key,
                default_model=self.model.text().strip() or None, provider_id=pid)
        except ParleyError as exc:
            self._show_message(exc.message, anyway=False)
            return
        self._new_kind = None
        await self.refresh(select=config.id)
        self.saved_note.setVisible(True)
        self.dialog.providers_changed.emit()

    async def _test(self, kind: str, pid: str | None, base_url: str | None,
                    api_key: str | None) -> ConnectionCheck:
        """Test the form's settings as first-run set-up does (``ProviderHub.test_connection``);
        an edited provider whose key field is left empty is tried with its saved key.

        "Save provider" is disabled meanwhile; it gets the focus back if it had it (Qt
        gives a disabled button's focus to the next field, "Model for new chats", with
        its text selected: the next key typed replaced the model)."""
        had_focus = self.save_button.hasFocus()
        self.save_button.setEnabled(False)
        self.progress.setVisible(True)
        try:
            key = (api_key or "").strip() or None
            if key is None and pid is not None:
                try:
                    env_var = ENV_API_KEY.get(kind)  # type: ignore[call-overload]
                    saved = await asyncio.to_thread(self.hub.keys.get, pid, env_var)
                except ParleyError as exc:  # the key file cannot be read
                    return ConnectionCheck([], exc.message, exc)
                key = saved.value if saved is not None else None
            return await check_connection(self.hub.test_connection, kind, base_url, key,
                                          again="save again", timeout_s=TEST_TIMEOUT_S)
        finally:
            self.save_button.setEnabled(True)
            self.progress.setVisible(False)
            if had_focus:
                self.save_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show_message(self, text: str, *, anyway: bool) -> None:
        self.message.setText(text)
        self.message.setVisible(True)
        self.save_anyway.setVisible(anyway)

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
        self._edited()
        await self.refresh()
        self.dialog.providers_changed.emit()

    async def _set_default(self, text: str) -> None:
        if not isValid(self.default_error):  # the dialog closed before this task ran
            return
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


def limits_text(info: Any, provider_name: str) -> str:
    """One line for a model's limits and their sources, e.g. "Context window 200,000 tokens
    (reported by Anthropic); replies up to 64,000 tokens (from Parley's model catalog)."."""
    def source(key: str) -> str:
        return LIMIT_SOURCES.get(key, key).format(name=provider_name)

    return (f"Context window {info.context_window:,} tokens ({source(info.window_source)}); "
            f"replies up to {info.max_output_tokens:,} tokens ({source(info.output_source)}).")
