"""The summary of a history import (File ▸ Import): one short line, and the files left
out whole in a Details dialog.

:class:`ImportSummaryDialog` shows ``ImportSummary.line`` ("Imported x.json: 412 chats,
9,310 messages from a ChatGPT export; 6 files left out (4 not in the export, 2
refused).") with OK and, when something was left out, **Details…** (Alt+D), which opens
:class:`ImportDetailsDialog` on top of it (modal): every entry of
``ImportSummary.details`` under its heading ("Not in the export", "Refused, with the
reason"), each in a list that scrolls, however long.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QVBoxLayout,
    QWidget,
)

from parley.gui import dialogs

#: (heading, lines) as ``parley.core.importing.files.ImportSummary.details`` gives them.
Details = list[tuple[str, list[str]]]


class ImportDetailsDialog(QDialog):
    """Every file (or conversation) an import left out, under its heading.

    Attributes:
        lists: ``{heading: QListWidget}`` in the order given.
    """

    def __init__(self, details: Details, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("import-details")
        self.setWindowTitle("What the import left out")
        self.setAccessibleName(self.windowTitle())
        self.setModal(True)
        lay = QVBoxLayout(self)
        self.lists: dict[str, QListWidget] = {}
        for heading, lines in details:
            label = QLabel(f"{heading} ({len(lines):,})", self)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setStyleSheet("font-weight: bold")
            entries = QListWidget(self)
            entries.setAccessibleName(heading)
            entries.setWordWrap(True)
            for line in lines:
                entries.addItem(line)
                entries.item(entries.count() - 1).setToolTip(line)
            label.setBuddy(entries)
            lay.addWidget(label)
            lay.addWidget(entries, 1)
            self.lists[heading] = entries
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.setMinimumWidth(dialogs.TEXT_MIN_WIDTH)
        self.resize(620, 420)

    def sections(self) -> dict[str, list[str]]:
        """``{heading: lines}`` as shown."""
        return {heading: [entries.item(i).text() for i in range(entries.count())]
                for heading, entries in self.lists.items()}


class ImportSummaryDialog(QDialog):
    """"Import finished": the summary's line, OK, and Details… when ``details`` is not
    empty (it opens :class:`ImportDetailsDialog`; this dialog stays open).

    Attributes:
        label: the summary's line (selectable).
        details_button: Details… (None when nothing was left out).
        details_dialog: the details dialog opened last, or None.
    """

    def __init__(self, line: str, details: Details, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("import-summary")
        self.setWindowTitle("Import finished")
        self.setAccessibleName(self.windowTitle())
        self._details = details
        self.details_dialog: ImportDetailsDialog | None = None
        self.label = QLabel(line, self)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, self)
        buttons.accepted.connect(self.accept)
        self.details_button = None
        if details:
            self.details_button = buttons.addButton(
                "&Details…", QDialogButtonBox.ButtonRole.ActionRole)
            self.details_button.setToolTip("Every file the import left out, and why.")
            self.details_button.setAutoDefault(False)
            self.details_button.clicked.connect(self.show_details)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)
        self.setMinimumWidth(dialogs.TEXT_MIN_WIDTH)
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setDefault(True)
        ok.setFocus()

    def text(self) -> str:
        """The summary's line."""
        return self.label.text()

    def show_details(self) -> ImportDetailsDialog:
        """Open the details (modal, on top of this dialog) and return them."""
        dlg = ImportDetailsDialog(self._details, self)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.details_dialog = dlg
        dlg.open()
        return dlg
