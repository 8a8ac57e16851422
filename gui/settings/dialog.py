"""The Settings dialog, generated from ``parley.core.settings.SETTINGS``.

Pages: Providers (``parley.gui.settings.providers``: the providers, their keys and
server addresses, the model for new chats, the prompt cache), Chat, Tools
(``parley.gui.settings.tools``: MCP servers, tool rounds), Compaction, Backups, Storage
(``parley.gui.settings.storage``: sessions.db or a PostgreSQL database),
Keyboard (rebind any action of ``parley.gui.commands.actions``: ``parley.gui.settings.keyboard``)
and
Experimental. Every generated field applies at once: a valid value is stored
in sessions.db (through the shared ``Settings`` of the store, so listeners
such as the cache timer hear it), an invalid one is refused with the rule
under the field. A model field (summary model, title model) offers the models
of the set-up providers in an editable combo box and refuses a
``provider:model`` whose provider is not set up
(``parley.core.compaction.settings.check_model_setting``).

When the providers change, ``providers_changed`` is emitted: the model fields
are re-listed, and the parent window's model picker is refreshed at once
(``ChatController.refresh_models``).

Pages scroll up and down, never sideways (:class:`PageArea`): their texts wrap,
their fields shrink to the page, and the dialog is never narrower than the
widest page needs (a long word, a big system font: the dialog grows instead).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from parley.core.compaction.settings import check_model_setting
from parley.core.errors import ParleyError
from parley.core.settings import (
    SECTIONS,
    Setting,
    Settings,
    SettingsError,
    in_section,
    spec,
    validate,
)
from parley.core.tasks import TaskSet
from parley.gui.header.model_picker import ModelChoice, model_choices
from parley.gui.settings.providers import ProvidersPage
from parley.gui.settings.widgets import (
    hint,
    model_combo,
    model_value,
    set_model_choices,
    show_model,
)

MODEL_PLACEHOLDER = "Automatic"
EXPERIMENTAL_INTRO = ("These features are new and may change or go away. "
                      "Each stays off until you turn it on.")
NAV_WIDTH = 170  # px: the list of sections (at least)
DEFAULT_SIZE = (780, 560)  # px; wider when a page needs it (see PageArea)
KEYBINDINGS = "keyboard.bindings"  # edited by the Keyboard page (gui/settings/keyboard.py)
Commit = Callable[[str, Any], None]


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
        lay.addWidget(hint(setting.description, self))
        self.error = hint("", self, error=True)
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
        if s.kind == "model":
            models = model_combo(self, MODEL_PLACEHOLDER if s.optional else "provider:model")
            models.activated.connect(lambda i: self._commit(s.key, model_value(models, i)))
            typed = models.lineEdit()  # editable: a model not listed can be typed
            assert typed is not None
            typed.editingFinished.connect(lambda: self._commit(s.key, model_value(models)))
            return models
        line = QLineEdit(self)
        if s.kind in ("int", "float"):
            line.setMaximumWidth(120)
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
            elif isinstance(w, QComboBox) and w.isEditable():
                show_model(w, value)
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

    def set_model_choices(self, choices: list[ModelChoice]) -> None:
        """Offer ``choices`` in a model field (no effect on other fields)."""
        if isinstance(self.input, QComboBox) and self.input.isEditable():
            set_model_choices(self.input, choices)


class PageArea(QScrollArea):
    """A Settings page in a scroll area that scrolls vertically only.

    Its minimum width is the page's (its widest word or field) plus the
    vertical scroll bar, so the dialog's layout never makes it narrower and no
    horizontal scroll bar is ever needed; it is recomputed whenever the page's
    layout changes (a longer text shown later). The area itself is no tab stop
    (it drew no focus mark, so Tab seemed to go nowhere): Tab goes from the
    section list to the page's first field, which the area scrolls into view.
    """

    def __init__(self, page: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(page)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        page = self.widget()
        width = page.minimumSizeHint().width() if page is not None else 0
        width += self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth()
        return QSize(width, super().minimumSizeHint().height())

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.LayoutRequest:  # the page's minimum may have changed
            self.updateGeometry()
        return super().viewportEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().event(event)


class SettingsDialog(QDialog):
    """Settings, one page per section; changes apply at once.

    Args:
        store: the app's ``AsyncStore``.
        hub: the app's ``ProviderHub``.
        parent: the main window.
        settings: the shared settings (default ``Settings.of(store)``).

    Signals:
        providers_changed: a provider was added, changed or removed.

    Attributes:
        ready: True once the stored values are shown (``loaded`` is that task).
        editors: ``{setting key: FieldEditor}`` of the generated fields.
        models: the models the model fields offer (``ModelChoice``), once listed.
    """

    providers_changed = Signal()

    def __init__(self, store: Any, hub: Any, parent: QWidget | None = None, *,
                 settings: Settings | None = None) -> None:
        super().__init__(parent)
        self.store, self.hub = store, hub
        self.settings = settings or Settings.of(store)
        self.tasks = TaskSet(on_user_error=self._show_problem)
        self.values: dict[str, Any] = {}
        self.editors: dict[str, FieldEditor] = {}
        self.models: list[ModelChoice] = []
        self._listing: asyncio.Task[None] | None = None
        self.ready = False
        self.setObjectName("SettingsDialog")
        self.setWindowTitle("Settings")
        self.setAccessibleName("Settings")
        self.resize(*DEFAULT_SIZE)
        self.nav = QListWidget(self)
        self.nav.setObjectName("SettingsNav")
        self.nav.setAccessibleName("Settings sections")
        self.nav.setSpacing(3)
        self.nav.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.stack = QStackedWidget(self)
        self.providers = ProvidersPage(self)
        builders: dict[str, Callable[[], QWidget]] = {
            "Providers": lambda: self.providers,
            "Backups": self._backups_page,
            "Storage": self._storage_page,
            "Keyboard": self._keyboard_page,
            "Tools": self._tools_page,
            "Experimental": lambda: self._generated_page("Experimental", EXPERIMENTAL_INTRO),
        }
        for section in SECTIONS:
            page = builders.get(section, lambda s=section: self._generated_page(s))()
            self.nav.addItem(section)
            self.stack.addWidget(self._scrolled(page))
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.setCurrentRow(0)
        # Wide enough for its longest section name (a big font too), 170 px at least.
        self.nav.setFixedWidth(max(NAV_WIDTH, self.nav.sizeHintForColumn(0)
                                   + 2 * self.nav.frameWidth() + 2 * self.nav.spacing() + 8))
        self.status = hint("", self, error=True)
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
        self.providers_changed.connect(self._providers_changed)
        self.loaded = self.tasks.spawn(self.load(), name="settings-load")

    # -- pages ----------------------------------------------------------------
    def _scrolled(self, page: QWidget) -> QScrollArea:
        return PageArea(page, self)

    def _generated_page(self, section: str, intro: str = "") -> QWidget:
        page = QWidget()
        lay = QVBoxLayout(page)
        if intro:
            lay.addWidget(hint(intro, page))
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

    def _backups_page(self) -> QWidget:
        """Where the backups are and when the last was made, then the ``backups.*`` fields."""
        from parley.gui.settings.backups import BackupsInfo

        page = QWidget()
        lay = QVBoxLayout(page)
        if getattr(self.store, "on_server", False):  # no file to back up
            lay.addWidget(hint("Your chats are in a PostgreSQL database (Settings → Storage): "
                               "Parley makes no backups of it; use the server's own "
                               "(pg_dump), or copy the chats to a file with "
                               "parley --copy-to.", page))
            lay.addStretch(1)
            return page
        self.backups_info = BackupsInfo(self.store.path, getattr(self.parentWidget(), "backups",
                                                                 None), self.tasks, page)
        lay.addWidget(self.backups_info)
        self.add_fields("Backups", lay, page)
        lay.addStretch(1)
        return page

    def _storage_page(self) -> QWidget:
        """Where the chats are; a PostgreSQL database for them (``parley.gui.settings.storage``)."""
        from parley.core import paths
        from parley.gui.settings.storage import StoragePage

        folder = paths.data_dir(getattr(self.parentWidget(), "home", None))
        page = QWidget()  # the other pages' margins, and its parts at the top, not spread
        lay = QVBoxLayout(page)
        self.storage = StoragePage(self.store, folder, self.tasks, page)
        lay.addWidget(self.storage)
        lay.addStretch(1)
        return page

    def _tools_page(self) -> QWidget:
        """The MCP servers (``parley.gui.settings.tools``), then the ``tools.*`` fields."""
        from parley.gui.settings.tools import ToolsPage

        page = QWidget()
        lay = QVBoxLayout(page)
        self.tools_page = ToolsPage(getattr(self.parentWidget(), "mcp", None),
                                    getattr(self.hub, "keys", None), self.tasks, page)
        lay.addWidget(self.tools_page)
        self.add_fields("Tools", lay, page)
        lay.addStretch(1)
        return page

    def _keyboard_page(self) -> QWidget:
        from parley.gui.settings.keyboard import KeymapEditor

        self.keyboard = KeymapEditor(self._commit_keymap)
        self.shortcuts = self.keyboard.table
        return self.keyboard

    def _commit_keymap(self, keymap: Any) -> None:
        """Store the Keyboard page's bindings (only what differs from the defaults)."""
        value = keymap.overrides()
        self.values[KEYBINDINGS] = value
        self.tasks.spawn(self.settings.set(KEYBINDINGS, value), name="keyboard bindings")

    # -- values ---------------------------------------------------------------
    async def load(self) -> None:
        """Show the stored values (and the providers)."""
        self.values = await self.settings.values()
        for key, editor in self.editors.items():
            editor.show_value(self.values[key])
        from parley.gui.commands.keymap import Keymap

        self.keyboard.set_keymap(Keymap(self.values.get(KEYBINDINGS)))
        await self.providers.refresh()
        self.ready = True
        self._list_models_soon()

    def _list_models_soon(self) -> None:
        """(Re)start listing the models; one listing at a time, stopped when the dialog closes
        (it may take seconds and must not touch the deleted fields)."""
        if self._listing is not None:
            self._listing.cancel()
        self._listing = self.tasks.spawn(self.list_models(), name="settings-models")

    async def list_models(self) -> None:
        """Offer the set-up providers' models (the model picker's list) in the model fields."""
        self.models = await model_choices(self.hub)
        for editor in self.editors.values():
            editor.set_model_choices(self.models)
        self.providers.show_limits()  # the listing brought the providers' own limits

    def _providers_changed(self) -> None:
        """Re-list the models here and in the parent window's model picker."""
        self._list_models_soon()
        window = self.parentWidget()
        chat = getattr(window, "chat", None)
        if chat is not None and getattr(chat, "hub", None) is self.hub:
            # On the window's own task set: the refresh outlives this dialog.
            tasks = getattr(window, "tasks", self.tasks)
            tasks.spawn(chat.models.refresh_models(), name="models")

    def commit(self, key: str, raw: Any) -> None:
        """Validate a field's value; store it at once, or show why it is refused.

        A refused value is named in the message ("… '0.01' is not. The setting was not
        changed."), and a one-line field (a number, a choice) shows the value in force
        again, so it never shows a value that is not the setting. A model field and a
        multi-line text keep what was typed, to be corrected in place: a model id or a
        long text is more than the message can hold (a text is committed while typing
        goes on).
        """
        editor = self.editors[key]
        try:
            value = validate(key, raw)
            if spec(key).kind == "model":
                check_model_setting(key, value, [c.id for c in self.hub.configs])
        except SettingsError as exc:
            editor.show_error(exc.message)
            kept = spec(key).kind == "model" or isinstance(editor.input, QPlainTextEdit)
            if key in self.values and not kept:
                editor.show_value(self.values[key])
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

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed (Appearance)
            from parley.gui.settings.widgets import restyle_hints

            restyle_hints(self)
        super().changeEvent(event)

    def done(self, result: int) -> None:
        if self._listing is not None:
            self._listing.cancel()
        # Closed before the stored values were read (Esc at once): the reads stop here,
        # they would fill fields deleted with the dialog. Writes already made go on.
        for reading in (self.loaded, getattr(getattr(self, "backups_info", None), "loaded",
                                             None)):
            if reading is not None and not reading.done():
                reading.cancel()
        for editor in self.editors.values():
            editor.flush()
        self.tools_page.close_page()
        super().done(result)
