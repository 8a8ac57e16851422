"""The menu bar's menus, made before the window's first paint.

The first paint already has the menu bar at its final height (trial 20c: a bar added
after it pushed the header and the page ~22 px down). :func:`menu_bar_menus` makes the
top-level menus, titles only, while the window is built (cheap: no action, no import
of the declared actions); ``parley.gui.commands.install`` fills them once the rest of
the window is made. A menu opened before that asks for the rest at once (``fill``), so
its actions are there when it shows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMainWindow, QMenu

#: The menu bar's menus, in order (``Action.menu`` names one).
MENUS: tuple[str, ...] = ("File", "View", "Chat", "Space", "Message", "Help")


def menu_bar_menus(window: QMainWindow,
                   fill: Callable[[], None] | None = None) -> dict[str, QMenu]:
    """The menus of ``window``'s menu bar by name (:data:`MENUS`), made the first time.

    Args:
        window: the main window.
        fill: called when a menu is about to show (e.g. the window's ``finish_build``),
            so a menu opened before its actions were added gets them first; given when
            the menus are made (later calls only find them).

    Returns:
        {menu name: QMenu}, every name of :data:`MENUS`.
    """
    bar = window.menuBar()
    kept: dict[str, QMenu] = {}
    for act in bar.actions():
        menu = act.menu()
        if isinstance(menu, QMenu) and menu.objectName().startswith("Menu:"):
            kept[menu.objectName()[len("Menu:"):]] = menu
    for name in MENUS:
        if name not in kept:
            menu = bar.addMenu(f"&{name}")
            menu.setObjectName(f"Menu:{name}")
            if fill is not None:
                menu.aboutToShow.connect(fill)
            kept[name] = menu
    return kept
