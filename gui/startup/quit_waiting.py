"""The question on quitting while a message waits to be sent (Parley still starting).

A message sent while Parley starts waits for its provider (``parley.gui.chat.run``:
saved, "Connecting to …") or, sent before the chats were open, for the chats
(``parley.gui.startup.state``: not saved yet). Quitting then would leave it unsent
without a word, so the window asks first, as it does for replies not saved
yet (``parley.gui.database.save_status.ask_before_quit``): keep Parley open (it is sent in a
moment) or quit without sending it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QMainWindow, QMessageBox

if TYPE_CHECKING:
    from parley.gui.chat.controller import ChatController
    from parley.gui.startup.state import StartupView

TITLE = "A message is waiting to be sent"
WAIT, QUIT = "wait", "quit"
#: What happens to a saved waiting message on quitting.
SAVED_STAYS = ("it stays in its chat, marked “Not sent”, and Retry sends it when you "
               "open Parley again")
#: What happens to one sent before the chats were open (not saved yet) on quitting.
UNSAVED_LOST = "it is not kept (your chats were not open yet to save it in)"


class WaitingState(Protocol):
    """What the question reads of the window's state
    (``parley.gui.window.state.WindowState``)."""

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def startup(self) -> StartupView: ...


def waiting_messages(state: WaitingState) -> tuple[int, int]:
    """How many messages wait to be sent: (saved, waiting for their provider; sent
    before the chats were open, not saved yet)."""
    saved = len(state.chat.runs.waiting_messages()) if state.chat is not None else 0
    return saved, len(state.startup.queue.messages())


def question(saved: int, unsaved: int) -> str:
    """The question's text for ``saved`` + ``unsaved`` waiting messages (≥ 1)."""
    count = saved + unsaved
    what = "Your message is" if count == 1 else f"{count:,} messages are"
    them = "it" if count == 1 else "them"
    fates = []
    if saved:
        fates.append(SAVED_STAYS if count == 1 else f"the saved ones: {SAVED_STAYS}")
    if unsaved:
        fates.append(UNSAVED_LOST if count == 1 else f"the others: {UNSAVED_LOST}")
    return (f"{what} waiting to be sent: Parley is still starting.\n\n"
            f"Keep Parley open and {them} will be sent in a moment, or quit without "
            f"sending {them}: {'; '.join(fates)}.")


async def ask_before_quit(state: WaitingState, window: QMainWindow) -> bool:
    """Quitting while messages wait to be sent: ask. True to go on closing (none waits,
    or the person chose to quit); False to keep Parley open.

    Args:
        state: the window's state (its open chat's runs, start-up's queue).
        window: the window (the question's parent; its status bar says why it closed).

    While the question is up its reason is watched (every :data:`WATCH_MS`): when fewer
    messages wait its text follows, and when none waits any more (sent and saved
    meanwhile) the question closes by itself, Parley stays open and the status bar says
    why: quitting again closes without a question.
    """
    import asyncio

    saved, unsaved = waiting_messages(state)
    if not saved and not unsaved:
        return True
    from parley.gui import dialogs

    role = QMessageBox.ButtonRole
    asking = asyncio.ensure_future(dialogs.ask(
        window, QMessageBox.Icon.Warning, TITLE, question(saved, unsaved),
        [("Quit without sending", role.DestructiveRole, QUIT),
         ("Keep Parley open", role.RejectRole, WAIT)],
        default=WAIT))
    shown = (saved, unsaved)
    while not asking.done():
        await asyncio.wait({asking}, timeout=WATCH_MS / 1000)
        if asking.done():
            break
        now = waiting_messages(state)
        if now == shown:
            continue
        box = _box(window)
        if now == (0, 0):  # its reason is gone: sent and saved meanwhile
            if box is not None:
                box.reject()  # Esc's answer: keep Parley open
            await asyncio.wait({asking})
            window.statusBar().showMessage(SENT_MEANWHILE, 10_000)
            return False
        shown = now
        if box is not None:
            box.setText(question(*now))
    return asking.result() == QUIT


#: How often the question checks whether its messages still wait (ms).
WATCH_MS = 250
#: Said when the question closed by itself (no message waits any more).
SENT_MEANWHILE = "Your message was sent and saved meanwhile: quit again to close Parley."


def _box(window: QMainWindow) -> QMessageBox | None:
    """The question's message box, while it is shown."""
    for box in window.findChildren(QMessageBox):
        if box.accessibleName() == TITLE and box.isVisible():
            return box
    return None
