"""A reply written by a model other than the chat's current one says which, in a muted line
under it; replies of the chat's own model have none unless they have siblings (‹ n/m ›: then
each is named) (real window, real store, fake server)."""

from __future__ import annotations

from typing import Any

from tests.gui.answers import chat_with_answer, until_answered
from tests.gui.show_transcript import dark_palette


def _shown(w: Any, turn_id: str) -> str:
    """What the transcript shows for a turn, from its current (cached) layout."""
    row = w.transcript.model.row_of(turn_id)
    assert row is not None
    return str(w.transcript.list_view.layout_of(row).plain_text())


def _regenerated_by_another_model(driver: Any) -> tuple[Any, Any, str]:
    """A chat whose first reply was regenerated with another model, then a second
    exchange with the chat's own model. Returns (window, the other model, own ref)."""
    w = chat_with_answer(driver)
    own = w.chat.current_model()
    driver.until(lambda: len(w.model_picker.choices) > 1, timeout=10)
    other = next(c for c in w.model_picker.choices if c.ref != own)
    driver.fake.script("From the other model.")
    assert w.window_commands.regenerate_reply(other.ref)
    until_answered(driver, w, "From the other model.")
    driver.fake.script("From the chat's model.")
    driver.send("Thanks", w, wait=True)
    return w, other, own


def test_a_reply_of_another_model_names_it_and_the_chats_own_replies_do_not(
        driver: Any) -> None:
    w, other, own = _regenerated_by_another_model(driver)
    regenerated, latest = w.chat.turns[1], w.chat.turns[3]
    assert regenerated.model == other.ref and latest.model == own

    assert f"Answered by {other.label}" in _shown(w, regenerated.id)
    assert "Answered by" not in _shown(w, latest.id)
    assert "Answered by" not in _shown(w, w.chat.turns[0].id)  # not under the person's
    assert w.model_picker.label_of(own) != other.label


def test_picking_another_model_for_the_chat_moves_the_lines(driver: Any) -> None:
    w, other, own = _regenerated_by_another_model(driver)
    regenerated, latest = w.chat.turns[1], w.chat.turns[3]
    entry = next(a for a in w.model_picker.menu().actions() if a.data() == other.ref)

    entry.trigger()  # the header's menu: the chat now uses the other model

    # The regenerated reply has a sibling (‹ 2/2 ›): a reply with siblings is named
    # whatever wrote it (several models' answers, issue 34), so its line stays.
    assert f"Answered by {other.label}" in _shown(w, regenerated.id)
    assert f"Answered by {w.model_picker.label_of(own)}" in _shown(w, latest.id)
    driver.until(lambda: driver.run(w.store.get_session(w.session_id)).model == other.ref)
    assert f"Answered by {other.label}" in _shown(w, regenerated.id)  # after the save too


def test_the_line_survives_a_restart_and_a_new_palette(driver: Any) -> None:
    w, other, _own = _regenerated_by_another_model(driver)
    sid, regenerated = w.session_id, w.chat.turns[1].id
    driver.close(w)

    w2 = driver.open()
    driver.until(lambda: w2.chat.session_id == sid and len(w2.chat.turns) == 4)
    # The display names come with the providers' model lists, after the chat is shown.
    driver.until(lambda: f"Answered by {other.label}" in _shown(w2, regenerated), timeout=10)

    w2.transcript.setPalette(dark_palette())  # a switch of the system colour scheme
    driver.until(lambda: w2.transcript.list_view.delegate.colors.dark)
    driver.until(lambda: f"Answered by {other.label}" in _shown(w2, regenerated))
