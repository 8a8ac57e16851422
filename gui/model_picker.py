"""The model picker at the top of the chat: which model answers the next message.

A flat button showing the current model's name; its menu lists the models
of every configured provider, grouped by provider. It holds no state beyond
what it shows; the window decides what a choice means (the session's model).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from core.errors import ParleyError
from gui import appearance

log = logging.getLogger(__name__)


def model_label(info: Any) -> str:
    """Return a model's display name (``ModelInfo.display_name``, else its id)."""
    return str(getattr(info, "display_name", None) or info.id)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of the menu.

    Attributes:
        ref: ``"provider_id:model_id"``.
        label: the model's display name.
        group: the provider's display name (menu section).
    """

    ref: str
    label: str
    group: str


async def model_choices(hub: Any) -> list[ModelChoice]:
    """List the models of every set-up provider, as the header's model picker does.

    Args:
        hub: the ``ProviderHub``; each provider's list endpoint is asked once.

    Returns:
        ``ModelChoice`` values (``ref`` = ``provider:model``) grouped by
        provider, in the hub's order; a provider that cannot be reached adds none.
    """
    choices: list[ModelChoice] = []
    for config in hub.configs:
        try:
            models = await hub.list_models(config.id)
        except ParleyError as exc:
            log.info("cannot list models of %s: %s", config.id, exc)
            continue
        group = config.name or config.id
        choices += [ModelChoice(f"{config.id}:{m.id}", model_label(m), group) for m in models]
    return choices



class ModelPicker(QToolButton):
    """Signals: ``model_chosen(ref)`` when the person picks a model from the menu."""

    model_chosen = Signal(str)
    choices_changed = Signal()  # the menu's models (and so their names) were replaced

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPicker")
        self.setAccessibleName("Model")
        self.setToolTip("Choose the model that answers")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setLayoutDirection(Qt.LayoutDirection.RightToLeft)  # chevron after the text
        self.setIconSize(QSize(14, 14))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._menu = QMenu(self)
        self._menu.setObjectName("ModelMenu")
        self._menu.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
        self.setMenu(self._menu)
        self._group = QActionGroup(self)
        self._choices: list[ModelChoice] = []
        self._describe: Callable[[str], str | None] = lambda ref: None
        self.current: str | None = None
        self._show()

    def set_describe(self, describe: Callable[[str], str | None]) -> None:
        """Name models not (yet) in the menu with ``describe(ref)`` — e.g. from the catalog,
        while the providers' model lists load; None falls back to the model id."""
        self._describe = describe
        self._show()

    @property
    def choices(self) -> list[ModelChoice]:
        """The models offered, in menu order."""
        return list(self._choices)

    def set_choices(self, choices: Sequence[ModelChoice]) -> None:
        """Replace the menu's models (keeps the current one selected if present)."""
        self._menu.clear()
        self._group = QActionGroup(self)
        self._choices = list(choices)
        last_group = None
        for choice in self._choices:
            if choice.group != last_group:
                self._menu.addSection(choice.group)
                last_group = choice.group
            act = QAction(choice.label, self._menu)
            act.setCheckable(True)
            act.setData(choice.ref)
            act.setChecked(choice.ref == self.current)
            act.triggered.connect(lambda _c=False, r=choice.ref: self._chosen(r))
            self._group.addAction(act)
            self._menu.addAction(act)
        self._show()
        self.choices_changed.emit()

    def set_current(self, ref: str | None) -> None:
        """Show ``ref`` as the current model (adds no menu entry)."""
        self.current = ref
        for act in self._group.actions():
            act.setChecked(act.data() == ref)
        self._show()

    def _chosen(self, ref: str) -> None:
        self.set_current(ref)
        self.model_chosen.emit(ref)

    def label_of(self, ref: str | None) -> str:
        """Return the display name of ``ref``: from the menu, else from ``set_describe``'s
        function, else its model id."""
        for choice in self._choices:
            if choice.ref == ref:
                return choice.label
        if not ref:
            return "No model"
        return self._describe(ref) or ref.split(":", 1)[-1]

    def _show(self) -> None:
        self.setText(self.label_of(self.current))
        self.setIcon(appearance.icon("chevron-down", appearance.current().muted, 14))
        self.setAccessibleDescription(f"Current model: {self.label_of(self.current)}")
