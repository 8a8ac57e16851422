"""What was typed while Parley started, kept in a file when the chats could not be opened.

Before the chats are open, a message sent (Enter) waits in memory
(``parley.gui.startup.state``). When the store cannot be opened at start (the
PostgreSQL server away, a wrong password …) the window shows why, and that text
would be lost on quitting. So it is written, privately (mode 0600, like sessions.db),
to ``typed-at-start.txt`` in the data folder: the messages sent meanwhile, the drafts
left by Ctrl+N and the message box's text, in that order, a blank line between them.

"Try again" on that page opens the chats in the same run: the waiting messages are
then sent as usual and the file is removed. Quitting instead leaves the file: the next
start that opens the chats puts its text back into the message box and removes it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from parley.core.private import write_private_text

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

    from parley.core.errors import ParleyError
    from parley.core.tasks import TaskSet
    from parley.gui.composer.widget import Composer

log = logging.getLogger(__name__)

#: In the data folder: what was typed while Parley could not open the chats.
FILE_NAME = "typed-at-start.txt"


class _Queue(Protocol):
    """What start-up holds that was sent before the chats were open
    (``parley.gui.startup.state.PendingQueue``)."""

    def messages(self) -> list[str]: ...

    def drafts(self) -> list[str]: ...


class TypedStartup(Protocol):
    """Start-up as the text typed at start sees it (``parley.gui.startup.state.StartupView``:
    declared here, as that module names :class:`TypedAtStart`)."""

    typed: TypedAtStart | None

    @property
    def queue(self) -> _Queue: ...

    async def start(self) -> None: ...


class TypedWindow(Protocol):
    """What is typed at start is read from and put back into: the window's message box
    and start-up (``parley.gui.window.state.WindowState``)."""

    @property
    def composer(self) -> Composer: ...

    @property
    def startup(self) -> TypedStartup: ...


class StartWindow(TypedWindow, Protocol):
    """What start-up's problem page uses of the window (``WindowState``): its pages,
    the message box, start-up and the tasks "Try again" starts it in."""

    @property
    def loading_page(self) -> QLabel: ...

    @property
    def stack(self) -> QStackedWidget: ...

    @property
    def chat_page(self) -> QWidget: ...

    @property
    def tasks(self) -> TaskSet: ...


class TypedAtStart:
    """The file of text typed while the chats could not be opened, for one window.

    Attributes:
        path: the file (``<data folder>/typed-at-start.txt``).
        kept: True once this run's text was written there (start-up failed).
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE_NAME
        self.kept = False
        self._before: str | None = None  # an earlier run's text, read once

    def before(self) -> str:
        """The text an earlier run kept ('' when none, or unreadable)."""
        if self._before is None:
            try:
                self._before = self.path.read_text(encoding="utf-8").strip()
            except OSError:
                self._before = ""
        return self._before

    def replace(self, old: str, new: str) -> None:
        """Change the first ``old`` in the earlier run's text to ``new`` before it goes
        back into the box (a kept queued message's files line, its files back in the tray)."""
        self._before = self.before().replace(old, new, 1) if old else self.before()

    def keep(self, window: TypedWindow, after: list[str] | None = None) -> bool:
        """Write what ``window`` holds that was typed at start (after an earlier run's),
        then the texts ``after`` (messages queued behind a reply, first queued first).

        Returns:
            True when the file holds it (or nothing was typed); False when it could not
            be written (logged; the text then stays in memory only).
        """
        parts = [self.before(), *typed_texts(window), *(after or [])]
        text = "\n\n".join(p.strip() for p in parts if p.strip())
        if not text:
            self.kept = True
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            write_private_text(tmp, text + "\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("could not keep the text typed at start in %s: %s", self.path, exc)
            return False
        self.kept = True
        return True

    def restore(self, window: TypedWindow, stale: str = "") -> None:
        """The chats are open: an earlier run's text goes back into the message box (before
        what is there, unless that is one of its parts already: the chat's own saved draft,
        which the kept text holds too), and the file is removed (this run's text was sent
        as usual).

        Args:
            window: the window whose box takes the text.
            stale: the open chat's saved draft when the kept text holds a newer version
                of it (its box's text when the file was found damaged): it leaves the box,
                whose text typed since the chats opened stays (after the kept text).
        """
        before = self.before()
        if before:
            box = window.composer.text()
            stale = stale.rstrip()
            if stale and box.startswith(stale):  # the box put the saved draft first
                box = box[len(stale):].lstrip()
            again = _holds_block(before, box)  # the chat's saved draft was kept too
            window.composer.set_text(f"{before}\n\n{box}" if box.strip() and not again
                                     else before)
        self._before = ""
        self.kept = False
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s: %s", self.path, exc)


def _holds_block(kept: str, text: str) -> bool:
    """Whether ``text`` is one of the blank-line-separated parts of ``kept`` (a part of
    its own, not words inside one): the box's text was kept in the file already."""
    text = text.strip()
    if not text:
        return False
    return kept == text or kept.startswith(text + "\n\n") or kept.endswith("\n\n" + text) \
        or f"\n\n{text}\n\n" in kept


def typed_texts(window: TypedWindow) -> list[str]:
    """What was typed before the chats were open, in order: messages sent, drafts left
    by Ctrl+N, then the message box."""
    queue = window.startup.queue
    texts = [*queue.messages(), *queue.drafts(), window.composer.text()]
    return [t for t in texts if t.strip()]


def show_start_problem(window: StartWindow, exc: ParleyError) -> None:
    """The chats could not be opened at start: say why on the window's page, keep what
    was typed (:class:`TypedAtStart`) and say where, and offer "Try again" (not for an
    address that is not one: trying it again cannot help)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton, QVBoxLayout

    from parley.core.store.errors import InvalidDatabaseUrl

    text = exc.message
    typed: TypedAtStart | None = window.startup.typed
    if typed is not None and (typed_texts(window) or typed.before()):
        if typed.keep(window):
            text += (f"\n\nWhat you typed is kept in {typed.path}: it comes back into the "
                     "message box when your chats open.")
        else:
            text += "\n\nWhat you typed could not be written to a file: keep Parley open."
    page = window.loading_page
    page.setWordWrap(True)  # before the text: never one line wider than the page
    page.setText(text)
    button = page.findChild(QPushButton, "TryAgain")
    if button is None:
        button = QPushButton("Try again", page)
        button.setObjectName("TryAgain")
        button.setAccessibleName("Try again to open your chats")
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
        button.clicked.connect(lambda: retry_start(window))
    button.setVisible(not isinstance(exc, InvalidDatabaseUrl))
    window.stack.setCurrentWidget(page)


def retry_start(window: StartWindow) -> None:
    """"Try again": back to the chat page (the message box as it was) and start again."""
    from PySide6.QtWidgets import QPushButton

    button = window.loading_page.findChild(QPushButton, "TryAgain")
    if button is not None:
        button.hide()
    window.loading_page.setText("Opening your chats…")
    window.stack.setCurrentWidget(window.chat_page)
    window.composer.setFocus()
    window.tasks.spawn(window.startup.start(), name="window-start")
