"""The keys in force: each action's default keys plus the person's changes.

Bindings persist in sessions.db as the setting ``keyboard.bindings``:
``{action id: [portable key text, …]}`` holding only the actions whose keys
differ from their defaults (an empty list: no key at all). Ids this Parley
does not know and keys Qt cannot read are ignored when loading, so a file
from an older or newer Parley still opens.

Two rules keep every key meaning one thing (qutebrowser's keyconf works the same way):

* **Conflict**: two actions on the same key where both can be active at once —
  the same context, or one of them global (a window shortcut fires whatever
  has the focus).
* **Reserved**: a global key that is typing (a letter, Return, an arrow …
  without Ctrl/Alt/Meta) or one of the platform's text-editing keys (copy,
  paste, undo …) would be taken away from the message box.

:meth:`Keymap.bind` refuses both with a :class:`KeymapError` saying which
action already has the key; :meth:`Keymap.problems` lists any that exist
(the defaults have none — a test checks it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QWidget

from parley.core.errors import ParleyError
from parley.gui.commands.actions import (
    ACTIONS,
    Action,
    Context,
    first_combo,
    native,
    portable,
)
from parley.gui.text.words import keys_shown

log = logging.getLogger(__name__)

SETTING_KEY = "keyboard.bindings"
WHERE: dict[Context, str] = {"global": "Anywhere", "composer": "Message box",
                             "transcript": "Conversation", "sidebar": "Chat list"}
_COMMAND_MODS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                 | Qt.KeyboardModifier.MetaModifier)
_TYPING_KEYS = {Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Backspace, Qt.Key.Key_Delete,
                Qt.Key.Key_Tab, Qt.Key.Key_Backtab, Qt.Key.Key_Left, Qt.Key.Key_Right,
                Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home, Qt.Key.Key_End,
                Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Escape, Qt.Key.Key_Insert}
_EDITING = ("Copy", "Cut", "Paste", "Undo", "Redo", "SelectAll", "DeleteStartOfWord",
            "DeleteEndOfWord", "MoveToNextWord", "MoveToPreviousWord", "SelectNextWord",
            "SelectPreviousWord", "MoveToStartOfDocument", "MoveToEndOfDocument",
            "SelectStartOfDocument", "SelectEndOfDocument", "SelectStartOfLine",
            "SelectEndOfLine")


class KeymapError(ParleyError):
    """A key binding was refused; the keys in force are unchanged."""


def normalize(text: str) -> str:
    """Return the canonical portable text of one key combination ("ctrl+n" → "Ctrl+N").

    Raises:
        KeymapError: not one key combination Qt can read ("", "Ctrl+", "Ctrl+K, Ctrl+S").
    """
    seq = QKeySequence(text.strip())
    if seq.count() != 1 or first_combo(seq).key() in (Qt.Key.Key_unknown, 0):
        raise KeymapError(f"“{text}” is not a key combination Parley can use. "
                          "Press one key, with or without Ctrl, Alt or Shift.")
    return portable(seq)


def overlap(a: Context, b: Context) -> bool:
    """Whether keys of contexts ``a`` and ``b`` can be live at the same time."""
    return a == b or "global" in (a, b)


#: Global actions that mean the same as a text box's editing command: that command's keys
#: are theirs too (a text box with something to undo undoes it first; elsewhere, or with
#: nothing typed to undo, the window's Undo takes back the delete the toast offers).
_EDITING_ALIKE = {"edit.undo": "Undo"}


def reserved_reason(key: str, action_id: str = "") -> str | None:
    """Why ``key`` cannot be a window-wide shortcut (of ``action_id``), or None when it can."""
    combo = first_combo(QKeySequence(key))
    mods = combo.keyboardModifiers()
    k = combo.key()
    printable = Qt.Key.Key_Space <= k <= Qt.Key.Key_AsciiTilde
    shifted_escape = k == Qt.Key.Key_Escape and bool(mods)  # Shift+Esc is no typing
    if not mods & _COMMAND_MODS and (printable or k in _TYPING_KEYS) and not shifted_escape:
        return "it is used for typing"
    for name in _EDITING:
        if _EDITING_ALIKE.get(action_id) == name:
            continue
        std = getattr(QKeySequence.StandardKey, name)
        if any(portable(s) == key for s in QKeySequence.keyBindings(std)):
            return "text boxes use it for editing"
    return None


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two actions that answer the same key at the same time."""

    key: str
    first: Action
    second: Action

    def message(self) -> str:
        return (f"{native(self.key)} is bound to both “{self.first.label}” and "
                f"“{self.second.label}”.")


