"""Menus that pop up for the keyboard show where the keys are.

A menu a command opens (Regenerate with another model…, Move chat to space…) or a
context menu asked for with the Menu key or Shift+F10 starts with its first enabled
entry highlighted, so Up, Down and Enter act on something visible at once (as in the
desktop apps' menus opened from the keyboard). A menu opened by a right-click at the
pointer starts with nothing highlighted, as usual.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu


def first_enabled(menu: QMenu) -> QAction | None:
    """The first entry of ``menu`` that can be chosen (no separator, hidden or disabled
    entry), or None."""
    return next((a for a in menu.actions()
                 if a.isVisible() and a.isEnabled() and not a.isSeparator()), None)


def popup(menu: QMenu, global_pos: QPoint, *, highlight_first: bool = True) -> None:
    """Pop ``menu`` up at ``global_pos`` (screen coordinates); with ``highlight_first``
    its first enabled entry is the active one (Enter chooses it)."""
    menu.popup(global_pos)
    if highlight_first:
        first = first_enabled(menu)
        if first is not None:
            menu.setActiveAction(first)
