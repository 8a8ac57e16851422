"""The Settings dialog, generated from ``core.settings.SETTINGS``.

Pages: Providers (the providers, their keys and server addresses, the model
for new chats, the prompt cache), Chat, Compaction, Keyboard (rebind any
action of ``gui.actions``: ``gui.keymap_editor``) and Experimental. Every generated
field applies at once: a valid value is stored in sessions.db (through the
shared ``Settings`` of the store, so listeners such as the cache timer hear
it), an invalid one is refused with the rule under the field. A provider's
fields are saved together with "Save provider" (a key and its server go
together).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.errors import ParleyError
from core.settings import SECTIONS, Setting, Settings, SettingsError, in_section, validate
from gui import appearance, dialogs
from gui.async_bridge import TaskSet

KIND_LABELS = {"anthropic": "Anthropic", "openai": "OpenAI",
               "openai_compatible": "OpenAI-compatible server"}
SOURCE_WORDS = {"settings": "set here", "environment": "from the environment",
                "default": "the default", "keyring": "saved in the keyring",
                "file": "saved in Parley's key file", "none": "none"}
EXPERIMENTAL_INTRO = ("These features are new and may change or go away. "
                      "Each stays off until you turn it on.")
KEYBINDINGS = "keyboard.bindings"  # edited by the Keyboard page (gui/keymap_editor.py)
Commit = Callable[[str, Any], None]


def _hint(text: str, parent: QWidget, *, error: bool = False) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName("SettingError" if error else "FieldHint")
    label.setWordWrap(True)
    scheme = appearance.current()
    label.setStyleSheet(f"color: {scheme.danger if error else scheme.muted}; font-size: 11px;")
    label.setVisible(bool(text) or not error)
    return label


class FieldEditor(QWidget):
    """The input of one declared setting, its one-line description and its error line."""

    def __init__(self, setting: Setting, commit: Commit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setting = setting
        self._commit = commit
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 8)
        lay.setSpacing(3)
        self.input: QWidget = self._build_input(setting)
        self.input.setAccessibleName(setting.label)
        self.input.setAccessibleDescription(setting.description)
        if not isinstance(self.input, QCheckBox):
            label = QLabel(setting.label, self)
            label.setBuddy(self.input)
            lay.addWidget(label)
        row = QHBoxLayout()
        row.addWidget(self.input, 1 if setting.kind in ("text", "model") else 0)
        if setting.unit:
            row.addWidget(QLabel(setting.unit, self))
        row.addStretch(0 if setting.kind in ("text", "model") else 1)
        lay.addLayout(row)
        lay.addWidget(_hint(setting.description, self))
        self.error = _hint("", self, error=True)
        lay.addWidget(self.error)

    def _build_input(self, s: Setting) -> QWidget:
        if s.kind == "bool":
            box = QCheckBox(s.label, self)
            box.toggled.connect(lambda on: self._commit(s.key, on))
            return box
        if s.kind == "choice":
            combo = QComboBox(self)
            for value, label in s.choices:
                combo.addItem(label, value)
            combo.activated.connect(lambda i: self._commit(s.key, combo.itemData(i)))
            return combo
        if s.multiline:
            edit = QPlainTextEdit(self)
            edit.setTabChangesFocus(True)
            edit.setFixedHeight(110)
            self._debounce = QTimer(self, singleShot=True, interval=500)
            self._debounce.timeout.connect(self.flush)
            edit.textChanged.connect(self._debounce.start)
            return edit
        line = QLineEdit(self)
        if s.kind in ("int", "float"):
            line.setMaximumWidth(120)
        if s.kind == "model" and s.optional:
            line.setPlaceholderText("Automatic")
        line.editingFinished.connect(lambda: self._commit(s.key, line.text()))
        return line

    def flush(self) -> None:
        """Commit a multi-line text now (it is otherwise committed 0.5 s after typing)."""
        if isinstance(self.input, QPlainTextEdit):
            self._debounce.stop()
            self._commit(self.setting.key, self.input.toPlainText())

    def show_value(self, value: Any) -> None:
        """Show ``value`` without committing it."""
        w = self.input
        w.blockSignals(True)
        try:
            if isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            elif isinstance(w, QComboBox):
                w.setCurrentIndex(max(0, w.findData(value)))
            elif isinstance(w, QPlainTextEdit):
                if w.toPlainText() != (value or ""):
                    w.setPlainText(value or "")
            elif isinstance(w, QLineEdit):
                w.setText("" if value is None else str(value))
        finally:
            w.blockSignals(False)

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))


class SettingsDialog(QDialog):
    """Settings, one page per section; changes apply at once.

    Args:
        store: the app's ``AsyncStore``.
        hub: the app's ``ProviderHub``.
        parent: the main window.
        settings: the shared settings (default ``Settings.of(store)``).

    Attributes:
        ready: True once the stored values are shown (``loaded`` is that task).
        editors: ``{setting key: FieldEditor}`` of the generated fields.
    """

    def __init__(self, store: Any, hub: Any, parent: QWidget | None = None, *,
                 settings: Settings | None = None) -> None:
        super().__init__(parent)
        self.store, self.hub = store, hub
        self.settings = settings or Settings.of(store)
        self.tasks = TaskSet(on_user_error=self._show_problem)
        self.values: dict[str, Any] = {}
        self.editors: dict[str, FieldEditor] = {}
        self.ready = False
        self.setObjectName("SettingsDialog")
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.resize(780, 560)
        self.nav = QListWidget(self)
        self.nav.setObjectName("SettingsNav")
        self.nav.setAccessibleName("Settings sections")
        self.nav.setFixedWidth(170)
        self.nav.setSpacing(3)
        self.stack = QStackedWidget(self)
        self.providers = ProvidersPage(self)
        builders: dict[str, Callable[[], QWidget]] = {
            "Providers": lambda: self.providers,
            "Keyboard": self._keyboard_page,
            "Experimental": lambda: self._generated_page("Experimental", EXPERIMENTAL_INTRO),
        }
        for section in SECTIONS:
            page = builders.get(section, lambda s=section: self._generated_page(s))()
            self.nav.addItem(section)
            self.stack.addWidget(self._scrolled(page))
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.setCurrentRow(0)
        self.status = _hint("", self, error=True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        body = QHBoxLayout()
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(body, 1)
        lay.addWidget(self.status)
        lay.addWidget(buttons)
        for button in self.findChildren(QPushButton):
            # Enter in a field commits that field; it must never press Remove or Close.
            button.setAutoDefault(False)
            button.setDefault(False)
        self.loaded = self.tasks.spawn(self.load(), name="settings-load")

    # -- pages ----------------------------------------------------------------
    def _scrolled(self, page: QWidget) -> QScrollArea:
        area = QScrollArea(self)
        area.setWidgetResizable(True)
        area.setWidget(page)
        return area

    def _generated_page(self, section: str, intro: str = "") -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        if intro:
            lay.addWidget(_hint(intro, page))
        self.add_fields(section, lay, page)
        lay.addStretch(1)
        return page

    def add_fields(self, section: str, layout: QVBoxLayout, parent: QWidget) -> None:
        """Add an editor for each declared setting of ``section`` to ``layout``."""
        for s in in_section(section):  # type: ignore[arg-type]
            editor = FieldEditor(s, self.commit, parent)
            editor.show_value(s.default)
            self.editors[s.key] = editor
            layout.addWidget(editor)

    def _keyboard_page(self) -> QWidget:
        from gui.keymap_editor import KeymapEditor

        self.keyboard = KeymapEditor(self._commit_keymap)
        self.shortcuts = self.keyboard.table
        return self.keyboard

    def _commit_keymap(self, keymap: Any) -> None:
        """Store the Keyboard page's bindings (only what differs from the defaults)."""
        value = keymap.overrides()
        self.values[KEYBINDINGS] = value
        self.tasks.spawn(self.settings.set(KEYBINDINGS, value), name="keyboard bindings")

    def show_section(self, section: str) -> None:
        """Show the page of ``section`` (one of ``core.settings.SECTIONS``)."""
        self.nav.setCurrentRow(SECTIONS.index(section))  # type: ignore[arg-type]

    # -- values ---------------------------------------------------------------
    async def load(self) -> None:
        """Show the stored values (and the providers)."""
        self.values = await self.settings.values()
        for key, editor in self.editors.items():
            editor.show_value(self.values[key])
        from gui.keymap import Keymap

        self.keyboard.set_keymap(Keymap(self.values.get(KEYBINDINGS)))
        await self.providers.refresh()
        self.ready = True

    def commit(self, key: str, raw: Any) -> None:
        """Validate a field's value; store it at once, or show why it is refused."""
        editor = self.editors[key]
        try:
            value = validate(key, raw)
        except SettingsError as exc:
            editor.show_error(exc.message)
            return
        editor.show_error("")
        editor.show_value(value)
        if key in self.values and self.values[key] == value:
            return
        self.values[key] = value
        self.tasks.spawn(self._store(key, value), name=f"setting {key}")

    async def _store(self, key: str, value: Any) -> None:
        await self.settings.set(key, value)
        if key.startswith("cache."):
            await self.hub.load()  # adapters are rebuilt with the new cache settings

    def _show_problem(self, error: ParleyError) -> None:
        self.status.setText(error.message)
        self.status.setVisible(True)

    def done(self, result: int) -> None:
        for editor in self.editors.values():
            editor.flush()
        super().done(result)


