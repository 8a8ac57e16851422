"""A new chat's context meter counts the system prompt its space will send (real window
and store): it showed 0 tokens until the first message was saved."""

from __future__ import annotations

from typing import Any

from parley.core.context.tokens import text_tokens

PROMPT = "You are a meticulous travel planner. " * 40


def test_a_new_chat_counts_its_spaces_system_prompt(driver: Any) -> None:
    w = driver.configured()
    space = driver.run(w.store.create_space("Trips", system_prompt=PROMPT)).id
    driver.run(w.chat.load_sidebar())
    driver.run(w.chat.opener.show_new_chat(space))
    driver.until(lambda: w.session_id is None and w.chat.space_id == space)
    assert w.context_meter.used >= text_tokens(PROMPT) > 300

    driver.run(w.chat.opener.show_new_chat(w.chat.organizer.default_space_id))  # no prompt there
    driver.until(lambda: w.chat.space_id != space)
    assert w.context_meter.used < 50
