"""The fake server's command line offers what the server class supports (issue 30):
``--window`` (a small-window model, windows enforced), ``--token-scale`` and
``--summary-answers``, started as a person would (``python -m tests.fakes.server``) on a
free port and spoken to with the real SDK; and its normal summary of long messages is
long enough for Parley's summary check (``parley.core.compaction.check``)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx2
import pytest

from parley.core.compaction.check import check_answer
from parley.core.compaction.prompt import transcript_prompt
from parley.core.content import TextBlock, Turn
from parley.core.context.tokens import text_tokens

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def started() -> Iterator[str]:
    """The fake server started from its command line; its Anthropic base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.server", "--port", "0", "--token-delay-ms", "0",
         "--window", "20000", "--token-scale", "4", "--summary-answers", "empty"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        url = next(ln.split()[-1] for ln in lines if ln.startswith("Anthropic base URL"))
        assert any("claude-small-window has a 20,000-token context window" in ln
                   for ln in lines)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_flags_set_the_window_the_scale_and_the_summary_answers(started: str) -> None:
    models = httpx2.get(f"{started}/v1/models",
                        headers={"anthropic-version": "2023-06-01"}).json()["data"]
    small = next(m for m in models if m["id"] == "claude-small-window")
    assert small["max_input_tokens"] == 20_000
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=started, max_retries=0)
    # ~6,000 estimated tokens: under the window as Parley estimates, over it x4
    text = "word " * 6_000
    counted = client.messages.count_tokens(
        model="claude-small-window", messages=[{"role": "user", "content": text}])
    assert counted.input_tokens > 20_000
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        client.messages.create(model="claude-small-window", max_tokens=64,
                               messages=[{"role": "user", "content": text}])
    turns = [Turn("user", [TextBlock("How do octopuses sleep?")]),
             Turn("assistant", [TextBlock("They change colour while asleep.")])]
    msg = client.messages.create(
        model="claude-small-window", max_tokens=400,
        messages=[{"role": "user", "content": transcript_prompt(turns, level=0)}])
    assert "".join(getattr(b, "text", "") for b in msg.content).strip() == ""  # "empty"


def test_bad_values_are_refused_in_words() -> None:
    done = subprocess.run([sys.executable, "-m", "tests.fakes.server", "--summary-answers",
                           "maybe"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "invalid choice: 'maybe'" in done.stderr


async def test_a_normal_summary_of_long_messages_passes_the_summary_check(
        fake_provider) -> None:
    client = anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0,
                                      base_url=fake_provider.anthropic_base_url)
    turns = []
    for n in range(10):  # ten messages of about 2,000 tokens, echoed back
        words = " ".join(f"m{n}w{k}" for k in range(1_000))
        turns += [Turn("user", [TextBlock(f"Message {n}: {words}")]),
                  Turn("assistant", [TextBlock(f"You said: {words}")])]
    ask = transcript_prompt(turns, level=0)
    msg = await client.messages.create(model="claude-haiku-4-5", max_tokens=4_000,
                                       messages=[{"role": "user", "content": ask}])
    answer = msg.content[0].text
    verdict = check_answer(answer, msg.stop_reason, text_tokens(ask))
    assert verdict.reason is None, verdict
    assert len(answer) < len(ask) / 5  # still a summary: far shorter than what it replaces

