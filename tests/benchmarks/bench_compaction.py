"""Benchmark: the local work of compacting a 200k-token history (no model request).

Measures, on a history of about 200k estimated tokens with tool rounds:
planning the cut, rendering the separate request's transcript (both levels),
the tail transform, the overflow stubs, and the before/after estimates. The
model request itself is the provider's time and is not measured here. Run
with ``python -m tests.benchmarks.bench_compaction``; prints median / p95 ms.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from parley.core.compaction.plan import plan_compaction, restorable_files
from parley.core.compaction.prompt import transcript_prompt
from parley.core.compaction.wire import hide_tool_output, stub_for_overflow
from parley.core.content import CompactSummaryBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.capabilities import ANTHROPIC
from parley.core.wire import to_messages

TARGET_TOKENS = 200_000
_TEXT = (
    "the model reads every turn of the conversation and answers with care while the user "
    "asks about parsing files databases network errors and paths like /srv/app/config.toml"
)
_WORDS = _TEXT.split()


def history(seed: int = 7) -> list[Turn]:
    """About TARGET_TOKENS estimated tokens: questions, answers and tool rounds."""
    rng = random.Random(seed)
    turns: list[Turn] = []
    total = n = 0
    while total < TARGET_TOKENS:
        n += 1
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(20, 200)))
        new = [Turn("user", [TextBlock(f"Q{n}: {words}")])]
        if n % 3 == 0:
            call = f"toolu_{n}"
            output = "\n".join(words for _ in range(rng.randint(5, 40)))
            new += [
                Turn("assistant", [ToolUseBlock(call, "read_file", {"path": f"f{n}"})]),
                Turn("user", [ToolResultBlock(call, (TextBlock(output),))]),
            ]
        new.append(Turn("assistant", [TextBlock(f"A{n}: {words}")]))
        total += estimate_tokens(new)
        turns += new
    return turns


def measure(label: str, fn: Callable[[], Any], runs: int = 15) -> None:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p95 = times[int(len(times) * 0.95) - 1]
    print(f"{label:<44} median {statistics.median(times):8.2f} ms   p95 {p95:8.2f} ms")


def main() -> None:
    turns = history()
    tokens = estimate_tokens(to_messages(turns, ANTHROPIC))
    print(f"history: {len(turns)} turns, ~{tokens:,} estimated tokens")
    plan = plan_compaction(turns, 4)
    assert plan is not None
    summary = Turn("user", [CompactSummaryBlock("S " * 500, plan.replaced_count,
                                                plan.first_turn_id, plan.last_turn_id)])
    after = [*turns, summary]
    measure("plan the cut (keep 4)", lambda: plan_compaction(turns, 4))
    measure("restorable files", lambda: restorable_files(plan.summarized, 1_000_000))
    measure("transcript, level 0", lambda: transcript_prompt(plan.summarized, level=0))
    measure("transcript, level 1", lambda: transcript_prompt(plan.summarized, level=1))
    measure("tail transform (hide tool output)", lambda: hide_tool_output(turns, 4))
    measure("overflow stubs", lambda: stub_for_overflow(turns))
    measure("estimate before (wire + tokens)",
            lambda: estimate_tokens(to_messages(turns, ANTHROPIC)))
    measure("estimate after (wire + tokens)",
            lambda: estimate_tokens(to_messages(after, ANTHROPIC)))
    chars = len(transcript_prompt(plan.summarized, level=0))
    print(f"transcript level 0: {chars:,} characters; after compaction: "
          f"~{estimate_tokens(to_messages(after, ANTHROPIC)):,} tokens")


if __name__ == "__main__":
    main()
