"""Every command of the window, declared once.

An :class:`Action` is data: id, label, default keys, the context where its keys
work, the menu it sits in. What it does is registered where that is written, in the
window's :class:`~parley.gui.commands.registry.Commands` (``window.commands``). The menu
bar, the composer's keys,
the transcript's message keys and its context menu, the command palette
(``parley.gui.commands.palette``), the shortcut help
(``parley.gui.commands.shortcut_help``) and Settings →
Keyboard (``parley.gui.settings.keyboard``) are all built from :data:`ACTIONS`; nothing
else declares a shortcut. The keys in force are a :class:`parley.gui.commands.keymap.Keymap`
(defaults plus the person's changes, persisted as ``keyboard.bindings``).

Contexts (where a key works):
    ``global``: anywhere in the main window (a ``QAction`` shortcut).
    ``composer``: while the message box has focus (Enter, Esc, Up …); the
        composer asks its key map what a key does.
    ``transcript``: while the conversation has focus; keys act on the focused
        message (j/k or the arrows move, c copies, e edits, f forks, r retries
        or resumes, Space folds and unfolds).
    ``sidebar``: while the chat list has focus.

Defaults follow the desktop chat apps: Enter sends,
Shift+Enter adds a line, Esc stops, Ctrl+N new chat, Ctrl+, settings, F2
renames, Up edits the last message, Ctrl+Shift+F forks here. Qt's StandardKey
is used where one exists (:class:`Std`), so macOS gets Cmd and its own keys;
portable texts like "Ctrl+N" are Cmd+N on macOS anyway.

Ctrl+K and Ctrl+Shift+P open the command palette, and the palette *is* the quick search:
what is typed matches commands, chat titles and (full-text, as you type) the
words of messages. Ctrl+F opens the message search (the palette until the
window has its own search view); Ctrl+Shift+F forks at the focused message.
In the message box, Ctrl+K (and every other window shortcut) wins while the
box is empty; once text is typed the box keeps the keys it uses for editing
on this platform (Ctrl+K deletes to the end of the line on Linux and macOS).

Handlers register into the window's :class:`~parley.gui.commands.registry.Commands`:
the window's own commands in ``WindowCommands.register``
(``parley.gui.commands.window_commands``), the message commands in
``TranscriptView.register_commands``. A command with no handler (the conversation is
not built yet) is disabled in the menus and left out of the palette.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from PySide6.QtCore import QKeyCombination, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence

from parley.gui.commands.menu_bar import MENUS as MENUS  # declared before the first paint
from parley.gui.text.words import key_name

if TYPE_CHECKING:
    from PySide6.QtGui import QAction

Context = Literal["global", "composer", "transcript", "sidebar"]
CONTEXTS: tuple[Context, ...] = ("global", "composer", "transcript", "sidebar")
PORTABLE = QKeySequence.SequenceFormat.PortableText
NATIVE = QKeySequence.SequenceFormat.NativeText
SK = QKeySequence.StandardKey


@dataclass(frozen=True, slots=True)
class Std:
    """A platform's standard key (Qt ``StandardKey``), with the key used where it has none."""

    key: QKeySequence.StandardKey
    fallback: str

    def resolve(self) -> tuple[str, ...]:
        """Portable texts of this platform's bindings (the fallback when there are none).

        Dedicated keys of multimedia keyboards ("Open", "Find", "Copy" keys) are
        left out: few keyboards have them and they crowd the help.
        """
        if QGuiApplication.instance() is not None:
            found = tuple(s.toString(PORTABLE) for s in QKeySequence.keyBindings(self.key)
                          if s.count() == 1 and _ordinary(first_combo(s).key()))
            if any(found):
                return tuple(k for k in found if k)
        return (self.fallback,)


def _ordinary(key: Qt.Key) -> bool:
    return key < Qt.Key.Key_Back and key != Qt.Key.Key_Help


Key = str | Std


