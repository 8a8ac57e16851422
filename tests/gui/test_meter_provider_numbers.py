"""The context meter reads the provider's numbers: the window its model list gives (not the
catalog's) and the input tokens its last reply reported (system prompt and tools included),
plus an estimate of what was added since. Real window, store, SDK and fake provider."""

from __future__ import annotations

from typing import Any

from parley.core.context.tokens import estimate_tokens
from parley.gui.header.context_meter import short_count


def test_meter_shows_the_listed_window_and_the_reported_tokens(driver: Any) -> None:
    driver.fake.anthropic_models = [{"id": "claude-sonnet-4-6", "display_name": "Claude Sonnet 4.6",
                                     "max_input_tokens": 200_000, "max_tokens": 64_000}]
    driver.fake.windows.token_scale = 2.0  # the provider counts twice Parley's estimate
    w = driver.configured()
    driver.send("Count the words of this: " + "alpha beta gamma delta " * 400, wait=True)
    meter = w.context_meter
    driver.until(lambda: meter.context_window == 200_000)

    assert meter.window_source == "provider" and meter.measured
    reply = w.chat.turns[-1]
    reported = reply.usage.total_input_tokens
    assert reported > 0 and meter.used > reported  # the reply itself is added
    assert f"/ {short_count(200_000)}" in meter.label.text()  # the report: "/ 1M"
    tip = meter.toolTip()
    assert "as the provider reports it" in tip and "Counted by the provider" in tip


def test_without_a_reply_the_meter_counts_the_tools_the_chat_sends(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("permission")  # the first message gets no reply: nothing measured it
    driver.send("Hello")
    driver.until(lambda: bool(driver.error_text()))
    driver.settle()
    assert driver.fake.model_requests[-1].body.get("tools")  # its request carried tools
    specs = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
             for t in w.chat.runner.tools.specs()]
    tools_alone = estimate_tokens([], tools=specs)
    driver.until(lambda: w.context_meter.used >= tools_alone)
    assert not w.context_meter.measured
