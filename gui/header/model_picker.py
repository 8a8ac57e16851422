"""The model picker at the top of the chat: which model answers the next message.

A flat button showing the current model's name; its menu lists the models
of every configured provider under the provider's name. A provider whose
model list could not be fetched still shows, with its configured model(s) and
a short note saying why ("can't connect — server not reachable"); picking one
of those and sending gives the provider's own error, with Retry. The picker
holds no state beyond what it shows; the window decides what a choice means
(the session's model).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QResizeEvent
from PySide6.QtWidgets import (
    QLabel,
    QMenu,
    QSizePolicy,
    QToolButton,
    QWidget,
    QWidgetAction,
)

from parley.core.errors import ParleyError
from parley.gui.look import appearance
from parley.gui.text.names import MENU_NAME_MAX_PX, NAME_MAX_PX, elided, name_tip

log = logging.getLogger(__name__)
#: The picker's tooltip (after the whole name when the name shown is cut).
CHOOSE_TIP = "Choose the model that answers"
#: The least room the name keeps in a narrow window (px).
MIN_NAME_PX = 60


def model_label(info: Any) -> str:
    """Return a model's display name (``ModelInfo.display_name``, else its id)."""
    return str(getattr(info, "display_name", None) or info.id)


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of the menu.

    Attributes:
        ref: ``"provider_id:model_id"``; ``""`` for a provider that offers nothing
            to choose (its list could not be fetched and no model is configured for
            it): such an entry only carries the provider's name and ``note``.
        label: the model's display name.
        group: the provider's display name (menu section).
        note: why the provider's models could not be listed, in a few words
            (``"can't connect — server not reachable at http://…/v1"``); ``""``
            when they were.
        detail: the full message of that failure (the entries' tooltip); ``""`` if none.
    """

    ref: str
    label: str
    group: str
    note: str = ""
    detail: str = ""

    @property
    def selectable(self) -> bool:
        """False for a provider-only entry (``ref == ""``), which names no model."""
        return bool(self.ref)


def selectable(choices: Sequence[ModelChoice]) -> list[ModelChoice]:
    """Return the entries that name a model (what a model field may offer)."""
    return [c for c in choices if c.selectable]


def distinct(choices: Sequence[ModelChoice]) -> list[ModelChoice]:
    """Return the entries with each model once and no two models under one name.

    Args:
        choices: entries in menu order (provider-only entries, ``ref == ""``, kept).

    Returns:
        The entries in the same order with a repeated ``ref`` left out (the first
        one stays), and labels made different where two models share one: a model
        offered by two providers is named with its provider
        (``"llama3.2:3b (Ollama)"``), two models of one provider with the same
        display name are named with their id (``"Claude Sonnet 4 (claude-sonnet-4-0)"``).
    """
    seen: set[str] = set()
    kept: list[ModelChoice] = []
    for c in choices:
        if c.ref and c.ref in seen:
            continue
        seen.add(c.ref)
        kept.append(c)
    by_label: dict[str, list[ModelChoice]] = {}
    for c in kept:
        if c.selectable:
            by_label.setdefault(c.label, []).append(c)
    renamed: dict[str, str] = {}
    for label, same in by_label.items():
        if len(same) < 2:
            continue
        groups = [c.group for c in same]
        for c in same:
            if groups.count(c.group) == 1:
                renamed[c.ref] = f"{label} ({c.group})"
            else:
                model_id = c.ref.split(":", 1)[-1]
                suffix = model_id if len(set(groups)) == 1 else f"{c.group}, {model_id}"
                renamed[c.ref] = f"{label} ({suffix})"
    return [replace(c, label=renamed[c.ref]) if c.ref in renamed else c for c in kept]


def short_reason(error: ParleyError, where: str | None = None) -> str:
    """Say in a few words why a provider's models could not be listed (a menu note).

    Args:
        error: what ``ProviderHub.list_models`` raised.
        where: the address asked (named for an unreachable server), if known.

    Returns:
        ``"can't connect — <reason>"`` for an unreachable server or a refused key,
        ``"can't list models — <reason>"`` for any other failure.
    """
    from parley.core.providers.errors import AuthenticationFailed, NetworkError, ProviderError

    if isinstance(error, NetworkError):
        at = f" at {where}" if where else ""
        return "can't connect — " + (f"no answer in time{at}" if error.timed_out
                                     else f"server not reachable{at}")
    if isinstance(error, AuthenticationFailed):
        return "can't connect — " + ("no API key" if error.missing else "API key refused")
    status = getattr(error, "status", None) if isinstance(error, ProviderError) else None
    if status:
        return f"can't list models — the server answered HTTP {status}"
    first = error.message.split(". ")[0].rstrip(".")
    return f"can't list models — {first[:60]}{'…' if len(first) > 60 else ''}"


def configured_models(hub: Any, config: Any) -> list[str]:
    """The model ids set up for a provider: its default model, and the app's default
    model when that is one of the provider's (no duplicates, in that order)."""
    ids: list[str] = []
    if config.default_model:
        ids.append(config.default_model)
    app_default = hub.default_model_ref() or ""
    pid, _, model_id = app_default.partition(":")
    if pid == config.id and model_id and model_id not in ids:
        ids.append(model_id)
    return ids


def _configured_choices(hub: Any, config: Any, group: str, note: str = "",
                        detail: str = "") -> list[ModelChoice]:
    out = []
    for model_id in configured_models(hub, config):
        ref = f"{config.id}:{model_id}"
        try:
            label = model_label(hub.model_info(ref))
        except ParleyError:
            label = model_id
        out.append(ModelChoice(ref, label, group, note, detail))
    return out


async def model_choices(hub: Any) -> list[ModelChoice]:
    """List the models of every set-up provider, as the header's model picker does.

    Args:
        hub: the ``ProviderHub``; each provider's list endpoint is asked once, all
            at the same time (one slow server does not hold up the others).

    Returns:
        ``ModelChoice`` values (``ref`` = ``provider:model``) grouped by provider,
        in the hub's order; every provider appears. One whose list could not be
        fetched (a ``ParleyError``: unreachable, key refused …) offers the models it
        listed last time (``ProviderHub.cached_models``), else its configured
        models (:func:`configured_models`), with ``note`` and ``detail`` saying why,
        or, with none of either, one entry with ``ref == ""``. One that lists no
        models offers its configured ones without a note.
    """
    configs = list(hub.configs)

    async def listing(config: Any) -> list[Any] | ParleyError:
        try:
            return list(await hub.list_models(config.id))
        except ParleyError as exc:
            log.info("cannot list models of %s: %s", config.id, exc)
            return exc

    results = await asyncio.gather(*(listing(c) for c in configs))
    choices: list[ModelChoice] = []
    for config, result in zip(configs, results, strict=True):
        group = config.name or config.id
        if isinstance(result, ParleyError):
            note, detail = short_reason(result, _address(hub, config)), result.message
            kept = hub.cached_models(config.id)
            offered = ([ModelChoice(f"{config.id}:{m.id}", model_label(m), group, note, detail)
                        for m in kept] if kept
                       else _configured_choices(hub, config, group, note, detail))
            choices += offered or [ModelChoice("", "", group, note, detail)]
        elif result:
            choices += [ModelChoice(f"{config.id}:{m.id}", model_label(m), group)
                        for m in result]
        else:
            choices += _configured_choices(hub, config, group)
    return choices


def _address(hub: Any, config: Any) -> str | None:
    """The API root ``config`` is asked at (settings, else the environment), if any."""
    from parley.core.providers.registry import resolve_base_url

    return resolve_base_url(config, getattr(hub, "environ", None)).value


def cached_choices(hub: Any) -> list[ModelChoice]:
    """The picker's entries from the model lists kept in sessions.db, with no server
    asked and no SDK imported (start-up shows these until :func:`model_choices` answers):
    a provider never listed offers its configured models."""
    choices: list[ModelChoice] = []
    for config in hub.configs:
        group = config.name or config.id
        kept = hub.cached_models(config.id)
        if kept:
            choices += [ModelChoice(f"{config.id}:{m.id}", model_label(m), group) for m in kept]
        else:
            choices += _configured_choices(hub, config, group)
    return choices


def _menu_line(menu: QMenu, text: str, name: str, tooltip: str = "") -> QWidgetAction:
    """A line of the menu that cannot be chosen: a provider's name (``name``
    ``ModelMenuHeading``) or a note (``ModelMenuNote``), coloured by the app's style
    sheet (``parley.gui.look.appearance.MENU_RULES``); a long one is elided, whole in
    its tooltip (``parley.gui.text.names``)."""
    label = QLabel(menu)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    shown = elided(text, label.fontMetrics(), MENU_NAME_MAX_PX)
    label.setText(shown)
    tip = tooltip if shown == text else "\n".join(t for t in (text, tooltip) if t)
    label.setToolTip(tip)
    action = QWidgetAction(menu)
    action.setObjectName(name)
    action.setDefaultWidget(label)
    action.setText(text)
    action.setToolTip(tip or text)
    action.setEnabled(False)  # skipped by the arrow keys, never triggered
    return action


class ModelPicker(QToolButton):
    """Signals: ``model_chosen(ref)`` when the person picks a model from the menu."""

    model_chosen = Signal(str)
    choices_changed = Signal()  # the menu's models (and so their names) were replaced

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPicker")
        self.setAccessibleName("Model")
        self.setToolTip(CHOOSE_TIP)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setLayoutDirection(Qt.LayoutDirection.RightToLeft)  # chevron after the text
        self.setIconSize(QSize(14, 14))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        # Shrinks (the name cut further) down to its minimumSizeHint in a narrow window.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._menu = QMenu(self)
        self._menu.setObjectName("ModelMenu")
        self._menu.setLayoutDirection(Qt.LayoutDirection.LeftToRight)
        self._menu.setToolTipsVisible(True)  # an unreachable provider's entries say why
        self.setMenu(self._menu)
        self._group = QActionGroup(self)
        self._choices: list[ModelChoice] = []
        self._describe: Callable[[str], str | None] = lambda ref: None
        self.current: str | None = None
        #: set_current was called: before (while Parley starts) no name, not "No model".
        self._told = False
        self.hide()  # until a model is told (_show): a layout would show it empty
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

    @property
    def problems(self) -> list[ModelChoice]:
        """One entry per provider whose models could not be listed (its ``note`` and
        ``detail`` say why; ``ref`` is ``""`` when it offers no model at all)."""
        return list(getattr(self, "_problems", []))

    def set_choices(self, choices: Sequence[ModelChoice]) -> None:
        """Replace the menu's models (keeps the current one selected if present).

        Each provider's models come under its name (a line that cannot be chosen),
        after a separator from the provider before; a provider whose models could not
        be listed shows its ``note`` under its name. :attr:`choices` keeps only the
        entries that name a model. Each model shows once, under a name no other
        model of the menu has (:func:`distinct`).
        """
        choices = distinct(choices)
        self._menu.clear()
        self._group = QActionGroup(self)
        self._choices = selectable(choices)
        self._problems = [c for c in choices if c.note]
        groups: dict[str, list[ModelChoice]] = {}
        for choice in choices:
            groups.setdefault(choice.group, []).append(choice)
        for i, (group, entries) in enumerate(groups.items()):
            if i:
                self._menu.addSeparator()
            self._menu.addAction(_menu_line(self._menu, group, "ModelMenuHeading"))
            note = next((c for c in entries if c.note), None)
            if note is not None:
                self._menu.addAction(_menu_line(self._menu, note.note, "ModelMenuNote",
                                                note.detail))
            for choice in entries:
                if choice.selectable:
                    self._menu.addAction(self._entry(choice))
        self._show()
        self.choices_changed.emit()

    def _entry(self, choice: ModelChoice) -> QAction:
        shown = elided(choice.label, self._menu.fontMetrics(), MENU_NAME_MAX_PX)
        act = QAction(shown, self._menu)
        act.setCheckable(True)
        act.setData(choice.ref)
        act.setChecked(choice.ref == self.current)
        tip = name_tip(choice.label, shown, choice.detail)
        if tip:
            act.setToolTip(tip)
        act.triggered.connect(lambda _c=False, r=choice.ref: self._chosen(r))
        self._group.addAction(act)
        return act

    def set_current(self, ref: str | None) -> None:
        """Show ``ref`` as the current model (adds no menu entry; None: "No model")."""
        self.current, self._told = ref, True
        for act in self._group.actions():
            act.setChecked(act.data() == ref)
        self._show()

    def set_pending(self) -> None:
        """Show no name (not "No model"; the picker hidden): the open chat's model is not
        known yet (the providers are loading)."""
        self.current, self._told = None, False
        for act in self._group.actions():
            act.setChecked(False)
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

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        """The chevron is tinted with the theme's colours: made again when it changes."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.setIcon(appearance.icon("chevron-down", appearance.current().muted, 14))

    def _show(self) -> None:
        """The current model's name, elided to the room the picker has, at most
        :data:`~parley.gui.text.names.NAME_MAX_PX` (whole in the tooltip), so a long
        name never widens the header or the window. Hidden while no model is told
        (Parley starting, the providers loading): an empty button with a chevron
        (trial 21) says nothing true."""
        name = self.label_of(self.current) if self._told else ""
        self._name = name
        if self.isHidden() == self._told:
            self.setVisible(self._told)
        self._fit(NAME_MAX_PX)
        self.setIcon(appearance.icon("chevron-down", appearance.current().muted, 14))
        self.setAccessibleDescription(f"Current model: {name}")
        self.updateGeometry()  # the layout gives it its width again (then resizeEvent)
        if self.isVisible():  # …or keeps the one it has: fit the name to that
            QTimer.singleShot(0, self, self._fit)

    def _fit(self, room: int | None = None) -> None:
        """Show the name cut to ``room`` px (None: the width the picker has now)."""
        name = getattr(self, "_name", "")
        if room is None:
            room = max(MIN_NAME_PX, min(NAME_MAX_PX, self.width() - self._chrome()))
        shown = elided(name, self.fontMetrics(), room)
        if shown != self.text():
            self.setText(shown)
        self.setToolTip(name_tip(name, shown, CHOOSE_TIP))

    def _chrome(self) -> int:
        """Width of everything but the text (px): icon, spacing, padding."""
        return super().sizeHint().width() - self.fontMetrics().horizontalAdvance(self.text())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """Room for the name elided to :data:`~parley.gui.text.names.NAME_MAX_PX`,
        whatever is shown now (the shown text is elided to the width given)."""
        hint = super().sizeHint()
        full = elided(getattr(self, "_name", ""), self.fontMetrics(), NAME_MAX_PX)
        return QSize(self._chrome() + self.fontMetrics().horizontalAdvance(full), hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """A narrow window cuts the name further rather than grow."""
        return QSize(min(self.sizeHint().width(), self._chrome() + MIN_NAME_PX),
                     super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()
