"""What a person does before the first chat is shown, kept and done once it is.

From the first paint the message box takes keys, but the chats are not open
yet (the store is being opened, the last chat read). What the person does
meanwhile is kept here, per chat, in the order it was done, and
``parley.gui.startup.replay_early.replay`` does it once the chats are open, as if done
then:

- a message sent (Enter) belongs to the chat start-up would show (the last
  chat) — or, after Ctrl+N, to that new chat; one waiting message per chat
  (another Enter in the same chat keeps its text in the box and says why,
  as a second message does while the first waits for its provider);
- Esc takes that message back into the box (before what was typed since);
- Ctrl+N leaves what was typed with the chat it was typed for (it becomes
  that chat's draft) and starts a new chat with an empty box;
- a chat command (Ctrl+Tab, Up to edit the last message, rename …) is done,
  in order, once the chats are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Said when a second message is sent in the same chat before the chats are open.
ONE_WAITING = ("Your message before this one is waiting for your chats to open: this one "
               "stays here; send it in a moment.")


@dataclass
class EarlyChat:
    """One chat as the person used it before the chats were open.

    Attributes:
        new: a new chat (Ctrl+N); False: the chat start-up shows (the last one).
        message: the message sent in it (Enter), or None.
        draft: what was typed in it and left there (Ctrl+N moved on), '' when
            nothing; the chat shown last keeps the message box's text instead.
    """

    new: bool
    message: str | None = None
    draft: str = ""


@dataclass
class EarlyInput:
    """The chats used and the commands given before the chats were open.

    Attributes:
        chats: in the order they were used; the first is the chat start-up
            shows, the last the one the message box belongs to now.
        commands: chat commands given meanwhile, done in order by :func:`replay`.
    """

    chats: list[EarlyChat] = field(default_factory=lambda: [EarlyChat(new=False)])
    commands: list[Callable[[], Any]] = field(default_factory=list)

    @property
    def current(self) -> EarlyChat:
        """The chat the message box belongs to now."""
        return self.chats[-1]

    @property
    def new_chat_asked(self) -> bool:
        """True when Ctrl+N was pressed (the chat in view at the end is a new one)."""
        return self.current.new

    def send(self, text: str) -> bool:
        """Enter with ``text``: kept as the current chat's message. False (the text
        stays in the box) when that chat holds a waiting message already."""
        if self.current.message is not None:
            return False
        self.current.message = text
        return True

    def take_back(self) -> str | None:
        """Esc: the current chat's message, no longer to be sent (None: none waits)."""
        message, self.current.message = self.current.message, None
        return message

    def new_chat(self, typed: str) -> bool:
        """Ctrl+N with ``typed`` in the box. Returns True when the box is to be emptied
        (``typed`` stays with the chat it was typed for); a new chat in which nothing
        was sent yet stays the same new chat (as Ctrl+N does in a new chat)."""
        if self.current.new and self.current.message is None:
            return False
        self.current.draft = typed
        self.chats.append(EarlyChat(new=True))
        return True