@dataclass(frozen=True, slots=True)
class Action:
    """One command.

    Attributes:
        id: stable dotted id (``session.new``); key bindings and the palette use it.
        label: what menus, the palette and the help show ("New chat").
        keys: default keys, portable text ("Ctrl+N") or :class:`Std`; empty for none.
        context: where the keys work (see the module docstring).
        menu: the menu-bar menu holding it, or None.
        description: one sentence for the palette, menus' status tips and the help.
        palette: listed in the command palette (False for keys that only make
            sense where the focus is, like "new line" or "next message").
        keywords: other words the palette matches ("preferences").
    """

    id: str
    label: str
    keys: tuple[Key, ...]
    context: Context
    menu: str | None = None
    description: str = ""
    palette: bool = True
    keywords: str = ""

    @property
    def shortcuts(self) -> tuple[str, ...]:
        """The default keys as portable texts, standard keys resolved for this platform."""
        out: list[str] = []
        for key in self.keys:
            for text in key.resolve() if isinstance(key, Std) else (key,):
                if portable(text) not in out:
                    out.append(portable(text))
        return tuple(out)


class Handlers(Protocol):
    """The handlers of the actions (``parley.gui.commands.registry.Commands``)."""

    def available(self, action_id: str) -> bool: ...

    def run(self, action_id: str) -> Any: ...


class CommandsWindow(Protocol):
    """What actions run in: a window's handlers (``WindowState.commands``)."""

    @property
    def commands(self) -> Handlers: ...


class ActionsWindow(CommandsWindow, Protocol):
    """A window's handlers and its QActions by action id (``WindowState.qactions``)."""

    @property
    def qactions(self) -> dict[str, QAction]: ...


def available(action: Action, window: CommandsWindow) -> bool:
    """Whether ``window`` can run ``action`` now (a handler is registered and ready)."""
    commands = getattr(window, "commands", None)
    return commands is not None and commands.available(action.id)


def _goto(n: int) -> Action:
    return Action(f"session.goto.{n}", f"Go to chat {n}", (f"Ctrl+{n}",), "global",
                  None, f"Open chat number {n} in the list.", palette=False)


def _a(id_: str, label: str, keys: tuple[Key, ...], context: Context,
       menu: str | None, description: str, **kw: Any) -> Action:
    return Action(id_, label, keys, context, menu, description, **kw)


