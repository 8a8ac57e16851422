"""Start-up as one state machine: the stage the window is in, and one queue of what the
person did before the chats were shown.

In the manner of Anki's ``MainWindowState``: the window's start-up part
(``parley.gui.startup.phases.Startup``) is always in one :class:`Stage` and moves between
them with ``Startup.move_to``. The stages, in order::

    PAINTING → OPENING → CHATS_SHOWN → READY (or SET_UP: no provider set up yet)

and, off that line, RECOVERY (sessions.db damaged or missing: a page offers backups) and
FAILED (the store could not be opened: the reason, what was typed kept, "Try again").

From the first paint the message box takes keys, but the chats are not open yet. What
the person does meanwhile goes into one :class:`PendingQueue`, in the order it was done,
and is done (:func:`replay`) when the chats are shown, as if done then:

- a message sent (Enter) belongs to the chat start-up would show (the last chat) or,
  after Ctrl+N, to that new chat; one waiting message per chat (another Enter in the
  same chat keeps its text in the box and says why, as a second message does while the
  first waits for its provider);
- Esc takes that message back into the box (before what was typed since);
- Ctrl+N leaves what was typed with the chat it was typed for (it becomes that chat's
  draft) and starts a new chat with an empty box;
- a chat command (Ctrl+Tab, Up to edit the last message, rename …) is done, in order,
  once the chats are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio

    from parley.gui.startup.kept_note import KeptNote
    from parley.gui.startup.typed_at_start import TypedAtStart

#: Said when a second message is sent in the same chat before the chats are open.
ONE_WAITING = ("Your message before this one is waiting for your chats to open: this one "
               "stays here; send it in a moment.")


class Stage(Enum):
    """Where start-up is (see the module docstring)."""

    PAINTING = "painting"  # shown; its first paint not flushed yet
    OPENING = "opening"  # the rest of the window made, the store opened, the chats read
    CHATS_SHOWN = "chats shown"  # a chat shows; the providers are loading
    READY = "ready"  # messages go to their providers
    SET_UP = "set-up"  # ready, but no provider is set up: the set-up panel
    RECOVERY = "recovery"  # sessions.db damaged or missing: the recovery page
    FAILED = "failed"  # the store could not be opened: the reason and "Try again"


#: The stages in which commands wait in the queue (the chats are not shown yet).
QUEUEING = frozenset({Stage.PAINTING, Stage.OPENING})
#: The stages in which the chats are shown.
SHOWN = frozenset({Stage.CHATS_SHOWN, Stage.READY, Stage.SET_UP})
#: The stages reached once the providers are loaded.
LOADED = frozenset({Stage.READY, Stage.SET_UP})


@dataclass(frozen=True)
class Send:
    """Enter: ``text`` sent in the chat the message box belongs to."""

    text: str


@dataclass(frozen=True)
class NewChat:
    """Ctrl+N: a new chat; ``draft`` is what was typed and left in the chat before it."""

    draft: str


@dataclass(frozen=True)
class Command:
    """A chat command (``run``), done once the chats are shown."""

    run: Callable[[], Any]


Pending = Send | NewChat | Command


@dataclass
class QueuedChat:
    """One chat as the person used it before the chats were shown (read from the queue).

    Attributes:
        new: a new chat (Ctrl+N); False: the chat start-up shows (the last one).
        message: the message sent in it (Enter), or None.
        draft: what was typed in it and left there (Ctrl+N moved on), '' when nothing;
            the chat shown last keeps the message box's text instead.
    """

    new: bool
    message: str | None = None
    draft: str = ""


class PendingQueue:
    """What the person did before the chats were shown, in order (see the module
    docstring). ``items`` holds :class:`Send`, :class:`NewChat` and :class:`Command`."""

    def __init__(self) -> None:
        self.items: list[Pending] = []

    def chats(self) -> list[QueuedChat]:
        """The chats used, in order: the first is the chat start-up shows, the last the
        one the message box belongs to now."""
        chats = [QueuedChat(new=False)]
        for item in self.items:
            if isinstance(item, Send):
                chats[-1].message = item.text
            elif isinstance(item, NewChat):
                chats[-1].draft = item.draft
                chats.append(QueuedChat(new=True))
        return chats

    @property
    def message(self) -> str | None:
        """The message waiting in the chat the message box belongs to, if any."""
        return self.chats()[-1].message

    @property
    def new_chat_asked(self) -> bool:
        """True when Ctrl+N was pressed (the chat in view at the end is a new one)."""
        return any(isinstance(item, NewChat) for item in self.items)

    def messages(self) -> list[str]:
        """The messages waiting (one per chat), in the order they were sent."""
        return [item.text for item in self.items if isinstance(item, Send)]

    def drafts(self) -> list[str]:
        """What was typed and left in the chats before a Ctrl+N (not blank)."""
        return [item.draft for item in self.items
                if isinstance(item, NewChat) and item.draft.strip()]

    def send(self, text: str) -> bool:
        """Enter with ``text``: queued as the current chat's message. False (the text
        stays in the box) when that chat holds a waiting message already."""
        if self.message is not None:
            return False
        self.items.append(Send(text))
        return True

    def take_back(self) -> str | None:
        """Esc: the current chat's message, no longer to be sent (None: none waits)."""
        if self.message is None:
            return None
        last = max(i for i, item in enumerate(self.items) if isinstance(item, Send))
        item = self.items.pop(last)
        assert isinstance(item, Send)
        return item.text

    def new_chat(self, typed: str) -> bool:
        """Ctrl+N with ``typed`` in the box. Returns True when the box is to be emptied
        (``typed`` stays with the chat it was typed for); a new chat in which nothing was
        sent yet stays the same new chat (as Ctrl+N does in a new chat)."""
        current = self.chats()[-1]
        if current.new and current.message is None:
            return False
        self.items.append(NewChat(typed))
        return True

    def command(self, run: Callable[[], Any]) -> None:
        """A chat command given before the chats are shown: done once they are."""
        self.items.append(Command(run))

    def take(self) -> tuple[list[QueuedChat], list[Callable[[], Any]]]:
        """Empty the queue; returns its chats and its commands (in order)."""
        chats = self.chats()
        commands = [item.run for item in self.items if isinstance(item, Command)]
        self.items = []
        return chats, commands


