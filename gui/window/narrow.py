"""The sidebar steps aside in a narrow window, and comes back when the window widens.

Below a window width (``parley.gui.window.layout`` gives its sidebar's least width plus
the chat page's least room) the chat page would get less than its room even with the
sidebar at its narrowest:
the conversation then read a few words a line and the header lost the chat's title
(trial 17 at 420 px). As in Claude's and ChatGPT's desktop apps, the sidebar hides
itself when the window is narrowed past that width and shows itself again when it is
widened past it — only if it hid itself: a sidebar the person hid (Ctrl+B, the header's
button) stays hidden, and one the person shows in a narrow window stays shown.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter


class NarrowSidebar:
    """Hides and shows the splitter's first widget (the sidebar) as the window crosses
    ``below_px``.

    Args:
        splitter: the window's splitter, sidebar first (a placeholder frame until the
            sidebar is made; whichever is there is hidden or shown).
        below_px: the window width (px) under which the sidebar hides itself.

    Attributes:
        hid_itself: True while the sidebar is hidden because the window is narrow.
    """

    def __init__(self, splitter: QSplitter, below_px: int) -> None:
        self._splitter = splitter
        self.below_px = below_px
        self.hid_itself = False

    def resized(self, old_width: int, new_width: int) -> None:
        """The window went from ``old_width`` to ``new_width`` px (``old_width`` < 0: its
        first size): hide or show the sidebar when the width crosses ``below_px``."""
        side = self._splitter.widget(0)
        if side is None:
            return
        was_wide = old_width < 0 or old_width >= self.below_px
        if was_wide and new_width < self.below_px and not side.isHidden():
            side.setVisible(False)
            self.hid_itself = True
        elif not was_wide and new_width >= self.below_px and self.hid_itself:
            side.setVisible(True)
            self.hid_itself = False

    def toggled_by_hand(self) -> None:
        """The person showed or hid the sidebar: what they chose stays."""
        self.hid_itself = False
