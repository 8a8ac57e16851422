"""A reply cut at the model's output limit says so under it, and Continue asks for the rest.

Real window, real store file, real Anthropic SDK against the fake provider server
(``stop_reason: max_tokens``; OpenAI's ``finish_reason: length`` is the same stop).
"""

from __future__ import annotations

from typing import Any

from parley.core.content import TextBlock, Turn
from parley.gui.chat.run import CONTINUE_MESSAGE
from parley.gui.transcript.specs import CONTINUE_HREF, LENGTH_MARK, STOPPED_MARK
from tests.gui.answers import click_anchor, until_answered
from tests.gui.transcript_reading import text_of_last


def test_a_reply_cut_at_the_length_limit_is_marked_and_continue_asks_for_the_rest(
    driver: Any,
) -> None:
    w = driver.configured()
    driver.fake.script("The first half of a long answer, cut in the mid",
                       stop_reason="max_tokens")
    driver.send("Write a long story", w, wait=True)
    cut = w.chat.turns[-1]
    shown = text_of_last(w.transcript)
    assert LENGTH_MARK in shown and "Continue" in shown and STOPPED_MARK not in shown
    assert "↻ Regenerate" in shown  # still offered
    stored = driver.run(w.store.get_turns(w.chat.session_id))[-1]
    assert stored.stop_reason == "max_tokens" and not stored.aborted

    driver.fake.script("…dle of the sentence. The end.")
    click_anchor(driver, w, cut.id, CONTINUE_HREF)
    until_answered(driver, w, "…dle of the sentence. The end.")
    turns = driver.run(w.store.get_turns(w.chat.session_id))
    assert [t.text() for t in turns[-2:]] == [CONTINUE_MESSAGE, "…dle of the sentence. The end."]
    request = driver.fake.model_requests[-1].body["messages"]
    assert "cut in the mid" in str(request[-2])  # the cut reply is in the context
    # The new, complete reply has no mark.
    assert LENGTH_MARK not in text_of_last(w.transcript)


def test_a_reopened_chat_still_marks_the_reply_cut_at_the_length_limit(driver: Any) -> None:
    w = driver.configured()
    s = driver.run(w.store.create_session(title="Cut", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Long story please")])))
    driver.run(w.store.append_turn(s.id, Turn("assistant", [TextBlock("Once upon a")],
                                              stop_reason="max_tokens")))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    driver.until(lambda: LENGTH_MARK in text_of_last(w.transcript))


def test_continue_on_a_stopped_reply_goes_on_from_it_and_reads_as_one_reply(
    driver: Any,
) -> None:
    """One name, Continue: the link under a stopped reply sends Continue's message (the
    model reads what it wrote and goes on, no fresh answer), and the stopped part then
    says it was continued below instead of "reply incomplete"."""
    from parley.gui.transcript.specs import CONTINUED_MARK, RESUME_HREF

    w = driver.configured()
    s = driver.run(w.store.create_session(title="Stopped", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Long story please")])))
    stopped = driver.run(w.store.append_turn(s.id, Turn(
        "assistant", [TextBlock("Once upon a time, in a far")], aborted=True)))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    shown = text_of_last(w.transcript)
    assert STOPPED_MARK in shown and "Continue" in shown and "Resume" not in shown

    driver.fake.script("away land, a story went on.")
    click_anchor(driver, w, stopped.id, RESUME_HREF)
    until_answered(driver, w, "away land, a story went on.")
    turns = driver.run(w.store.get_turns(s.id))
    assert [t.text() for t in turns[-2:]] == [CONTINUE_MESSAGE, "away land, a story went on."]
    request = driver.fake.model_requests[-1].body["messages"]
    assert "in a far" in str(request)  # the stopped part is what the model goes on from
    view = w.transcript
    row = view.turn_ids().index(stopped.id)
    under_stopped = view.list_view.layout_of(row, fresh=True).plain_text()
    assert CONTINUED_MARK in under_stopped and STOPPED_MARK not in under_stopped


def _sent_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n\n".join(part["text"] for part in content if part.get("type") == "text")


def test_continue_shows_the_words_the_model_was_sent_under_the_reply_not_as_a_message(
    driver: Any,
) -> None:
    """Continue's message is a quiet "continued" fold line between the two parts of the
    reply, not a bubble of the person's; unfolded, it shows exactly what the model
    read (after a stopped reply, the wire's note before it). The turns stored, and
    sent, stay as they were: the request alternates user and assistant."""
    from parley.gui.transcript.specs import CONTINUED_FOLD, CONTINUED_LINE, RESUME_HREF

    w = driver.configured()
    s = driver.run(w.store.create_session(title="Stopped", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Long story please")])))
    stopped = driver.run(w.store.append_turn(s.id, Turn(
        "assistant", [TextBlock("Once upon a time, in a far")], aborted=True)))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    driver.fake.script("away land, a story went on.")
    click_anchor(driver, w, stopped.id, RESUME_HREF)
    until_answered(driver, w, "away land, a story went on.")

    request = driver.fake.model_requests[-1].body["messages"]
    assert [m["role"] for m in request] == ["user", "assistant", "user"]
    view = w.transcript
    ids = view.turn_ids()
    asked = w.chat.turns[-2]
    assert asked.text() == CONTINUE_MESSAGE and ids.index(asked.id) == ids.index(stopped.id) + 1
    row = ids.index(asked.id)
    layout = view.list_view.layout_of(row, fresh=True)
    assert layout.frame_kind != "bubble"  # no message of the person's between the parts
    assert layout.plain_text().strip().endswith(CONTINUED_LINE)
    assert CONTINUE_MESSAGE not in layout.plain_text()

    view.toggle_fold(row, CONTINUED_FOLD)
    shown = view.list_view.layout_of(row, fresh=True).plain_text()
    assert _sent_text(request[-1]) in shown  # word for word what the model read
    assert "stopped before it finished" in shown and CONTINUE_MESSAGE in shown


def test_continue_after_the_length_limit_shows_its_words_unfolded(driver: Any) -> None:
    from parley.gui.transcript.specs import CONTINUED_FOLD

    w = driver.configured()
    driver.fake.script("The first half, cut in the mid", stop_reason="max_tokens")
    driver.send("Write a long story", w, wait=True)
    driver.fake.script("…dle. The end.")
    click_anchor(driver, w, w.chat.turns[-1].id, CONTINUE_HREF)
    until_answered(driver, w, "…dle. The end.")
    view = w.transcript
    row = view.turn_ids().index(w.chat.turns[-2].id)
    assert view.list_view.layout_of(row, fresh=True).frame_kind != "bubble"
    view.toggle_fold(row, CONTINUED_FOLD)
    shown = view.list_view.layout_of(row, fresh=True).plain_text()
    request = driver.fake.model_requests[-1].body["messages"]
    assert _sent_text(request[-1]) == CONTINUE_MESSAGE and CONTINUE_MESSAGE in shown
