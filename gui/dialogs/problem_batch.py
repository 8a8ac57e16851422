"""Problems that come in a burst, told in one dialog instead of one dialog each.

Dropping ten unreadable files refuses each on its own worker task; a dialog per
file stacks ten modal-looking boxes. :class:`ProblemBatch` collects the errors
that arrive within a short quiet time and shows one: the error itself when it
is alone, else :class:`SeveralProblems` listing every message.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from parley.core.errors import ParleyError

#: How long to wait for more problems after the last one (ms).
QUIET_MS = 250


class SeveralProblems(ParleyError):
    """Several problems of one kind of action, told together.

    Attributes:
        problems: the errors, in the order they arrived.
    """

    def __init__(self, lead: str, problems: list[ParleyError]) -> None:
        items = "\n".join(f"• {p.message}" for p in problems)
        super().__init__(f"{lead}\n\n{items}")
        self.problems = problems


class ProblemBatch(QObject):
    """Collects errors and shows them once things are quiet (see the module docstring).

    Args:
        show: shows one error (the window's ``show_problem``), called on the GUI thread.
        lead: the first line when several are shown, e.g. "3 files were not attached:";
            ``{n}`` is replaced by their number.
        parent: owner of the timer.
    """

    def __init__(self, show: Callable[[ParleyError], None], lead: str,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._show = show
        self._lead = lead
        self._pending: list[ParleyError] = []
        self._timer = QTimer(self, singleShot=True, interval=QUIET_MS)
        self._timer.timeout.connect(self.flush)

    def add(self, error: ParleyError) -> None:
        """Hold ``error``; it is shown after :data:`QUIET_MS` without another one."""
        self._pending.append(error)
        self._timer.start()

    def flush(self) -> None:
        """Show what is held now (one error as itself, several together)."""
        self._timer.stop()
        held, self._pending = self._pending, []
        if len(held) == 1:
            self._show(held[0])
        elif held:
            self._show(SeveralProblems(self._lead.format(n=len(held)), held))
