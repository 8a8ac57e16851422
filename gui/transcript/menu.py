"""The transcript's context menu, and the model menu of "Regenerate with".

Every entry is a declared ``message.*`` action of :mod:`parley.gui.commands.actions` (its label
and keys come from there) run through ``TranscriptView.message_action``, so
the menu, the keys and the window's Message menu always agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from parley.gui.commands.actions import by_id
from parley.gui.commands.keymap import keymap_for
from parley.gui.text.markdown import is_safe_url
from parley.gui.text.names import MENU_NAME_MAX_PX, elided
from parley.gui.transcript.specs import COMPACT_AGAIN

if TYPE_CHECKING:
    from parley.gui.transcript.layout import Hit
    from parley.gui.transcript.message_view import MessageView


def message_menu(view: MessageView, row: int, hit: Hit | None) -> QMenu:
    """The context menu of a row: copy, edit, retry/resume, regenerate, fork, fold.

    Args:
        view: the transcript.
        row: the row right-clicked.
        hit: the link or fold line under the pointer, if any ("Copy link address").

    Returns:
        The menu, not shown yet.
    """
    node = view.model.rows[row]
    menu = QMenu(cast(QWidget, view))  # the view widget
    menu.setAccessibleName("Message actions")
    if node.kind == "unseen":  # the note of turns the model no longer sees
        _entry(view, menu, "retry", row, COMPACT_AGAIN)
        return menu
    if hit is not None and hit.href and is_safe_url(hit.href):
        url = hit.href
        menu.addAction("Copy link address", lambda: QGuiApplication.clipboard().setText(url))
        menu.addSeparator()
    _entry(view, menu, "copy", row)
    _entry(view, menu, "copy_markdown", row)
    menu.addSeparator()
    if view.editable(node):
        _entry(view, menu, "edit", row)
    retry = view.retry_kind(row)
    if retry:
        _entry(view, menu, "retry", row, "Continue" if retry == "resume" else "Retry")
    if view.model.is_last(row) and view.can_regenerate():
        _entry(view, menu, "regenerate", row)
        sub = models_menu(view, menu, "Regenerate with")
        menu.addMenu(sub)
        menu.addAction("Answer with several models…", view.answerWithRequested.emit)
    _entry(view, menu, "fork", row)
    if node.kind == "card" or view.list_view.layout_of(row).fold_keys():
        menu.addSeparator()
        # Its declared name ("Unfold"), or "Fold" while what it opens is open.
        _entry(view, menu, "toggle", row, "Fold" if (node.expanded or node.open_folds) else None)
    return menu


def models_menu(view: MessageView, parent: QWidget, title: str = "") -> QMenu:
    """A menu of the models the window offers (``view.model_choices``); picking one
    emits ``view.regenerateRequested(ref)``. Disabled when there are none."""
    menu = QMenu(title, parent)
    menu.setAccessibleName("Regenerate with model")
    menu.setObjectName("RegenerateModels")
    choices = view.model_choices()
    menu.setToolTipsVisible(True)
    for label, ref in choices:  # a long name cut, whole in its tooltip
        shown = elided(label, menu.fontMetrics(), MENU_NAME_MAX_PX)
        entry = menu.addAction(shown, _regenerate_with(view, ref))
        entry.setToolTip(label)
    if not choices:
        none = menu.addAction("No models listed yet")
        none.setEnabled(False)
    return menu


def _regenerate_with(view: MessageView, ref: str) -> Callable[[], None]:
    """A menu slot that asks ``view`` to regenerate with the model ``ref``."""
    return lambda: view.regenerateRequested.emit(ref)


def _entry(view: MessageView, menu: QMenu, name: str, row: int, label: str | None = None
           ) -> None:
    """An entry from the declared action ``message.<name>``, showing its keys (which
    also work while the menu is open)."""
    action_id = f"message.{name}"
    entry = menu.addAction(label or by_id(action_id).label,
                           lambda: view.message_action(name, row))
    entry.setShortcuts([QKeySequence(k) for k in keymap_for(cast(QWidget, view)).keys(action_id)])