class ProvidersPage(QWidget):
    """The providers, their keys and addresses, the model for new chats, the prompt cache."""

    def __init__(self, dialog: SettingsDialog) -> None:
        super().__init__()
        self.dialog, self.hub = dialog, dialog.hub
        self._new_kind: str | None = None
        self.list = QListWidget(self)
        self.list.setAccessibleName("Providers")
        self.list.setMaximumHeight(120)
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
        self.url_hint, self.key_hint = _hint("", self), _hint("", self)
        form = QFormLayout()
        form.addRow("Kind", self.kind_label)
        for label, edit, hint in (("Name", self.name, None), ("Server address", self.url,
                                  self.url_hint), ("API key", self.key, self.key_hint),
                                  ("Default model", self.model, None)):
            edit.setAccessibleName(label)
            form.addRow(label, edit)
            if hint is not None:
                form.addRow("", hint)
        self.save_button = QPushButton("Save provider", self)
        self.save_button.clicked.connect(lambda: self.dialog.tasks.spawn(self._save()))
        self.message = _hint("", self, error=True)
        self.default_model = QLineEdit(self)
        self.default_model.setAccessibleName("Model for new chats")
        self.default_model.editingFinished.connect(
            lambda: self.dialog.tasks.spawn(self._set_default(self.default_model.text())))
        self.default_error = _hint("", self, error=True)
        self.keys_note = _hint("", self)
        buttons = QHBoxLayout()
        for w in (add, self.remove_button):
            buttons.addWidget(w)
        buttons.addStretch(1)
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
        self.dialog.tasks.spawn(self._fill())

    def start_new(self, kind: str) -> None:
        """Clear the form for a new provider of ``kind``."""
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self._new_kind = kind
        self.kind_label.setText(KIND_LABELS[kind])
        for edit in (self.name, self.url, self.key, self.model):
            edit.clear()
        self.name.setText(KIND_LABELS[kind] if kind != "openai_compatible" else "")
        self.url_hint.setText("For example http://localhost:11434/v1 (Ollama)."
                              if kind == "openai_compatible" else "Empty: the usual address.")
        self.key_hint.setText("Saved in the keyring, never in sessions.db.")
        self.message.setVisible(False)
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
        self.key_hint.setText(f"Key: {SOURCE_WORDS[source]}. Type a new one to replace it."
                              if source != "none" else "No key (fine for most local servers).")

    async def _save(self) -> None:
        pid = self.selected_id()
        kind = self._new_kind or (self.hub.config(pid).kind if pid else None)
        if kind is None:
            return
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
        await self.refresh()

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
