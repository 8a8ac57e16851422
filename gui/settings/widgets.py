"""Small pieces the Settings pages share: hint lines and the model combo box.

A ``model`` setting (the summary model, the title model) is edited in an
editable combo box offering the models of every set-up provider — the list
the header's model picker shows
(:func:`parley.gui.header.model_picker.model_choices`) — while any text can still be
typed. Each entry's text is its ``provider:model`` reference, so what
is shown is what is stored.
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
    line = combo.lineEdit()
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
        for choice in selectable(choices):
            combo.addItem(choice.ref, choice.ref)
            note = f" ({choice.note})" if choice.note else ""
            combo.setItemData(combo.count() - 1, f"{choice.label} — {choice.group}{note}",
                              Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(-1)
        combo.setEditText(text)
    finally:
        combo.blockSignals(False)
