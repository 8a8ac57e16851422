"""A reply cut at the model's output limit says so under it, and Continue asks for the rest.

Real window, real store file, real Anthropic SDK against the fake provider server
(``stop_reason: max_tokens``; OpenAI's ``finish_reason: length`` is the same stop).
"""

from __future__ import annotations

from typing import Any

from parley.core.content import TextBlock, Turn
from parley.gui.chat.run import CONTINUE_MESSAGE
from parley.gui.transcript.specs import CONTINUE_HREF, LENGTH_MARK, STOPPED_MARK
from tests.gui.test_regenerate import _answered, _click_anchor


def test_a_reply_cut_at_the_length_limit_is_marked_and_continue_asks_for_the_rest(
    driver: Any,
) -> None:
    w = driver.configured()
    driver.fake.script("The first half of a long answer, cut in the mid",
                       stop_reason="max_tokens")
    driver.send("Write a long story", w, wait=True)
    cut = w.chat.turns[-1]
    shown = w.transcript.text_of_last()
    assert LENGTH_MARK in shown and "Continue" in shown and STOPPED_MARK not in shown
    assert "↻ Regenerate" in shown  # still offered
    stored = driver.run(w.store.get_turns(w.chat.session_id))[-1]
    assert stored.stop_reason == "max_tokens" and not stored.aborted

    driver.fake.script("…dle of the sentence. The end.")
    _click_anchor(driver, w, cut.id, CONTINUE_HREF)
    _answered(driver, w, "…dle of the sentence. The end.")
    turns = driver.run(w.store.get_turns(w.chat.session_id))
    assert [t.text() for t in turns[-2:]] == [CONTINUE_MESSAGE, "…dle of the sentence. The end."]
    request = driver.fake.model_requests[-1].body["messages"]
    assert "cut in the mid" in str(request[-2])  # the cut reply is in the context
    # The new, complete reply has no mark.
    assert LENGTH_MARK not in w.transcript.text_of_last()


def test_a_reopened_chat_still_marks_the_reply_cut_at_the_length_limit(driver: Any) -> None:
    w = driver.configured()
    s = driver.run(w.store.create_session(title="Cut", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Long story please")])))
    driver.run(w.store.append_turn(s.id, Turn("assistant", [TextBlock("Once upon a")],
                                              stop_reason="max_tokens")))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and bool(w.chat.turns))
    driver.until(lambda: LENGTH_MARK in w.transcript.text_of_last())
