"""One problem dialog per window: a burst of errors becomes one list.

Three bad imports in a row used to leave three identical non-modal boxes open,
with Return going to the message box underneath. :func:`show_problem` keeps one
:class:`ProblemBox` per window instead: window-modal (``QDialog.open``), OK the
default button (Return or Esc closes it), and a problem arriving while it is
open is added to its list rather than opening another box.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QMessageBox, QWidget

from parley.gui.dialogs import readable

#: objectName of the window's problem dialog (how a second problem finds it).
OBJECT_NAME = "parley-problem"
#: The most problems listed in one box; more are counted in one line.
MAX_LISTED = 12


class ProblemBox(QMessageBox):
    """The window's problem dialog; :meth:`add` appends to what it lists.

    Args:
        parent: the window it belongs to (None: an application-modal box).
        title: the window title ("Parley").
        text: the first problem's message.
    """

    def __init__(self, parent: QWidget | None, title: str, text: str) -> None:
        super().__init__(QMessageBox.Icon.Warning, title, text,
                         QMessageBox.StandardButton.Ok, parent)
        self.setObjectName(OBJECT_NAME)
        self.setAccessibleName(title)
        self.setDefaultButton(QMessageBox.StandardButton.Ok)
        self.setEscapeButton(QMessageBox.StandardButton.Ok)
        self.problems: list[str] = [text]

    def add(self, text: str) -> None:
        """List one more problem (a message already listed is not repeated)."""
        if text in self.problems:
            return
        self.problems.append(text)
        shown = self.problems[:MAX_LISTED]
        items = "\n\n".join(f"• {p}" for p in shown)
        more = len(self.problems) - len(shown)
        tail = f"\n\n…and {more} more." if more else ""
        self.setText(f"{len(self.problems):,} problems:\n\n{items}{tail}")


def open_problem_box(parent: QWidget | None) -> ProblemBox | None:
    """The problem dialog open over ``parent`` now, or None."""
    if parent is None:
        return None
    for box in parent.findChildren(ProblemBox, OBJECT_NAME):
        if box.isVisible():
            return box
    return None


async def closed(parent: QWidget | None) -> None:
    """Return once no problem dialog is open over ``parent`` (at once when none is): a
    question waits for it, so the two are never stacked with one hiding the other."""
    while (box := open_problem_box(parent)) is not None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        box.finished.connect(lambda _result, f=done: f.done() or f.set_result(None))
        await done


def show_problem(parent: QWidget | None, title: str, text: str) -> ProblemBox:
    """Tell the person about an error they can act on; returns at once.

    The box is modal to ``parent`` and takes the focus, so Return closes it. While
    one is open, a new problem is added to its list instead (see the module docstring).

    Args:
        parent: the window the problem belongs to.
        title: the box's window title.
        text: the problem's message (what happened, what was kept, what to do).

    Returns:
        The box now showing ``text``.
    """
    box = open_problem_box(parent)
    if box is not None:
        box.add(text)
        return box
    box = ProblemBox(parent, title, text)
    readable(box)
    box.finished.connect(box.deleteLater)
    box.open()
    return box
