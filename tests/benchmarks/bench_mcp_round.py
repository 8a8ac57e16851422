"""Benchmark: Parley's overhead of one tool round through a local stdio MCP server.

Starts the fake MCP server (``tests.fakes.mcp_server``, the SDK's ``MCPServer`` over
stdio) with ``echo`` always allowed, on a real sessions.db, warms it up with one call,
then times, per round (the model excluded):

- ``specs``: ``ToolExecutor.request_specs`` (the chat's frozen tool list read back);
- ``round``: ``ToolExecutor.run_round`` of one ``echo`` call (routing, the approval
  check, the hop to the MCP event loop, JSON-RPC to the subprocess and back, the result
  as a tool_result block);
- ``total``: both.

Prints the median and 95th percentile in milliseconds; the budget is ``total`` p50 ≤ 50 ms.
Run: ``.venv/bin/python -m tests.benchmarks.bench_mcp_round [--rounds 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from parley.core.content import ToolUseBlock
from parley.core.mcp import McpHost, McpTools
from parley.core.store.async_store import AsyncStore
from parley.core.tools import ToolContext, ToolExecutor
from parley.core.tools.skills import SkillLibrary
from tests.fakes.mcp_server import stdio_entry

BUDGET_MS = 50.0


async def measure(rounds: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "mcp.json").write_text(json.dumps(
            {"mcpServers": {"fake": stdio_entry(alwaysAllow=["echo"])}}))
        store = await AsyncStore.open(root / "sessions.db")
        host = McpHost(root / "mcp.json")
        host.load()
        tools = ToolExecutor(store, library=SkillLibrary(user_dir=root, bundled_dir=None),
                             mcp=McpTools(host, store))
        try:
            session = await store.create_session()
            await tools.request_specs(session, [])  # starts the server, freezes the list
            ctx = ToolContext(store, session.id, session.space_id, [])
            call = ToolUseBlock("call_0", "mcp__fake__echo", {"text": "warm"})
            await tools.run_round([call], ctx)
            out: dict[str, list[float]] = {"specs": [], "round": [], "total": []}
            for i in range(rounds):
                t0 = time.perf_counter()
                await tools.request_specs(session, [])
                t1 = time.perf_counter()
                turn = await tools.run_round(
                    [ToolUseBlock(f"call_{i}", "mcp__fake__echo", {"text": f"n{i}"})], ctx)
                t2 = time.perf_counter()
                assert turn.blocks[0].content[0].text == f"echo: n{i}"
                out["specs"].append((t1 - t0) * 1000)
                out["round"].append((t2 - t1) * 1000)
                out["total"].append((t2 - t0) * 1000)
            return out
        finally:
            await host.close()
            await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.rounds))
    for name, values in figures.items():
        values.sort()
        p50 = statistics.median(values)
        p95 = values[int(len(values) * 0.95) - 1]
        print(f"{name:6} p50 {p50:6.2f} ms   p95 {p95:6.2f} ms")
    p50 = statistics.median(figures["total"])
    print(f"budget: total p50 <= {BUDGET_MS:g} ms: {'ok' if p50 <= BUDGET_MS else 'OVER'}")


if __name__ == "__main__":
    main()
