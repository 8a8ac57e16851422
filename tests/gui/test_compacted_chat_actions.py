"""What a chat does right after "Compact now": Regenerate, Retry and a second compaction
follow the conversation's order (a summary stands where its range began, though it is
stored after the turns kept) — real window, store, SDK and fake provider."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store.card_pages import CARD_PAGE
from parley.gui.sidebar.model import FORK_POINT
from parley.gui.transcript.specs import CARD_MORE_HREF
from tests.gui.chats import long_chat
from tests.gui.long_chats import SUMMARY, N, card_text, restart, rows
from tests.gui.transcript_reading import error_text, notice_text

pytestmark = pytest.mark.timeout(120)

REGENERATE = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def compacted(driver: Any, w: Any, n: int = N, summary: str = SUMMARY
              ) -> tuple[str, list[Any]]:
    """A chat of ``n`` turns, open, compacted once with Compact now (4 turns kept)."""
    sid, turns = long_chat(driver, w, n)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    driver.fake.script(summary)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message and rows(w)[0].kind == "card",
                 timeout=30)
    driver.settle(w)
    return sid, turns


def test_regenerate_right_after_compact_now_replaces_the_answer_and_keeps_a_branch(
        driver: Any) -> None:
    w = driver.configured()
    sid, turns = compacted(driver, w)
    [compaction] = driver.run(w.store.list_compactions(sid))
    old_answer, prompt = turns[-1], turns[-2]
    driver.fake.script("A new answer to the last message.")
    w.transcript.setFocus()
    driver.qtbot.keyClick(w.transcript.list_view, Qt.Key.Key_R, REGENERATE)
    driver.until(lambda: driver.last_text(w) == "A new answer to the last message."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=15)

    # the request answered the last message, not the summary, and went out compacted
    sent = driver.fake.model_requests[-1].body["messages"]
    assert sent[-1]["role"] == "user" and "message 398" in str(sent[-1]["content"])
    assert_compacted(sent, turns)
    stored = driver.run(w.store.get_turns(sid))
    assert old_answer.id not in [t.id for t in stored]
    answers = [t for t in stored if t.role == "assistant" and t.id not in
               {x.id for x in turns}]
    assert [t.text() for t in answers] == ["A new answer to the last message."]
    assert driver.run(w.store.list_forks(sid)) == []
    assert "The previous answer is kept" in w.statusBar().currentMessage()
    # The old answer is the new one's sibling in the chat's tree, off the path shown, and
    # the summary "Compact now" wrote below it stays in its branch; its range lies before
    # the prompt, so the new branch starts with a copy of it (issue 32: a branch made
    # after a summary keeps it) and shows its card, once.
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (2, 2))
    tree = {t.turn.id: t for t in driver.run(w.store.get_tree(sid))}
    assert not tree[old_answer.id].on_path and tree[old_answer.id].parent_id == prompt.id
    summary = tree[compaction.summary_turn_id]
    assert not summary.on_path and summary.parent_id == old_answer.id
    copy = stored[-2]
    assert copy.id != compaction.summary_turn_id and tree[copy.id].parent_id == prompt.id
    new_rows = [copy.id, *[t.id for t in turns[N - 4:N - 1]], stored[-1].id]
    driver.until(lambda: [n.key for n in rows(w)] == new_rows)
    assert [n.kind for n in rows(w)].count("card") == 1 and rows(w)[0].kind == "card"
    assert rows(w)[-1].turn.text() == "A new answer to the last message."
    assert w.transcript.branch_of(copy.id) is None

    # ‹ on the new answer: the old one, with the summary card of its branch.
    assert w.chat.opener.switch_branch(w.chat.turns[-1].id, -1)
    driver.until(lambda: rows(w)[-1].key == old_answer.id and w.tasks.pending == 0)
    expected = [compaction.summary_turn_id, *[t.id for t in turns[N - 4:N]]]
    assert [n.key for n in rows(w)] == expected and rows(w)[0].kind == "card"
    assert [n.kind for n in rows(w)].count("card") == 1
    assert w.transcript.branch_of(old_answer.id) == (1, 2)

    w2 = restart(driver, w, sid)  # the branch chosen last
    assert [n.key for n in rows(w2)] == expected
    assert w2.transcript.branch_of(old_answer.id) == (1, 2)
    # › back to the new answer, with the copy's card
    assert w2.chat.opener.switch_branch(old_answer.id, +1)
    driver.until(lambda: [n.key for n in rows(w2)] == new_rows and w2.tasks.pending == 0)
    assert w2.transcript.branch_of(stored[-1].id) == (2, 2)


def assert_compacted(sent: list[Any], turns: list[Any]) -> None:
    """The request holds the summary and none of the turns it replaced."""
    body = str(sent)
    assert "The user counted messages" in body
    assert not [t for t in turns[:N - 4] if t.text() in body]


def test_edit_of_the_last_message_right_after_compact_now_keeps_the_summary(
        driver: Any) -> None:
    w = driver.configured()
    sid, turns = compacted(driver, w)
    [compaction] = driver.run(w.store.list_compactions(sid))
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # edit the last message
    assert w.chat.editor.editing is not None and w.chat.editor.editing.id == turns[-2].id
    w.composer.set_text("message 398, edited")
    driver.fake.script("An answer to the edited message.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text(w) == "An answer to the edited message."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=15)

    sent = driver.fake.model_requests[-1].body["messages"]
    assert "message 398, edited" in str(sent[-1]["content"])
    assert_compacted(sent, turns)
    stored = driver.run(w.store.get_turns(sid))
    copy, edited, answer = stored[-3:]
    assert copy.id != compaction.summary_turn_id and edited.text() == "message 398, edited"
    new_rows = [copy.id, *[t.id for t in turns[N - 4:N - 2]], edited.id, answer.id]
    driver.until(lambda: [n.key for n in rows(w)] == new_rows)
    assert [n.kind for n in rows(w)].count("card") == 1 and rows(w)[0].kind == "card"
    driver.until(lambda: w.transcript.branch_of(edited.id) == (2, 2))

    assert w.chat.opener.switch_branch(edited.id, -1)  # the original, with its summary
    expected = [compaction.summary_turn_id, *[t.id for t in turns[N - 4:N]]]
    driver.until(lambda: [n.key for n in rows(w)] == expected and w.tasks.pending == 0)
    assert [n.kind for n in rows(w)].count("card") == 1
    assert w.transcript.branch_of(turns[-2].id) == (1, 2)


def test_a_fork_from_a_message_after_the_card_shows_the_card_and_sends_the_summary(
        driver: Any) -> None:
    """Trial 20: F on a message kept after the card made a fork without it (the summary
    is stored after the turns it kept), sent with the 396 turns it replaced."""
    w = driver.configured()
    sid, turns = compacted(driver, w)
    lv = w.transcript.list_view
    lv.clearFocus()
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.set_current_row(2)  # "message 397", the second message after the card
    assert w.transcript.focused_turn_id() == turns[N - 3].id
    driver.qtbot.keyClick(lv, Qt.Key.Key_F)  # Fork from here
    driver.until(lambda: w.session_id not in (None, sid) and rows(w)
                 and w.tasks.pending == 0, timeout=15)
    driver.settle(w)
    fork = w.session_id
    assert [n.kind for n in rows(w)] == ["card", "turn", "turn"]
    [copy] = driver.run(w.store.list_compactions(fork))
    copies = driver.run(w.store.get_turns(fork))
    assert [n.key for n in rows(w)] == [copy.summary_turn_id, copies[N - 4].id,
                                        copies[N - 3].id]
    assert f"Summarized {N - 4} messages" in card_text(w)
    assert rows(w)[-1].turn.text() == turns[N - 3].text()

    driver.fake.script("An answer in the fork.")
    driver.send("A question in the fork", w)
    driver.until(lambda: driver.last_text(w) == "An answer in the fork."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=15)
    sent = driver.fake.model_requests[-1].body["messages"]
    assert_compacted(sent, turns)
    assert "message 397" in str(sent) and "message 398" not in str(sent)
    assert "A question in the fork" in str(sent[-1]["content"])


def test_a_fork_from_ones_own_message_after_the_card_offers_to_send_it_compacted(
        driver: Any) -> None:
    """The fork's last stored turn is the summary's copy, but it ends with the message
    as shown: the note offers Send, which asks about that message with the summary."""
    w = driver.configured()
    sid, turns = compacted(driver, w)
    w.transcript.forkRequested.emit(turns[N - 4].id)  # "Fork from here" on "message 396"
    driver.until(lambda: w.session_id not in (None, sid) and rows(w)
                 and notice_text(w.transcript) is not None, timeout=15)
    assert [n.kind for n in rows(w)] == ["card", "turn"]
    assert rows(w)[-1].turn.text() == turns[N - 4].text()
    bar = w.transcript.error_bar
    assert error_text(w.transcript) is None and bar.retry_button.text() == "Send"
    driver.fake.script("An answer in the fork.")
    driver.qtbot.mouseClick(bar.retry_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.last_text(w) == "An answer in the fork."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=15)
    sent = driver.fake.model_requests[-1].body["messages"]
    assert_compacted(sent, turns)
    assert sent[-1]["role"] == "user" and "message 396" in str(sent[-1]["content"])
    assert "message 397" not in str(sent)
    assert [n.kind for n in rows(w)] == ["card", "turn", "turn"]


def test_fork_on_the_summary_card_starts_a_chat_from_the_summary(driver: Any) -> None:
    """Trial 20c: Fork on the card made a fork holding the card and the four turns kept
    after it, listed as "Fork, from a message without text". It holds the card alone
    (opening to the turns it replaced), is listed "from the summary", and its first
    message is sent with the summary only."""
    w = driver.configured()
    sid, turns = compacted(driver, w)
    [compaction] = driver.run(w.store.list_compactions(sid))
    lv, bar = w.transcript.list_view, w.transcript.actions_row
    lv.setFocus(Qt.FocusReason.TabFocusReason)
    lv.set_current_row(0)  # the card
    driver.until(lambda: bar.isVisible() and bar.row == 0 and bar.buttons["fork"].isVisible())
    driver.qtbot.mouseClick(bar.buttons["fork"], Qt.MouseButton.LeftButton)
    driver.until(lambda: w.session_id not in (None, sid) and rows(w)
                 and w.tasks.pending == 0, timeout=15)
    driver.settle(w)
    fork = w.session_id
    [copy] = driver.run(w.store.list_compactions(fork))
    assert [(n.kind, n.key) for n in rows(w)] == [("card", copy.summary_turn_id)]
    assert copy.summary_turn_id != compaction.summary_turn_id
    assert f"Summarized {N - 4} messages" in card_text(w)
    assert notice_text(w.transcript) is None and error_text(w.transcript) is None
    model = w.sidebar.model
    driver.until(lambda: model.index_of(fork).data(FORK_POINT) == "from the summary")
    assert "without text" not in model.index_of(fork).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index_of(fork).data(Qt.ItemDataRole.ToolTipRole).endswith(
        "Fork, from the summary")

    click = w.transcript.fold_point(copy.summary_turn_id, "card")  # it opens to its turns
    driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=click)
    driver.until(lambda: len(rows(w)) == 1 + CARD_PAGE, timeout=10)
    assert rows(w)[-1].turn.text() == turns[N - 5].text()
    # Trial 20d: the card's last turn (a reply) offered Regenerate, which asked the model
    # to answer the summary. Turns inside a card are history: no Regenerate, no Continue.
    last = len(rows(w)) - 1
    assert rows(w)[-1].turn.role == "assistant"
    assert not w.transcript.can_regenerate() and not w.transcript.model.is_last(last)
    lv.set_current_row(last)
    driver.until(lambda: bar.isVisible() and bar.row == last)
    assert not bar.buttons["regenerate"].isVisible()

    driver.fake.script("An answer in the fork.")
    driver.send("A question in the fork", w)
    driver.until(lambda: driver.last_text(w) == "An answer in the fork."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=15)
    sent = driver.fake.model_requests[-1].body["messages"]
    assert_compacted(sent, turns)
    assert not [t for t in turns[N - 4:] if t.text() in str(sent)]  # nor the kept ones
    assert "A question in the fork" in str(sent[-1]["content"])
    assert len(driver.run(w.store.get_turns(sid))) == N + 1  # the parent is as it was


def test_retry_right_after_compact_now_sends_nothing(driver: Any) -> None:
    w = driver.configured()
    sid, _turns = compacted(driver, w)
    sent = len(driver.fake.model_requests)
    w.transcript.setFocus()
    driver.qtbot.keyClick(w, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Ctrl+R
    driver.qtbot.wait(200)
    assert "nothing to retry" in w.statusBar().currentMessage()
    assert len(driver.fake.model_requests) == sent
    assert len(driver.run(w.store.get_turns(sid))) == N + 1


def test_compacting_again_after_one_exchange_shows_one_card_with_every_turn(
        driver: Any) -> None:
    w = driver.configured()
    sid, turns = compacted(driver, w)
    [first] = driver.run(w.store.list_compactions(sid))
    assert first.replaced_count == N - 4
    driver.fake.script("Noted.")
    driver.send("One more message", w, wait=True)
    mine, reply = w.chat.turns[-2:]
    assert mine.text() == "One more message"
    driver.fake.script(SUMMARY)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: len(driver.run(w.store.list_compactions(sid))) == 2, timeout=30)
    driver.settle(w)
    second = next(c for c in driver.run(w.store.list_compactions(sid))
                  if c.summary_turn_id != first.summary_turn_id)
    assert second.replaced_count == N - 2

    def check(win: Any) -> None:
        kept = [turns[-2].id, turns[-1].id, mine.id, reply.id]
        driver.until(lambda: [n.key for n in rows(win)] == [second.summary_turn_id, *kept],
                     timeout=10)
        assert rows(win)[0].kind == "card"
        assert f"Summarized {N - 2} messages" in card_text(win)
        lv = win.transcript.list_view
        click = win.transcript.fold_point(second.summary_turn_id, "card")
        driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=click)
        # the card holds the first summary (a card of its own) and the turns up to the kept
        driver.until(lambda: first.summary_turn_id in [n.key for n in rows(win)], timeout=10)
        keys = [n.key for n in rows(win)]
        assert keys[:2] == [second.summary_turn_id, first.summary_turn_id]
        inner = rows(win)[1]
        assert inner.kind == "card" and inner.depth == 1
        assert keys[2:] == [turns[-4].id, turns[-3].id, *kept]
        assert [n.depth for n in rows(win)[2:4]] == [1, 1]
        click = win.transcript.fold_point(first.summary_turn_id, "card")
        driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=click)
        # its last page of turns, then the rest with "Show more"
        driver.until(lambda: len(rows(win)) == 2 + CARD_PAGE + 2 + 4, timeout=10)
        assert [n.key for n in rows(win)][2:2 + CARD_PAGE] == [
            t.id for t in turns[N - 4 - CARD_PAGE : N - 4]]
        more = win.transcript.anchor_point(first.summary_turn_id, CARD_MORE_HREF)
        driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=more)
        driver.until(lambda: len(rows(win)) == 2 + N + 2, timeout=10)
        assert [n.key for n in rows(win)][2:2 + N - 4] == [t.id for t in turns[:N - 4]]
        assert all(n.depth == 2 for n in rows(win)[2:2 + N - 4])

    check(w)
    check(restart(driver, w, sid))


def test_opening_a_card_keeps_its_header_where_it_was(driver: Any) -> None:
    w = driver.configured()
    long_summary = SUMMARY.replace("</summary>", "".join(
        f"- Message {k}: counted, repeated back five times.\n" for k in range(200))
        + "</summary>")  # ~200 lines: taller than the view
    sid, _turns = compacted(driver, w, summary=long_summary)  # the view is at the chat's end
    [compaction] = driver.run(w.store.list_compactions(sid))
    view, lv = w.transcript, w.transcript.list_view
    top = lv.visualRect(view.model.index(0)).top()
    assert lv.sticks_to_bottom
    click = view.fold_point(compaction.summary_turn_id, "card")
    driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=click)
    # a page of its turns read and shown
    driver.until(lambda: len(rows(w)) == 1 + CARD_PAGE + 4, timeout=10)
    driver.qtbot.wait(100)  # rows measured as they are painted
    assert lv.verticalScrollBar().maximum() > 0  # the chat is taller than the view now
    assert lv.visualRect(view.model.index(0)).top() == top  # the header stayed put
    assert "▾" in card_text(w)  # and it says it is open
    # Space on the card closes it again, the header still in place (the focus arrives by
    # the keyboard, as with Ctrl+Shift+M: after a click, letters and Space go to the box)
    lv.clearFocus()
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.setCurrentIndex(view.model.index(0))
    driver.qtbot.keyClick(lv, Qt.Key.Key_Space)
    driver.until(lambda: len(rows(w)) == 5)
    assert lv.visualRect(view.model.index(0)).top() == top
