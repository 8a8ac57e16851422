"""Regenerate with another model in the real window: what can be refused is refused before
the answer moves; a request that fails afterwards says where the old answer is.

Real window, real store file, real SDKs against the fake provider server.
"""

from __future__ import annotations

import base64
from typing import Any

from parley.core.content import DocumentBlock, TextBlock
from tests.gui.answers import chat_with_answer, open_chat_with, until_answered
from tests.gui.transcript_reading import error_text, text_of_last

PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<<>>\n%%EOF\n"


def _problems(w: Any) -> list[Any]:
    """Record the problems the window shows (directly, or from a background task)."""
    shown: list[Any] = []
    w.show_problem = w.tasks.on_user_error = shown.append
    return shown


def _pdf_chat_and_local_model(driver: Any) -> tuple[Any, str]:
    """A Claude chat whose message holds doc.pdf, answered; and a local server's model."""
    doc = DocumentBlock("application/pdf", base64.b64encode(PDF).decode(), "doc.pdf")
    w, _turn_id = open_chat_with(driver, [doc, TextBlock("Summarize")])
    config = driver.run(w.hub.add_provider(
        "openai_compatible", base_url=driver.fake.openai_base_url, api_key="test-key",
        default_model="llama3.2:3b"))
    driver.run(w.chat.models.refresh_models())
    return w, f"{config.id}:llama3.2:3b"


def test_a_pdf_chat_regenerated_with_a_local_model_is_refused_and_left_as_it_was(
        driver: Any) -> None:
    w, llama = _pdf_chat_and_local_model(driver)
    sid = w.chat.session_id
    before = [(t.id, t.text()) for t in driver.run(w.store.get_turns(sid))]
    shown = _problems(w)
    assert llama in [ref for _label, ref in w.chat.regen.model_choices()]  # offered

    assert w.window_commands.regenerate_reply(llama)  # as "with another model… → llama3.2:3b" does
    driver.until(lambda: shown and w.tasks.pending == 0 and not w.composer_bar.busy)

    message = shown[0].message
    assert "“doc.pdf” can't be sent to this OpenAI-compatible server" in message
    assert "the answer is unchanged" in message
    assert [(t.id, t.text()) for t in driver.run(w.store.get_turns(sid))] == before
    assert driver.run(w.store.list_forks(sid)) == []
    assert [(t.id, t.text()) for t in w.chat.turns] == before  # the view too
    assert "Got it." in text_of_last(w.transcript)
    assert "↻ Regenerate" in text_of_last(w.transcript)  # can be tried again
    assert error_text(w.transcript) is None
    assert "previous answer" not in w.statusBar().currentMessage()
    assert not driver.fake.model_requests  # nothing was sent
    assert len(w.sidebar.model.session_ids()) == 1  # no fork listed


def test_a_model_whose_provider_is_gone_is_refused(driver: Any) -> None:
    w = chat_with_answer(driver)
    sid = w.chat.session_id
    shown = _problems(w)
    sent = len(driver.fake.model_requests)

    assert w.window_commands.regenerate_reply("removed:some-model")
    driver.until(lambda: shown and w.tasks.pending == 0 and not w.composer_bar.busy)

    assert "No provider called 'removed' is set up" in shown[0].message
    assert [t.text() for t in driver.run(w.store.get_turns(sid))] == [
        "Name a colour", "The first answer."]
    assert driver.run(w.store.list_forks(sid)) == []
    assert len(driver.fake.model_requests) == sent


def test_a_failed_request_says_where_the_old_answer_is_and_retry_asks_the_same_model(
        driver: Any) -> None:
    w = chat_with_answer(driver)
    sid = w.chat.session_id
    own = w.chat.current_model()
    driver.until(lambda: len(w.model_picker.choices) > 1, timeout=10)
    other = next(c for c in w.model_picker.choices if c.ref != own)
    driver.fake.fail("bad_request")

    assert w.window_commands.regenerate_reply(other.ref)
    driver.until(lambda: driver.error_text(w) and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=10)

    error = driver.error_text(w)
    assert "The previous answer is kept: ‹ under your message shows it" in error
    prompt = w.chat.turns[-1]
    driver.until(lambda: w.transcript.branch_of(prompt.id) == (2, 2))
    assert f"Retry asks {other.label} again." in error
    assert [t.text() for t in driver.run(w.store.get_turns(sid))] == ["Name a colour"]
    tree = driver.run(w.store.get_tree(sid))  # the old answer: a child of the prompt
    assert [(t.turn.text(), t.on_path) for t in tree] == [("Name a colour", True),
                                                         ("The first answer.", False)]
    assert driver.run(w.store.list_forks(sid)) == [] and w.sidebar.model.session_ids() == [sid]

    driver.fake.script("Second try.")
    assert w.window_commands.retry_run()
    until_answered(driver, w, "Second try.")
    # answered: the branches are on the reply again, the prompt is not a branch point
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (2, 2)
                 and w.transcript.branch_of(prompt.id) is None)
    assert driver.fake.model_requests[-1].body["model"] == other.ref.split(":", 1)[1]
    assert w.chat.turns[-1].model == other.ref
    assert driver.run(w.store.get_session(sid)).model == own  # the chat keeps its model

    driver.fake.script("Next answer.")
    driver.send("And another?", w, wait=True)
    assert driver.fake.model_requests[-1].body["model"] == own.split(":", 1)[1]


def test_a_failure_of_an_ordinary_run_says_nothing_about_forks(driver: Any) -> None:
    w = chat_with_answer(driver)
    driver.fake.fail("bad_request")
    driver.send("Again?", w)
    driver.until(lambda: driver.error_text(w) and w.tasks.pending == 0, timeout=10)
    assert "previous answer" not in driver.error_text(w)
