"""Doing what the person did before the first chat showed, once it shows.

What was done meanwhile is kept by ``parley.gui.composer.early_input.EarlyInput``;
:func:`replay` does it, in order, as if done then (``parley.gui.startup.phases``
calls it once ``ChatController.show_first`` showed the first chat).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.gui.composer.early_input import EarlyInput
    from parley.gui.window.state import WindowState


async def replay(window: WindowState, early: EarlyInput) -> None:
    """Do what ``early`` holds, in order, once the first chat is shown
    (``MainWindow.start``; ``ChatController.show_first`` showed the chat the
    message box belongs to: the last one, or a new one after Ctrl+N).

    The message box is left as the person has it: it belongs to the chat in
    view. Each earlier chat gets what was done in it: the last chat its
    message (saved and sent there, waiting for its provider) and its draft
    (after the one it had); a new chat its session with its message. The
    message of the chat in view is sent there (a new chat gets its session).
    Then the chat commands given meanwhile are done, in order.
    """
    from parley.core.app_state import LAST_SESSION
    from parley.core.store.errors import SessionNotFound

    chat = window.chat
    assert chat is not None
    runs = chat.runs
    for item in early.chats[:-1]:
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
            box = window.composer.text()
            window.composer.set_text(f"{item.draft.rstrip()}\n\n{box}" if box else item.draft)
            continue
        await chat.drafts.keep(sid, item.draft)
    if early.current.message is not None:
        await runs.send_queued(early.current.message)
        chat.keep_draft()  # typed after it: the draft of the chat it went to
    commands, early.commands = early.commands, []
    for command in commands:
        command()
