"""The welcome painted first on a first start, until the set-up page takes its place.

When it is certain before the first paint that this is Parley's first start with its
data folder (``parley.core.first_start``), the window's first paint shows this page — the
top of the set-up card (``parley.gui.startup.setup_panel``: its logo, title and intro, in
its colours), saying it is getting ready — instead of a chat-looking window that the
set-up page would replace seconds later. Only QtWidgets is used: it is made before the
first paint (the set-up panel itself imports the providers' registry, ~150 ms, and is
made once the providers are loaded: ``WindowPages.show_setup``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from parley.gui.look import appearance

#: The set-up card's title and intro (``SetupPanel`` shows the same words).
WELCOME_TITLE = "Welcome to Parley"
WELCOME_INTRO = "Connect a model provider to start chatting. Your key stays on this computer."
#: Said under them until the set-up page shows.
GETTING_READY = "Getting ready…"


def card_top(card: QFrame) -> list[QLabel]:
    """Make the set-up card's top in ``card``: its logo, :data:`WELCOME_TITLE` and
    :data:`WELCOME_INTRO` (the welcome's and the set-up panel's), to lay out in order."""
    card.setObjectName("SetupCard")
    card.setMaximumWidth(540)
    logo = QLabel(card)
    logo.setPixmap(appearance.app_icon().pixmap(56, 56))
    logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
    title = QLabel(WELCOME_TITLE, card)
    title.setObjectName("SetupTitle")
    title.setAlignment(Qt.AlignmentFlag.AlignCenter)
    intro = QLabel(WELCOME_INTRO, card)
    intro.setObjectName("SetupIntro")
    intro.setWordWrap(True)
    intro.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return [logo, title, intro]


class WelcomePage(QWidget):
    """The set-up card's top (logo, title, intro) and :data:`GETTING_READY`, centred on
    the set-up page's background."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SetupPage")  # the set-up page's look
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setAccessibleName(WELCOME_TITLE)
        card = QFrame(self)
        top = card_top(card)
        self.status = QLabel(GETTING_READY, card)
        self.status.setObjectName("SetupIntro")
        self.status.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay = QVBoxLayout(card)
        lay.setContentsMargins(36, 32, 36, 32)
        lay.setSpacing(8)
        for widget in (*top, self.status):
            lay.addWidget(widget)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 10)
        row.addStretch(1)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)