ACTIONS: tuple[Action, ...] = (
    # File
    _a("session.new", "New chat", ("Ctrl+N",), "global", "File",
       "Start a new chat in the current space."),
    _a("composer.attach", "Attach files…", (Std(SK.Open, "Ctrl+O"),), "global",
       "File",
       "Add images, PDFs or text files to the message you are writing.",
       keywords="image picture file pdf upload add"),
    _a("session.import", "Import conversation…", ("Ctrl+Shift+O",), "global",
       "File",
       "Import a chat history (a ChatGPT, Claude.ai or Open WebUI export) or one conversation "
       "(Parley JSON or Markdown, Anthropic or OpenAI messages) as new chats.",
       keywords="chatgpt claude open webui history conversations.json markdown"),
    _a("session.export", "Export chat…", (), "global", "File",
       "Save the current chat to a file."),
    _a("app.save_copy", "Save a copy now…", (), "global", "File",
       "Save a copy of every chat to a file you choose (also when sessions.db was deleted "
       "or moved while Parley runs).", keywords="backup rescue database sessions.db"),
    _a("app.settings", "Settings…", (Std(SK.Preferences, "Ctrl+,"),), "global",
       "File", "Providers, models, compaction and keyboard shortcuts.",
       keywords="preferences options configure"),
    _a("app.quit", "Quit", (Std(SK.Quit, "Ctrl+Q"),), "global", "File",
       "Close Parley; drafts and the open chat are kept.", keywords="exit"),
    # Chat
    _a("composer.send", "Send message", ("Return", "Enter"), "composer",
       "Chat", "Send what is in the message box."),
    _a("composer.ask_several", "Ask several models…", ("Ctrl+Shift+Return", "Ctrl+Shift+Enter"),
       "composer", "Chat",
       "Send the message to 2–4 models at once and compare their answers side by side; "
       "the one you choose continues the chat.", keywords="compare models beam split"),
    _a("composer.newline", "New line", ("Shift+Return", "Shift+Enter"), "composer",
       None,
       "Add a line to the message without sending it.", palette=False),
    _a("run.stop", "Stop", ("Esc",), "composer", "Chat",
       "Stop the reply; what arrived is kept.", keywords="cancel abort"),
    _a("composer.edit_last", "Edit last message", ("Up",), "composer",
       "Chat",
       "In an empty message box, bring back your last message to edit and resend."),
    _a("queue.send", "Send queued messages", ("Alt+Shift+Q",), "global", "Chat",
       "Send this chat's paused queue of messages, one after each reply (also Enter in the "
       "empty message box, or Enter on the queue).", keywords="queue resume waiting"),
    _a("queue.pause", "Pause queued messages", ("Alt+Shift+P",), "global", "Chat",
       "Hold this chat's queued messages until you send them (also Esc in the empty message "
       "box while a reply streams).", keywords="queue hold wait"),
    _a("queue.focus", "Go to queued messages", ("Alt+Q",), "global", "Chat",
       "Move to this chat's queued messages: Delete takes one back, F2 edits it, Enter sends "
       "the queue.", keywords="queue edit remove take back"),
    _a("run.retry", "Retry", ("Ctrl+R",), "global", "Chat",
       "Send the conversation again after an error or a stopped reply.",
       keywords="resume"),
    _a("run.regenerate", "Regenerate", ("Ctrl+Shift+R",), "global",
       "Chat",
       "Ask for another answer to your last message; the current one is kept (‹ › under "
       "the answer).",
       keywords="retry again another answer redo"),
    _a("run.regenerate_with", "Regenerate with another model…", (), "global",
       "Chat",
       "Pick a model for another answer to your last message; the current one is kept "
       "(‹ › under the answer).", keywords="retry again switch model"),
    _a("run.answer_with", "Answer with several models…", ("Ctrl+Shift+A",), "global",
       "Chat",
       "Have 2–4 models answer your last message again, side by side; the current answer "
       "is kept (‹ › under the answer).", keywords="compare models regenerate beam"),
    _a("session.fork", "Fork from here", ("Ctrl+Shift+F",), "global",
       "Chat",
       "Start a new chat that copies this one up to the focused message.", keywords="branch"),
    _a("session.compact", "Compact now", (), "global", "Chat",
       "Summarize the older turns of this chat so it fits the context window again.",
       keywords="summarize context"),
    _a("session.refresh_prompt", "Refresh memory, skills and tools", (), "global",
       "Chat",
       "Read mcp.json again, and send the space's current memory and skills, and the MCP "
       "servers' current tools, with this chat's next message (otherwise a chat keeps the "
       "ones it started with).",
       keywords="system prompt memory skills reload refresh tools mcp"),
    _a("session.rename", "Rename chat…", ("F2",), "global",
       "Chat",
       "Give the current chat a title.", keywords="title"),
    _a("session.pin", "Pin or unpin chat", (), "global", "Chat",
       "Keep the current chat at the top of its space."),
    _a("session.move", "Move chat to space…", (), "global", "Chat",
       "Put the current chat in another space."),
    _a("session.close", "Archive chat", ("Ctrl+W",), "global", "Chat",
       "Archive the current chat: it leaves the chat list (View ▸ Show or hide archived "
       "chats lists it again, Undo brings it back) and the next chat opens.",
       keywords="close hide"),
    _a("edit.undo", "Undo", ("Ctrl+Z",), "global", "Chat",
       "Take back the delete, archive, pin or move just done, while its notice offers "
       "Undo (in the message box, Ctrl+Z undoes typing first).",
       keywords="undo delete archive restore bring back"),
    _a("session.archive", "Unarchive chat", (), "global", "Chat",
       "Put the current chat, archived, back in the chat list.", keywords="restore"),
    _a("session.delete", "Delete chat…", ("Ctrl+Shift+Backspace",), "global",
       "Chat", "Delete the current chat after asking.",
       keywords="remove"),
    # Space (trial 17, shot-39: "New space…" was only in File, not with the other space
    # commands)
    _a("space.new", "New space…", ("Ctrl+Shift+N",), "global", "Space",
       "Create a space to group chats."),
    _a("space.rename", "Rename space…", (), "global", "Space",
       "Give the current space another name."),
    _a("space.documents", "Space documents…", ("Ctrl+Shift+D",), "global", "Space",
       "Add, replace or remove the files every chat in the current space is given.",
       keywords="files knowledge project attach pdf"),
    _a("space.delete", "Delete space…", (), "global", "Space",
       "Delete the current space after asking."),
    # View
    _a("palette.open", "Command palette…", ("Ctrl+K", "Ctrl+Shift+P"), "global",
       "View", "Run any command, or find a chat or a message by typing.",
       palette=False),
    _a("search.open", "Search messages…", (Std(SK.Find, "Ctrl+F"),), "global",
       "View",
       "Find words in every chat.", keywords="find"),
    _a("focus.composer", "Focus the message box", ("Ctrl+L", "Shift+Esc"), "global",
       "View", "Put the cursor in the message box."),
    _a("focus.transcript", "Focus the conversation", ("Ctrl+Shift+M",), "global",
       "View",
       "Move to the messages, to act on one with the keyboard."),
    _a("focus.sidebar", "Focus the chat list", ("Ctrl+Shift+E",), "global",
       "View", "Move to the list of chats."),
    _a("focus.next_pane", "Next pane", ("F6",), "global", "View",
       "Move the focus to the next part of the window."),
    _a("focus.previous_pane", "Previous pane", ("Shift+F6",), "global", "View",
       "Move the focus to the previous part of the window."),
    _a("sidebar.toggle", "Show or hide the sidebar", ("Ctrl+B", "Ctrl+Shift+S"), "global",
       "View", "Show or hide the list of chats.",
       keywords="chat list panel"),
    _a("view.zoom_in", "Zoom in", (Std(SK.ZoomIn, "Ctrl++"), "Ctrl+="), "global",
       "View", "Make the conversation's text bigger (kept).",
       keywords="text size bigger larger font"),
    _a("view.zoom_out", "Zoom out", (Std(SK.ZoomOut, "Ctrl+-"),), "global",
       "View", "Make the conversation's text smaller (kept).",
       keywords="text size smaller font"),
    _a("view.zoom_reset", "Actual size", ("Ctrl+0",), "global", "View",
       "Show the conversation's text at its normal size.", keywords="zoom reset 100% font"),
    _a("view.full_screen", "Full screen", ("F11",), "global",
       "View", "Fill the screen with the window, or stop."),
    _a("session.archived", "Show or hide archived chats", (), "global",
       "View", "List archived chats too, or not."),
    _a("session.next", "Next chat", ("Ctrl+Tab",), "global", "View",
       "Open the chat below in the list."),
    _a("session.previous", "Previous chat", ("Ctrl+Shift+Tab",), "global",
       "View", "Open the chat above in the list."),
    *(_goto(n) for n in range(1, 10)),
    # Message (the focused message of the conversation)
    _a("message.previous", "Previous message", ("Up", "K"), "transcript", None,
       "Focus the message above.", palette=False),
    _a("message.next", "Next message", ("Down", "J"), "transcript", None,
       "Focus the message below.", palette=False),
    _a("message.first", "First message", ("Home",), "transcript", None,
       "Focus the first message.", palette=False),
    _a("message.last", "Last message", ("End",), "transcript", None,
       "Focus the last message.", palette=False),
    _a("message.copy", "Copy message", ("C", Std(SK.Copy, "Ctrl+C")), "transcript",
       "Message", "Copy the focused message's text."),
    _a("message.copy_markdown", "Copy as Markdown", ("Shift+C",), "transcript",
       "Message", "Copy the focused message's Markdown source."),
    _a("message.edit", "Edit message", ("E",), "transcript", "Message",
       "Edit your focused message and send it again."),
    _a("message.fork", "Fork from here", ("F",), "transcript", "Message",
       "Start a new chat that copies this one up to the focused message.", palette=False),
    _a("message.retry", "Retry", ("R",), "transcript", "Message",
       "Retry after an error, or continue a stopped or cut-off reply.", palette=False),
    _a("message.regenerate", "Regenerate", ("Shift+R",), "transcript", "Message",
       "Another answer to the last message; the current one is kept (‹ › under it).",
       palette=False),
    _a("message.toggle", "Unfold", ("Space",), "transcript", "Message",
       "Unfold the focused message's tool calls, thinking or summary, or fold them again.",
       keywords="fold unfold expand collapse"),
    _a("message.more", "Show more", ("Return", "Enter"), "transcript", "Message",
       "Show the next part of the focused message when it is too long to show at once, "
       "or the older entries of an open summary card (its 'Show more' link).",
       keywords="long unfold next part"),
    # The ids keep their first names: keys a person set are saved under them.
    _a("message.version_previous", "Previous branch", ("Alt+Left", "["), "transcript",
       "Message",
       "Show the previous branch at the focused message (an earlier edit or answer).",
       keywords="version edit regenerate answer"),
    _a("message.version_next", "Next branch", ("Alt+Right", "]"), "transcript",
       "Message",
       "Show the next branch at the focused message (a later edit or answer).",
       keywords="version edit regenerate answer"),
    _a("message.continue", "Continue reply", (), "transcript", "Message",
       "Ask the model to go on with the focused reply, cut at its length limit.",
       keywords="more length limit"),
    # Chat list
    _a("sidebar.delete", "Delete chat…", ("Delete",), "sidebar",
       None, "Delete the selected chat after asking.",
       palette=False),
    _a("sidebar.open", "Open chat", ("Return", "Enter"), "sidebar", None,
       "Open the chat of the current row and go to its message box (the arrow keys move "
       "the current row; the chat they reach shows, the focus stays in the list).",
       palette=False),
    _a("sidebar.leave", "Back to the message box", ("Esc",), "sidebar", None,
       "Leave the chat list for the message box.", palette=False),
    # Help
    _a("help.shortcuts", "Keyboard shortcuts", ("Ctrl+/", Std(SK.HelpContents, "F1")), "global",
       "Help", "List every command and its keys.", keywords="keys hotkeys help"),
)

