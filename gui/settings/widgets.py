"""Small pieces the Settings pages share: hint lines and the model combo box.

A ``model`` setting (the summary model, the title model) is edited in an
editable combo box offering the models of every set-up provider — the list
the header's model picker shows
(:func:`parley.gui.header.model_picker.model_choices`) — while any text can still be
typed. Each entry shows the model's display name (with its provider's name when two
set-up providers offer models of the same name) and keeps its ``provider:model``
reference as item data: the reference is what is stored (:func:`model_value`), and a
stored reference is shown by its entry's name (:func:`show_model`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QWidget

from parley.gui.header.model_picker import ModelChoice, selectable
from parley.gui.look import appearance


def hint(text: str, parent: QWidget, *, error: bool = False) -> QLabel:
    """A small word-wrapped line under a field: muted, or in the danger colour for errors.

    An empty error line starts hidden; an empty plain hint stays visible (it
    is filled in later).
    """
    label = QLabel(text, parent)
    label.setObjectName("SettingError" if error else "FieldHint")
    label.setWordWrap(True)
    _hint_style(label)
    label.setVisible(bool(text) or not error)
    return label


def _hint_style(label: QLabel) -> None:
    scheme = appearance.current()
    error = label.objectName() == "SettingError"
    label.setStyleSheet(f"color: {scheme.danger if error else scheme.muted}; font-size: 11px;")


def restyle_hints(root: QWidget) -> None:
    """Colour the hint and error lines under ``root`` for the scheme now applied (the
    theme changed while they show: Settings → Appearance)."""
    for label in root.findChildren(QLabel):
        if label.objectName() in ("FieldHint", "SettingError"):
            _hint_style(label)


def model_combo(parent: QWidget, placeholder: str) -> QComboBox:
    """An editable combo box for a model reference; typing never adds an entry."""
    combo = QComboBox(parent)
    combo.setEditable(True)
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    # Sized by a minimum length, not by its entries: a long model list must not widen the page.
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(20)
    line = combo.lineEdit()  # an editable combo has one
    if line is not None:
        line.setPlaceholderText(placeholder)
        line.setClearButtonEnabled(True)
    return combo


def set_model_choices(combo: QComboBox, choices: list[ModelChoice]) -> None:
    """Offer the models of ``choices`` in ``combo`` (tooltip: name, provider and, for a
    provider that could not be reached, why); the typed text stays."""
    text = combo.currentText()
    combo.blockSignals(True)
    try:
        combo.clear()
        offered = selectable(choices)
        labels = [c.label or c.ref for c in offered]
        for choice, label in zip(offered, labels, strict=True):
            if labels.count(label) > 1:
                label = f"{label} — {choice.group}"
            combo.addItem(label, choice.ref)
            note = f" ({choice.note})" if choice.note else ""
            combo.setItemData(combo.count() - 1, f"{choice.label} — {choice.group}{note}",
                              Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(-1)
        at = combo.findData(text)  # a reference shown before the names were known
        combo.setEditText(combo.itemText(at) if at >= 0 else text)
    finally:
        combo.blockSignals(False)


def model_value(combo: QComboBox, index: int | None = None) -> str:
    """The reference a model combo holds: the entry's ``provider:model`` (item data) when
    its text is an entry's name (or ``index`` is given), else the typed text."""
    at = index if index is not None else combo.findText(combo.currentText(),
                                                        Qt.MatchFlag.MatchExactly)
    data = combo.itemData(at) if at is not None and at >= 0 else None
    return str(data) if data else combo.currentText()


def show_model(combo: QComboBox, value: str | None) -> None:
    """Show a stored reference: by its entry's name when it is offered, else as stored."""
    text = "" if value is None else str(value)
    at = combo.findData(text) if text else -1
    combo.setEditText(combo.itemText(at) if at >= 0 else text)
