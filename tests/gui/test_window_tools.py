"""The model uses Parley's tools from the real window."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)


def test_a_memory_write_by_the_model_is_shown_and_remembered(driver, fake_provider):
    w = driver.configured()
    # No title requests: they would take the scripted replies from the fake's queue.
    driver.run(w.store.set_setting("chat.auto_title", False))
    fake_provider.script(tool_calls=[{"name": "set_context",
                                      "input": {"key": "memory", "mode": "append",
                                                "content": "The user's cat is called Miso."}}])
    fake_provider.script("Noted: your cat is Miso.")
    driver.send("Remember that my cat is called Miso.")
    driver.until(lambda: driver.last_text() == "Noted: your cat is Miso.", timeout=20)
    first, second = fake_provider.model_requests[-2:]
    assert {t["name"] for t in first.body["tools"]} >= {"set_context", "session_search"}
    results = [b for m in second.body["messages"] for b in (m["content"] if isinstance(
        m["content"], list) else []) if b.get("type") == "tool_result"]
    assert results and not results[0].get("is_error")
    turns = driver.run(w.store.get_turns(w.session_id))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert len(w.transcript.turn_ids()) == 4  # the tool round is in the transcript

    # A new chat in the same space has the memory in its system prompt.
    fake_provider.script("Miso, of course.")
    first_session = w.session_id
    w.window_commands.new_session()
    driver.until(lambda: not w.chat.turns, timeout=10)
    driver.send("What is my cat called?")
    driver.until(lambda: driver.last_text() == "Miso, of course.", timeout=20)
    system = fake_provider.model_requests[-1].body["system"]
    text = system if isinstance(system, str) else " ".join(b["text"] for b in system)
    assert "Miso" in text and w.session_id != first_session