_BY_ID: dict[str, Action] = {a.id: a for a in ACTIONS}


def by_id(action_id: str) -> Action:
    """Return the action with ``action_id``.

    Raises:
        KeyError: no such action.
    """
    return _BY_ID[action_id]


def first_combo(seq: QKeySequence) -> QKeyCombination:
    """The first key combination of ``seq`` (Qt's ``seq[0]``; PySide6's type stubs leave
    out ``QKeySequence.__getitem__``). ``seq`` must not be empty."""
    return cast(Sequence[QKeyCombination], seq)[0]


def portable(seq: str | QKeySequence) -> str:
    """Canonical portable text of a key sequence ("ctrl+n" → "Ctrl+N").

    Backtab is Shift+Tab: the key Shift+Tab sends is ``Key_Backtab``, and the X11 key
    mapper matches it against both, so "Ctrl+Backtab" and "Ctrl+Shift+Tab" are the same
    keys and read "Ctrl+Shift+Tab" here. Two shortcuts of one action that Qt matches for
    the same press are ambiguous and neither fires ("QAction::event: Ambiguous shortcut
    overload"), so keys must compare equal when the press is the same.
    """
    keys = QKeySequence(seq)
    if keys.count() == 1 and first_combo(keys).key() == Qt.Key.Key_Backtab:
        mods = first_combo(keys).keyboardModifiers() | Qt.KeyboardModifier.ShiftModifier
        keys = QKeySequence(QKeyCombination(mods, Qt.Key.Key_Tab))
    return keys.toString(PORTABLE)