class Keymap:
    """The keys of every action: defaults, overridden by ``overrides``. Immutable.

    Args:
        overrides: ``{action id: [key texts]}`` as stored in ``keyboard.bindings``;
            unknown ids and unreadable keys are dropped (logged).
        actions: the declared actions (default :data:`parley.gui.commands.actions.ACTIONS`).
    """

    def __init__(self, overrides: Mapping[str, Sequence[str]] | None = None,
                 actions: Sequence[Action] = ACTIONS) -> None:
        self.actions = tuple(actions)
        self._by_id = {a.id: a for a in self.actions}
        self._defaults = {a.id: a.shortcuts for a in self.actions}
        self._keys = dict(self._defaults)
        for action_id, keys in (overrides or {}).items():
            if action_id not in self._by_id or not isinstance(keys, list | tuple):
                log.info("ignoring key binding of unknown action %r", action_id)
                continue
            self._keys[action_id] = tuple(_readable(keys))
        self._tables: dict[Context, dict[str, Action]] = {}

    # -- reading ----------------------------------------------------------------
    def action(self, action_id: str) -> Action:
        """The declared action (KeyError when unknown)."""
        return self._by_id[action_id]

    def keys(self, action_id: str) -> tuple[str, ...]:
        """The portable key texts of an action ("Ctrl+N"); empty when it has none."""
        return self._keys[action_id]

    def shown(self, action_id: str) -> str:
        """The keys as this platform writes them, comma-separated ("" for none)."""
        return ", ".join(keys_shown(native(k) for k in self._keys[action_id]))

    def is_default(self, action_id: str) -> bool:
        return self._keys[action_id] == self._defaults[action_id]

    def overrides(self) -> dict[str, list[str]]:
        """What to store in ``keyboard.bindings``: the actions whose keys were changed."""
        return {i: list(k) for i, k in self._keys.items() if k != self._defaults[i]}

    def context_keys(self, context: Context) -> dict[str, Action]:
        """``{portable key text: action}`` of one context (the first action wins a tie)."""
        table = self._tables.get(context)
        if table is None:
            table = {}
            for a in self.actions:
                if a.context == context:
                    for k in self._keys[a.id]:
                        table.setdefault(k, a)
            self._tables[context] = table
        return table

    def global_action(self, key: str) -> Action | None:
        """The global action bound to ``key`` (portable text), if any."""
        return self.context_keys("global").get(key)

    def message_keys(self) -> dict[str, str]:
        """``{key: message action name}`` for the transcript ("J" → "next")."""
        return {k: a.id.removeprefix("message.")
                for k, a in self.context_keys("transcript").items()}

    def clashes(self, action_id: str, key: str) -> list[Action]:
        """Other actions live at the same time as ``action_id`` that are bound to ``key``."""
        mine = self._by_id[action_id].context
        return [a for a in self.actions if a.id != action_id and key in self._keys[a.id]
                and overlap(mine, a.context)]

    def conflicts(self) -> list[Conflict]:
        """Every pair of actions answering the same key at the same time."""
        out: list[Conflict] = []
        for i, a in enumerate(self.actions):
            for b in self.actions[i + 1:]:
                if overlap(a.context, b.context):
                    out += [Conflict(k, a, b) for k in self._keys[a.id] if k in self._keys[b.id]]
        return out

    def problems(self) -> list[str]:
        """Conflicts and reserved global keys, as sentences (empty when all is well)."""
        out = [c.message() for c in self.conflicts()]
        for a in self.actions:
            if a.context == "global":
                for k in self._keys[a.id]:
                    reason = reserved_reason(k, a.id)
                    if reason:
                        out.append(f"{native(k)} cannot run “{a.label}” anywhere: {reason}.")
        return out

    # -- changing (each returns a new Keymap) ---------------------------------------
    def bind(self, action_id: str, keys: Iterable[str]) -> Keymap:
        """Return a keymap where ``action_id`` has exactly ``keys``.

        Raises:
            KeyError: unknown action.
            KeymapError: a key is unreadable, reserved for typing/editing (global
                actions), or already used by an action live at the same time.
        """
        action = self._by_id[action_id]
        clean: list[str] = []
        for text in keys:
            key = normalize(text)
            if key in clean:
                continue
            reason = reserved_reason(key, action_id) if action.context == "global" else None
            if reason:
                raise KeymapError(f"{native(key)} cannot run “{action.label}” anywhere in the "
                                  f"window: {reason}. Choose a key with Ctrl or Alt.")
            taken = self.clashes(action_id, key)
            if taken:
                raise KeymapError(f"{native(key)} already runs “{taken[0].label}” "
                                  f"({WHERE[taken[0].context].lower()}). Remove it there "
                                  "first, or choose another key.")
            clean.append(key)
        return self._with(action_id, tuple(clean))

    def add_key(self, action_id: str, key: str) -> Keymap:
        """Return a keymap where ``action_id`` also answers ``key`` (see :meth:`bind`)."""
        return self.bind(action_id, [*self._keys[action_id], key])

    def reset(self, action_id: str | None = None) -> Keymap:
        """Return a keymap with one action's (or, with None, every action's) default keys."""
        if action_id is None:
            return Keymap(actions=self.actions)
        return self._with(action_id, self._defaults[action_id])

    def _with(self, action_id: str, keys: tuple[str, ...]) -> Keymap:
        overrides = self.overrides()
        overrides[action_id] = list(keys)
        return Keymap(overrides, self.actions)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Keymap) and other._keys == self._keys

    __hash__ = None  # type: ignore[assignment]


def _readable(keys: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for text in keys:
        try:
            key = normalize(str(text))
        except KeymapError:
            log.info("ignoring unreadable key binding %r", text)
            continue
        if key not in out:
            out.append(key)
    return out


_DEFAULT: list[Keymap] = []


def default_keymap() -> Keymap:
    """The declared defaults (built once)."""
    if not _DEFAULT:
        _DEFAULT.append(Keymap())
    return _DEFAULT[0]


def keymap_for(widget: QWidget) -> Keymap:
    """The keymap in force in ``widget``'s window (the defaults outside a Parley window)."""
    found = getattr(widget.window(), "keymap", None)
    return found if isinstance(found, Keymap) else default_keymap()


# -- persistence ----------------------------------------------------------------------
async def load(store: Any) -> Keymap:
    """Read ``keyboard.bindings`` from ``store`` (an ``AsyncStore``)."""
    from parley.core.settings import Settings

    return Keymap(await Settings.of(store).get(SETTING_KEY))


async def save(store: Any, keymap: Keymap) -> None:
    """Store ``keymap``'s changes as ``keyboard.bindings`` (listeners hear it at once).

    Raises:
        StoreError: sessions.db could not be written; the stored bindings stay.
    """
    from parley.core.settings import Settings

    await Settings.of(store).set(SETTING_KEY, keymap.overrides())
