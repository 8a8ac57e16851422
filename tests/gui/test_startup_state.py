"""The start-up queue: what a person does before the chats show, read back per chat.

(The window replaying it is tested in test_startup_typing / test_startup_waits.)
"""

from __future__ import annotations

from parley.gui.startup.state import PendingQueue, QueuedChat


def test_messages_and_drafts_belong_to_the_chat_they_were_written_in() -> None:
    q = PendingQueue()
    ran: list[str] = []
    assert q.send("first") and not q.send("second")  # one waiting message per chat
    q.command(lambda: ran.append("rename"))
    assert q.new_chat("left in the last chat")
    assert not q.new_chat("")  # a new chat with nothing sent stays that chat
    assert q.new_chat_asked and q.message is None
    assert q.send("in the new chat") and q.message == "in the new chat"
    assert q.messages() == ["first", "in the new chat"]
    assert q.drafts() == ["left in the last chat"]
    chats, commands = q.take()
    assert chats == [QueuedChat(new=False, message="first", draft="left in the last chat"),
                     QueuedChat(new=True, message="in the new chat")]
    [c() for c in commands]
    assert ran == ["rename"] and not q.items and not q.new_chat_asked


def test_esc_takes_back_the_message_of_the_chat_in_view_only() -> None:
    q = PendingQueue()
    q.send("kept for the last chat")
    q.new_chat("")
    assert q.take_back() is None  # nothing waits in the new chat
    q.send("oops")
    assert q.take_back() == "oops" and q.message is None
    assert q.messages() == ["kept for the last chat"]
    assert q.send("again") and q.messages() == ["kept for the last chat", "again"]