def native(seq: str) -> str:
    """How a key is written on this platform ("Ctrl+N", or "⌘N" on macOS); the main Enter
    key reads "Enter" (:func:`parley.gui.text.words.key_name`)."""
    return key_name(QKeySequence(seq).toString(NATIVE))


def composer_keymap(actions: Iterable[Action] = ACTIONS) -> dict[str, Action]:
    """Return {portable key text: action} for the composer's default keys ("Return", "Esc" …)."""
    return {portable(s): a for a in actions if a.context == "composer" for s in a.shortcuts}


def key_text(key: int, modifiers: Qt.KeyboardModifier) -> str:
    """Return the portable text of a key press (keypad flag dropped), e.g. "Shift+Return"."""
    mods = modifiers & ~Qt.KeyboardModifier.KeypadModifier
    return portable(QKeySequence(Qt.KeyboardModifier(mods).value | key))


# -- running in the window -----------------------------------------------------------
def run(window: CommandsWindow, action: Action) -> Any:
    """Run ``action`` in ``window`` if it is available there; False otherwise."""
    return window.commands.run(action.id)


def refresh_enabled(window: ActionsWindow) -> None:
    """Enable exactly the QActions whose handler can run now."""
    for action_id, qa in getattr(window, "qactions", {}).items():
        qa.setEnabled(available(by_id(action_id), window))
