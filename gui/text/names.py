"""Names shown in one line — models, chats, spaces, providers — kept to a width.

A name comes from anywhere (a 121-character GGUF path, an import, another machine
sharing the database), so where one is shown in a button, a label or a menu entry it
is cut to :data:`NAME_MAX_PX` with an ellipsis in the middle (both the start and the
end of a model id or a path tell things apart) and the whole name goes to the tooltip.
A widget showing a name so never asks for more room than that, and a long name never
widens the window. A chat's title is cut at its end instead, but a fork's mark, " (fork
2)", is kept whole (:func:`elided_title`): it is what tells a chat's forks apart.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QComboBox

from parley.core.chat.title_text import FORK_MARK

#: Widest a name is shown before it is elided (px).
NAME_MAX_PX = 320
#: Widest a name is shown in a menu entry (px): menus have more room than the header.
MENU_NAME_MAX_PX = 480


def elided(name: str, metrics: QFontMetrics, max_px: int = NAME_MAX_PX,
           mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle) -> str:
    """``name`` as it fits in ``max_px`` pixels of ``metrics``' font ("…" where cut).

    A name whose advance (``QFontMetrics.horizontalAdvance``, what a widget sizes itself
    by) fits is returned whole: ``elidedText`` alone measures with fractional glyph
    widths and cut "Claude Opus 4.6" in the exact room asked for it ("Claude…us 4.6").
    """
    if metrics.horizontalAdvance(name) <= max_px:
        return name
    return metrics.elidedText(name, mode, max_px)


def elided_title(title: str, metrics: QFontMetrics, max_px: int) -> str:
    """A chat's ``title`` as it fits in ``max_px`` pixels of ``metrics``' font: cut at its
    end ("…"), but a fork's mark kept whole, "A long plan wit… (fork 2)" (the part before
    it cut), so "(fork 2)" and "(fork 3)" stay told apart; where even the mark does not
    fit, the end of the title is kept ("…(fork 2)")."""
    if metrics.horizontalAdvance(title) <= max_px:
        return title
    mark = FORK_MARK.search(title)
    if mark is None:
        return metrics.elidedText(title, Qt.TextElideMode.ElideRight, max_px)
    tail = title[mark.start():]
    room = max_px - metrics.horizontalAdvance(tail)
    if room < metrics.horizontalAdvance("x…"):
        return metrics.elidedText(title, Qt.TextElideMode.ElideLeft, max_px)
    return metrics.elidedText(title[:mark.start()], Qt.TextElideMode.ElideRight, room) + tail


def name_tip(name: str, shown: str, about: str = "") -> str:
    """The tooltip of a name shown as ``shown``: the whole name when it was cut, then
    ``about`` (what the widget does) on a line of its own; ``about`` alone otherwise."""
    if shown == name:
        return about
    return f"{name}\n{about}" if about else name


def bound_combo(combo: QComboBox, chars: int = 24) -> QComboBox:
    """Size ``combo`` by ``chars`` characters, not by its longest entry (a 300-character
    model name would widen its window); entries longer than that are elided in the box
    and its list. Returns ``combo``. Give long entries their whole name with
    :func:`add_named_item`."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    combo.view().setTextElideMode(Qt.TextElideMode.ElideMiddle)
    return combo


def add_named_item(combo: QComboBox, text: str, data: object = None) -> None:
    """Add an entry to ``combo`` with its whole text as its tooltip."""
    combo.addItem(text, data)
    combo.setItemData(combo.count() - 1, text, Qt.ItemDataRole.ToolTipRole)
