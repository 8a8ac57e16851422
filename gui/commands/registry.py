"""Who handles each declared command: handlers register here, where they are written.

:mod:`parley.gui.commands.actions` declares the commands as data (id, label, keys,
context, menu). The parts of the window that carry a command out register a handler
for its id: the window's own commands (``parley.gui.commands.window_commands``), the
transcript's message commands (``TranscriptView.register_commands``). Menus, keys and the
palette run a command through :meth:`Commands.run`; a command with no handler (yet) is
unavailable there, shown disabled.

Registering checks the id against the declarations, so a typo fails when the window is
built (:class:`KeyError`), not silently when the key is pressed; a test checks that every
declared command has a handler once the window is whole (:meth:`Commands.missing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

Handler = Callable[[], Any]


class Named(Protocol):
    """A declared action (``parley.gui.commands.actions.Action``), as far as it is run."""

    @property
    def id(self) -> str: ...


@dataclass(frozen=True, slots=True)
class _Entry:
    handler: Handler
    when: Callable[[], bool] | None


class Commands:
    """The handlers of one window's declared commands.

    Args:
        declared: the ids that may be handled (default: every action of
            :data:`parley.gui.commands.actions.ACTIONS`).
    """

    def __init__(self, declared: Iterable[str] | None = None) -> None:
        # The declarations are read at the first registration: a window is made (and
        # painted) before its actions are built.
        self._given = None if declared is None else frozenset(declared)
        self._entries: dict[str, _Entry] = {}

    @property
    def _declared(self) -> frozenset[str]:
        if self._given is None:
            from parley.gui.commands.actions import ACTIONS

            self._given = frozenset(a.id for a in ACTIONS)
        return self._given

    def handle(self, action_id: str, handler: Handler, *,
               when: Callable[[], bool] | None = None, replace: bool = False) -> None:
        """Make ``handler`` (called with no argument) carry out ``action_id``.

        Args:
            action_id: a declared action's id (``session.new``).
            handler: returns what the command returns; a composer key's handler returns
                False to let the key through to the text editor.
            when: None, or a test of whether the command can run now (menus show it
                disabled otherwise).
            replace: take the place of the handler registered before (a widget made
                again registers its handlers again).

        Raises:
            KeyError: ``action_id`` is not declared.
            ValueError: ``action_id`` already has a handler (and ``replace`` is False).
        """
        if action_id not in self._declared:
            raise KeyError(f"no action {action_id!r} is declared (gui/commands/actions.py)")
        if action_id in self._entries and not replace:
            raise ValueError(f"the action {action_id!r} already has a handler")
        self._entries[action_id] = _Entry(handler, when)

    def available(self, action_id: str) -> bool:
        """Whether ``action_id`` has a handler and can run now."""
        entry = self._entries.get(action_id)
        return entry is not None and (entry.when is None or bool(entry.when()))

    def run(self, action_id: str) -> Any:
        """Carry out ``action_id``; returns its handler's result, False when unavailable."""
        if not self.available(action_id):
            return False
        return self._entries[action_id].handler()

    def run_action(self, action: Named) -> Any:
        """:meth:`run` for a declared action (what the message box reports a key means)."""
        return self.run(action.id)

    def missing(self) -> set[str]:
        """The declared ids with no handler."""
        return set(self._declared - self._entries.keys())