class StartupView(Protocol):
    """What the window's other parts and the chat's controllers use of its start-up part
    (``parley.gui.startup.phases.Startup``; declared here, where the window's parts can
    name it without importing the start-up itself)."""

    stage: Stage
    queue: PendingQueue
    typed: TypedAtStart | None  # what was typed, kept when the chats could not be opened
    kept_note: KeptNote  # "Your message is kept" until the transcript shows it

    @property
    def ready(self) -> bool: ...

    @property
    def queueing(self) -> bool: ...

    @property
    def recovering(self) -> bool: ...

    @property
    def store_opened(self) -> asyncio.Event: ...

    @property
    def built(self) -> bool: ...

    def move_to(self, stage: Stage) -> None: ...

    def finish_build(self) -> None: ...

    def start_after_first_paint(self) -> None: ...

    async def start(self) -> None: ...

    def queue_message(self) -> bool: ...

    def take_back_message(self) -> bool: ...


class _Box(Protocol):
    """The message box (``parley.gui.composer.widget.Composer``)."""

    def text(self) -> str: ...

    def set_text(self, text: str) -> None: ...


async def replay(chat: Any, composer: _Box, queue: PendingQueue) -> None:
    """Do what ``queue`` holds, in order, once the first chat is shown
    (``ChatController.show_first`` showed the chat the message box belongs to: the last
    one, or a new one after Ctrl+N); the queue is emptied.

    The message box is left as the person has it: it belongs to the chat in view. Each
    earlier chat gets what was done in it: the last chat its message (saved and sent
    there, waiting for its provider) and its draft (after the one it had); a new chat
    its session with its message. The message of the chat in view is sent there (a new
    chat gets its session). Then the chat commands given meanwhile are done, in order.
    """
    from parley.core.app_state import LAST_SESSION
    from parley.core.store.errors import SessionNotFound

    chats, commands = queue.take()
    runs = chat.runs
    for item in chats[:-1]:
        sid: str | None = None
        if not item.new:  # the chat start-up would have shown
            last = await LAST_SESSION.get(chat.store)
            if last:
                try:
                    chat.sessions[last] = await chat.store.get_session(last)
                    sid = str(last)
                except SessionNotFound:
                    sid = None
        if sid is None and item.message is not None:
            sid = await chat.create_session()
        if item.message is not None and sid is not None:
            runs.send_to(sid, item.message)
        if not item.draft.strip():
            continue
        if sid is None:  # a new chat with only a draft: nothing lost, it joins the box
            box = composer.text()
            composer.set_text(f"{item.draft.rstrip()}\n\n{box}" if box else item.draft)
            continue
        await chat.drafts.keep(sid, item.draft)
    if chats[-1].message is not None:
        await runs.send_queued(chats[-1].message)
        chat.keep_draft()  # typed after it: the draft of the chat it went to
    for command in commands:
        command()
