"""Every command of the window, declared once.

An :class:`Action` is data: id, label, default shortcut, the context where the
shortcut works, the menu it sits in and its handler. The menu bar, the
composer's key map (and later the command palette, the shortcut help and the
keyboard settings page) are all built from :data:`ACTIONS`; nothing else
declares a shortcut.

Contexts:
    ``window``: a shortcut of the whole main window (a ``QAction``).
    ``composer``: a key the composer handles while it has focus (Enter, Esc,
        Up …); the composer asks :func:`composer_keymap` what a key does.
    ``sidebar``: a shortcut active while the session list has focus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from gui.main_window import MainWindow

Context = Literal["window", "composer", "sidebar"]
Handler = Callable[["MainWindow"], Any]


@dataclass(frozen=True, slots=True)
class Action:
    """One command.

    Attributes:
        id: stable dotted id (``session.new``); keymaps and the palette use it.
        label: what menus and the palette show ("New chat").
        shortcuts: default key sequences in ``QKeySequence`` portable text
            ("Ctrl+N"); the first is shown in menus. Empty for none.
        context: where the shortcut works (see module docstring).
        handler: called with the main window. A composer handler may return
            False to let the key fall through to the text editor.
        menu: the menu-bar menu holding it, or None.
        description: one sentence for the palette and help.
    """

    id: str
    label: str
    shortcuts: tuple[str, ...]
    context: Context
    handler: Handler
    menu: str | None = None
    description: str = ""


def _goto(n: int) -> Action:
    return Action(
        f"session.goto.{n}", f"Go to chat {n}", (f"Ctrl+{n}",), "window",
        lambda w: w.goto_session(n - 1), None, f"Open the {n}th chat in the sidebar.",
    )


ACTIONS: tuple[Action, ...] = (
    Action("session.new", "New chat", ("Ctrl+N",), "window",
           lambda w: w.new_session(), "File", "Start a new chat in the current space."),
    Action("session.rename", "Rename chat…", ("F2",), "window",
           lambda w: w.rename_current_session(), "File", "Give the current chat a title."),
    Action("session.delete", "Delete chat…", ("Ctrl+Shift+Backspace",), "window",
           lambda w: w.delete_current_session(), "File",
           "Delete the current chat after asking."),
    Action("app.quit", "Quit", ("Ctrl+Q",), "window", lambda w: w.close(), "File",
           "Close Parley; drafts and the open chat are kept."),
    Action("session.next", "Next chat", ("Ctrl+Tab",), "window",
           lambda w: w.step_session(+1), "View", "Open the chat below in the sidebar."),
    Action("session.previous", "Previous chat", ("Ctrl+Shift+Tab", "Ctrl+Backtab"), "window",
           lambda w: w.step_session(-1), "View", "Open the chat above in the sidebar."),
    Action("composer.focus", "Focus the message box", ("Ctrl+L",), "window",
           lambda w: w.focus_composer(), "View", "Put the cursor in the message box."),
    Action("sidebar.toggle", "Show or hide the sidebar", ("Ctrl+Shift+S",), "window",
           lambda w: w.toggle_sidebar(), "View", "Show or hide the list of chats."),
    *(_goto(n) for n in range(1, 10)),
    Action("composer.send", "Send message", ("Return", "Enter"), "composer",
           lambda w: w.send_from_composer(), "Chat", "Send what is in the message box."),
    Action("composer.newline", "New line", ("Shift+Return", "Shift+Enter"), "composer",
           lambda w: w.composer.insertPlainText("\n"), None,
           "Add a line to the message without sending it."),
    Action("run.stop", "Stop", ("Esc",), "composer", lambda w: w.stop_run(), "Chat",
           "Stop the reply; what arrived is kept."),
    Action("composer.edit_last", "Edit last message", ("Up",), "composer",
           lambda w: w.edit_last_message(), "Chat",
           "In an empty message box, bring back your last message to edit and resend."),
    Action("run.retry", "Retry", ("Ctrl+R",), "window", lambda w: w.retry_run(), "Chat",
           "Send the conversation again after an error or a stopped reply."),
    Action("sidebar.delete", "Delete chat…", ("Delete",), "sidebar",
           lambda w: w.delete_current_session(), None, "Delete the selected chat after asking."),
)

MENUS: tuple[str, ...] = ("File", "View", "Chat")


def by_id(action_id: str) -> Action:
    """Return the action with ``action_id``.

    Raises:
        KeyError: no such action.
    """
    for action in ACTIONS:
        if action.id == action_id:
            return action
    raise KeyError(action_id)


def _portable(seq: str | QKeySequence) -> str:
    return QKeySequence(seq).toString(QKeySequence.SequenceFormat.PortableText)


def composer_keymap(actions: Iterable[Action] = ACTIONS) -> dict[str, Action]:
    """Return {portable key text: action} for the composer's keys ("Return", "Esc" …)."""
    return {_portable(s): a for a in actions if a.context == "composer" for s in a.shortcuts}


def key_text(key: int, modifiers: Qt.KeyboardModifier) -> str:
    """Return the portable text of a key press (keypad flag dropped), e.g. "Shift+Return"."""
    mods = modifiers & ~Qt.KeyboardModifier.KeypadModifier
    return _portable(QKeySequence(Qt.KeyboardModifier(mods).value | key))


def install(window: MainWindow, actions: Iterable[Action] = ACTIONS) -> dict[str, QAction]:
    """Create a QAction per window/sidebar action, add them to ``window`` and its menus.

    Composer actions get a menu entry too (without a shortcut, to keep the
    composer the one place that reads those keys); their shortcut is shown in
    the label's tab stop so the menu still teaches it.

    Returns:
        {action id: QAction}, also stored as ``window.qactions``.
    """
    menus = {name: window.menuBar().addMenu(f"&{name}") for name in MENUS}
    out: dict[str, QAction] = {}
    for action in actions:
        label = action.label
        qa = QAction(label, window)
        qa.setObjectName(action.id)
        qa.setStatusTip(action.description)
        if action.context == "composer":
            if action.shortcuts:
                qa.setText(f"{label}\t{QKeySequence(action.shortcuts[0]).toString()}")
        else:
            qa.setShortcuts([QKeySequence(s) for s in action.shortcuts])
            qa.setShortcutContext(
                Qt.ShortcutContext.WidgetWithChildrenShortcut
                if action.context == "sidebar"
                else Qt.ShortcutContext.WindowShortcut
            )
        qa.triggered.connect(lambda _checked=False, a=action: a.handler(window))
        target = window.sidebar if action.context == "sidebar" else window
        target.addAction(qa)
        if action.menu:
            menus[action.menu].addAction(qa)
        out[action.id] = qa
    window.qactions = out
    return out
