"""The declared actions put into a window, and the keys in force applied to it.

:func:`install` makes a ``QAction`` per :data:`parley.gui.commands.actions.ACTIONS` entry in
the window and its menus; :func:`apply_keymap` makes a
:class:`parley.gui.commands.keymap.Keymap` the keys in force there (shortcuts, menu labels,
the composer's and the transcript's keys, the tooltips that name a key);
:func:`follow_store` loads the person's bindings once the window has its store and follows
Settings → Keyboard live.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QMainWindow, QPlainTextEdit, QWidget

from parley.gui.commands.actions import (
    ACTIONS,
    Action,
    ActionsWindow,
    by_id,
    key_text,
    native,
    refresh_enabled,
    run,
)
from parley.gui.commands.keymap import SETTING_KEY, Keymap, load
from parley.gui.commands.menu_bar import menu_bar_menus
from parley.gui.text.words import composer_hint

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.composer.widget import Composer
    from parley.gui.sidebar import Sidebar


class KeysWindow(ActionsWindow, Protocol):
    """What the actions and the keys in force are put into: the window's state
    (``parley.gui.window.state.WindowState``)."""

    qactions: dict[str, QAction]
    keymap: Keymap
    _keymap_store: AsyncStore | None  # the store whose saved keys the keymap took

    @property
    def store(self) -> AsyncStore | None: ...

    @property
    def tasks(self) -> TaskSet: ...

    @property
    def composer(self) -> Composer: ...

    @property
    def sidebar(self) -> Sidebar: ...


def install(state: KeysWindow, window: QMainWindow,
            actions: Iterable[Action] = ACTIONS) -> dict[str, QAction]:
    """Create a QAction per action, add them to ``window`` (whose state is ``state``) and
    its menus, load the keys.

    Global and sidebar actions get their keys as QAction shortcuts (the sidebar's on
    the chat list). Composer
    and transcript actions get a menu entry whose label shows their key (the
    composer and the transcript read those keys themselves). Actions with no
    handler in ``window.commands`` yet are disabled. The keymap starts at the
    defaults; the person's bindings are loaded once the window has its store
    (see :func:`follow_store`) and follow Settings → Keyboard live.

    Returns:
        {action id: QAction}, also stored as ``state.qactions``.
    """
    menus = menu_bar_menus(window)  # made before the first paint (WindowLayout.build)
    out: dict[str, QAction] = {}
    for action in actions:
        qa = QAction(action.label, window)
        qa.setObjectName(action.id)
        qa.setStatusTip(action.description)
        if action.context in ("global", "sidebar"):
            qa.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut
                                  if action.context == "sidebar"
                                  else Qt.ShortcutContext.WindowShortcut)
        qa.triggered.connect(lambda _checked=False, a=action: run(state, a))
        # The list's keys on the list (Enter on the sidebar's buttons stays theirs).
        (state.sidebar.tree if action.context == "sidebar" else window).addAction(qa)
        if action.menu:
            menus[action.menu].addAction(qa)
        out[action.id] = qa
    for menu in menus.values():
        menu.aboutToShow.connect(lambda: refresh_enabled(state))
    state.qactions = out
    apply_keymap(state, Keymap())
    state.composer.installEventFilter(
        _WindowKeysFirst(state.composer, lambda: getattr(state, "keymap", None)))
    undo = getattr(state, "undo", None)
    if undo is not None:  # Undo (Ctrl+Z, the palette) is there while the toast offers it
        undo.pending_changed.connect(lambda _pending: refresh_enabled(state))
    stack = getattr(state, "stack", None)
    if stack is not None:  # the set-up page and back: its keys follow what can run there
        stack.currentChanged.connect(lambda _index: refresh_enabled(state))
    follow_store(state, window)
    return out


class _WindowKeysFirst(QObject):
    """While the message box is empty, window shortcuts beat its editing keys.

    A text editor claims some keys for editing (Ctrl+K deletes to the end of
    the line on Linux and macOS) before window shortcuts see them. With
    nothing typed there is nothing to edit, so the window's shortcut runs
    (Ctrl+K opens the palette); with text typed the editor keeps its keys. The
    window's Undo (Ctrl+Z: the toast's Undo) runs when the box has nothing of its
    own to undo, typed text or not.

    Args:
        composer: the message box (the filter's parent).
        keymap: the keys in force (None until the window's keymap is made).
    """

    def __init__(self, composer: QPlainTextEdit, keymap: Callable[[], Keymap | None]) -> None:
        super().__init__(composer)
        self.composer, self.keymap = composer, keymap

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(event, QKeyEvent):
            return False
        key = key_text(event.key(), event.modifiers())
        keymap = self.keymap()
        action = keymap.global_action(key) if keymap is not None else None
        if action is None:
            return False
        if action.id == "edit.undo":  # the box's own Undo first, whatever it holds
            return not self.composer.document().isUndoAvailable()
        return not self.composer.toPlainText()


POLL_MS = 50


def follow_store(window: KeysWindow, parent: QObject) -> None:
    """Once ``window.store`` is set, run :func:`track_bindings` for it (checked by a
    timer of ``parent``, the window).

    The window opens its store after the first paint and has no signal for
    it; this checks every 50 ms and stops as soon as the store is there (or
    with the window). If the window calls :func:`track_bindings` itself
    right after opening the store, this check finds it done.
    """
    timer = QTimer(parent)
    timer.setInterval(POLL_MS)

    def check() -> None:
        store = window.store
        if store is None:
            return
        timer.stop()
        timer.deleteLater()
        if not store.closed:  # the window may have closed (and its store) meanwhile
            window.tasks.spawn(track_bindings(window), name="keymap-load")

    timer.timeout.connect(check)
    timer.start()


async def track_bindings(window: KeysWindow) -> None:
    """Apply the bindings stored in ``window.store`` and re-apply them whenever
    ``keyboard.bindings`` changes (e.g. from Settings → Keyboard). Idempotent
    per store."""
    from parley.core.settings import Settings
    from parley.core.store.errors import StoreClosed

    store = window.store
    if store is None or getattr(window, "_keymap_store", None) is store:
        return
    window._keymap_store = store
    try:
        keymap = await load(store)
    except StoreClosed:
        return  # the window closed while the bindings were read: nothing to apply
    apply_keymap(window, keymap)

    def changed(key: str, value: Any) -> None:
        if key == SETTING_KEY and window.store is store:
            apply_keymap(window, Keymap(value))

    unsubscribe = Settings.of(store).on_change(changed)
    if isinstance(window, QObject):
        window.destroyed.connect(lambda *_: unsubscribe())


def apply_keymap(window: KeysWindow, keymap: Keymap) -> None:
    """Make ``keymap`` the keys in force in ``window``: QAction shortcuts, menu labels,
    the composer's and the transcript's keys (they read ``window.keymap``)."""
    window.keymap = keymap
    for action_id, qa in window.qactions.items():
        action = by_id(action_id)
        keys = keymap.keys(action_id)
        if action.context in ("global", "sidebar"):
            qa.setShortcuts([QKeySequence(k) for k in keys])
        else:
            qa.setText(f"{action.label}\t{native(keys[0])}" if keys else action.label)
    composer = window.composer
    _name_keys(window, keymap)
    table = keymap.context_keys("composer")
    setter = getattr(composer, "set_keymap", None)
    if callable(setter):
        setter(table)
    else:
        # gui/composer/widget.py reads it on each key press
        composer._keymap = table
    refresh_enabled(window)


#: Buttons whose tooltip names a command's key: (attribute path from the window, action
#: id, what the button does). The words are the button's own; the key is the one in force.
KEY_TIPS: tuple[tuple[str, str, str], ...] = (
    ("composer_bar.attach_button", "composer.attach", "Attach images, PDFs or text files"),
    ("sidebar_button", "sidebar.toggle", "Show or hide the sidebar"),
    ("sidebar.new_button", "session.new", "New chat"),
)


def _first_key(keymap: Keymap, action_id: str) -> str:
    keys = keymap.keys(action_id)
    return native(keys[0]) if keys else ""


def _name_keys(window: KeysWindow, keymap: Keymap) -> None:
    """Where the window names a key outside the menus — the line under the message box,
    the send and stop button, :data:`KEY_TIPS` — name the one in force."""
    bar = getattr(window, "composer_bar", None)
    hint = getattr(bar, "hint", None)
    if hint is not None:
        hint.setText(composer_hint(*(_first_key(keymap, i) for i in
                                     ("composer.send", "composer.newline", "run.stop"))))
    set_keys = getattr(bar, "set_keys", None)
    if callable(set_keys):
        set_keys(_first_key(keymap, "composer.send"), _first_key(keymap, "run.stop"))
    toast = getattr(window, "toast", None)
    set_undo_key = getattr(toast, "set_undo_key", None)
    if callable(set_undo_key):
        set_undo_key(_first_key(keymap, "edit.undo"))
    for path, action_id, words in KEY_TIPS:
        widget: Any = window
        for name in path.split("."):
            widget = getattr(widget, name, None)
        if isinstance(widget, QWidget):
            key = _first_key(keymap, action_id)
            widget.setToolTip(f"{words} ({key})" if key else words)
