"""How the window looks, as the person chose it: theme, text size and transcript zoom.

Three settings (``parley.core.settings``), applied live and kept in sessions.db:

* ``appearance.theme``: ``system`` (follow the desktop, or ``PARLEY_THEME``
  when it is set), ``light`` or ``dark`` — a choice made here wins over
  ``PARLEY_THEME``;
* ``appearance.text_size``: the whole window's text, a step of
  :data:`TEXT_SIZES` applied to the application font;
* ``appearance.zoom``: the conversation's text only, in percent of the window's
  text (Ctrl++ / Ctrl+− / Ctrl+0, steps of :data:`ZOOM_STEPS`).

:class:`ViewPrefs` reads them once the store is open and follows later
changes (the Settings dialog writes through the same ``Settings`` object,
whose change listeners call back here).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QApplication

from parley.core.errors import ParleyError
from parley.core.settings import Settings
from parley.gui.look import appearance

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.transcript import TranscriptView

log = logging.getLogger(__name__)

THEME = "appearance.theme"
TEXT_SIZE = "appearance.text_size"
ZOOM = "appearance.zoom"
#: Text size choice -> factor of the system's (or Parley's default) UI font size.
TEXT_SIZES = {"small": 0.9, "default": 1.0, "large": 1.15, "larger": 1.3}
#: Transcript zoom levels (percent), Ctrl++ / Ctrl+− step through them.
ZOOM_STEPS = (50, 67, 75, 80, 90, 100, 110, 125, 150, 175, 200, 250, 300)
ZOOM_DEFAULT = 100


def zoom_step(current: int, direction: int) -> int:
    """The zoom level after one Ctrl++ (``direction`` 1) or Ctrl+− (-1) from ``current``.

    Args:
        current: the zoom now, percent (may be between steps, e.g. set by hand).
        direction: 1 to zoom in, -1 to zoom out, 0 to reset.

    Returns:
        The next step of :data:`ZOOM_STEPS` in that direction (the ends stay),
        or :data:`ZOOM_DEFAULT` for 0.
    """
    if direction == 0:
        return ZOOM_DEFAULT
    if direction > 0:
        return next((z for z in ZOOM_STEPS if z > current), ZOOM_STEPS[-1])
    return next((z for z in reversed(ZOOM_STEPS) if z < current), ZOOM_STEPS[0])


class ViewPrefs:
    """Applies the appearance settings to the application and the window's transcript.

    Args:
        store: the open store (the settings are read and written there).
        transcript: the window's transcript (the zoom applies to its conversation).
        status: the window's status bar (the zoom level is shown there).
        tasks: the window's background tasks (the zoom is kept there).
    """

    def __init__(self, store: AsyncStore, transcript: TranscriptView, status: QStatusBar,
                 tasks: TaskSet) -> None:
        self.transcript, self.status, self.tasks = transcript, status, tasks
        self.settings = Settings.of(store)
        self.theme = "system"
        self.text_size = "default"
        self.zoom = ZOOM_DEFAULT
        app = QGuiApplication.instance()
        self._base_pt = app.font().pointSizeF() if isinstance(app, QGuiApplication) else 10.0
        self._unsubscribe = self.settings.on_change(self._changed)

    async def load(self) -> None:
        """Read the three settings and apply them."""
        try:
            values = await self.settings.values([THEME, TEXT_SIZE, ZOOM])
        except ParleyError as exc:  # the defaults stay; the window works on
            log.warning("appearance settings not read: %s", exc)
            return
        self.theme, self.text_size = values[THEME], values[TEXT_SIZE]
        self.zoom = int(values[ZOOM])
        self.apply_theme()
        self.apply_text_size()

    def close(self) -> None:
        """Stop following the settings (the window closes)."""
        self._unsubscribe()

    def _changed(self, key: str, value: Any) -> None:
        if key == THEME:
            self.theme = value
            self.apply_theme()
        elif key == TEXT_SIZE:
            self.text_size = value
            self.apply_text_size()
        elif key == ZOOM:
            self.zoom = int(value)
            self.apply_zoom()

    # -- applying -------------------------------------------------------------
    def apply_theme(self) -> None:
        """Apply the chosen scheme (``system``: the desktop's, or ``PARLEY_THEME``'s)."""
        appearance.set_preference(self.theme)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication) and appearance.choose(app) != appearance.current():
            appearance.apply(app)

    def apply_text_size(self) -> None:
        """Scale the application font to the chosen text size (the transcript follows)."""
        app = QGuiApplication.instance()
        if not isinstance(app, QApplication):
            return
        font = QFont(app.font())
        font.setPointSizeF(round(self._base_pt * TEXT_SIZES.get(self.text_size, 1.0), 1))
        if font != app.font():
            app.setFont(font)
        self.apply_zoom()

    def apply_zoom(self) -> None:
        """Give the conversation the window's font times the zoom."""
        app = QGuiApplication.instance()
        if not isinstance(app, QGuiApplication):
            return
        font = QFont(app.font())
        font.setPointSizeF(round(app.font().pointSizeF() * self.zoom / 100, 1))
        self.transcript.list_view.setFont(font)

    # -- the keys -------------------------------------------------------------
    def step_zoom(self, direction: int) -> int:
        """Ctrl++ (1), Ctrl+− (-1) or Ctrl+0 (0): zoom the conversation, show the level
        in the status bar and keep it; returns the new zoom (percent)."""
        self.zoom = zoom_step(self.zoom, direction)
        self.apply_zoom()
        self.status.showMessage(f"Conversation zoom {self.zoom}%", 2_000)
        self.tasks.spawn(self.settings.set(ZOOM, self.zoom), name="zoom")
        return self.zoom
