"""The message box changes chats at the switch key, not once the next chat is shown.

Opening a chat takes several reads of the store (its last items, branch points, draft…);
until they end, the chat left is still the open one. Keys typed meanwhile belong to the
chat switched to, as in any chat app: :class:`BoxSwitch` gives the box to it at the key
(Ctrl+Tab, a click in the list, Ctrl+N…): the chat left keeps the box's text as its
draft, the box empties, and what is typed before the next chat's draft is read comes
after that draft (:meth:`ChatController.after_switch`). Enter pressed meanwhile sends
once that chat is shown (never into the chat left). A chat that could not be opened
gives the box back to the chat left, its draft first, then what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.core.tasks import TaskSet
    from parley.gui.composer.drafts import Drafts


def after(draft: str, typed: str) -> str:
    """``typed`` after ``draft`` (a blank line between), or whichever is not empty."""
    return f"{draft.rstrip()}\n\n{typed}" if draft.strip() and typed else (typed or draft)


class BoxSwitch:
    """Which chat the message box belongs to while another is being opened.

    Args:
        text: the box's text now.
        set_text: replaces the box's text (not recorded as typed).
        open_chat: the open chat's session now (None: a new chat), and whether the first
            chat is still to be shown (it takes the box as it is: no draft to keep).
        drafts, tasks: the window's drafts and background tasks.
        keep_draft: records the box's text as the open chat's draft (written soon).

    Attributes:
        switching: True from the switch key until the chat switched to is shown (or
            could not be).
        target: the chat switched to (None: a new chat), while :attr:`switching`.
        send_asked: Enter was pressed while switching: sent once the chat is shown.
    """

    def __init__(self, *, text: Callable[[], str], set_text: Callable[[str], None],
                 open_chat: Callable[[], tuple[str | None, bool]], drafts: Drafts,
                 tasks: TaskSet, keep_draft: Callable[[], None]) -> None:
        self._text, self._set_text, self._open_chat = text, set_text, open_chat
        self._drafts, self._tasks, self._keep_draft = drafts, tasks, keep_draft
        self.switching = False
        self.target: str | None = None
        self.send_asked = False

    def begin(self, target: str | None) -> None:
        """The switch key to chat ``target`` (None: a new chat): the box is its now."""
        sid, adopting = self._open_chat()
        if target == (self.target if self.switching else sid):
            return  # already the box's chat
        text = self._text()
        if self.switching:  # switched on before the last one was shown: typed for it
            if text:
                self._tasks.spawn(self._drafts.keep(self.target, text), name="keep-draft")
        elif not adopting:
            self._drafts.typed(sid, text)  # the chat left's draft, as it is now
        self.switching, self.target, self.send_asked = True, target, False
        if text:
            self._set_text("")

    def typed(self) -> str:
        """The chat switched to is shown: what was typed in the box since the switch
        key (to go after its draft); the switch is over."""
        typed = self._text() if self.switching else ""
        self.switching = False
        return typed

    def ended(self) -> None:
        """An opening ended: if the chat switched to was not shown (it could not be
        opened), the box is the open chat's again: its draft, then what was typed."""
        if not self.switching:
            return
        self.switching, self.send_asked = False, False
        typed = self._text()
        sid, _adopting = self._open_chat()
        self._set_text(after(self._drafts.typed_text(sid), typed))
        if typed:
            self._keep_draft()
