"""A sampling profiler of the GUI thread for the benchmarks: what ran, and what ran
during the longest stalls.

A background thread reads the main thread's Python stack every ``interval_s``
(``sys._current_frames``) and stamps it. Afterwards :meth:`StallSampler.top` says
which functions the samples were in (self and cumulative, in ms ≈ samples ×
interval), and :meth:`StallSampler.window` does the same for a time window (a
stall the benchmark's ticker saw). A sample is taken when the sampler thread gets
the GIL, so a long call into C++ that holds it shows as the Python frame that made
the call, stamped when it returns.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from types import FrameType

_PLUMBING = ("qasync/", "asyncio/", "benchmarks/", "<frozen")


def _stack(frame: FrameType | None) -> tuple[str, ...]:
    """``file:function`` names of ``frame`` and its callers, innermost first."""
    out: list[str] = []
    while frame is not None:
        code = frame.f_code
        name = code.co_filename.rsplit("/", 2)
        out.append(f"{'/'.join(name[-2:])}:{code.co_name}")
        frame = frame.f_back
    return tuple(out)


class StallSampler:
    """Samples the main thread's stack from a daemon thread.

    Args:
        interval_s: seconds between samples (default 1 ms).
    """

    def __init__(self, interval_s: float = 0.001) -> None:
        self.interval_s = interval_s
        self.samples: list[tuple[float, tuple[str, ...]]] = []  # (perf_counter, stack)
        self._main = threading.main_thread().ident
        self._running = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Starts sampling (clears earlier samples)."""
        self.samples.clear()
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops sampling and waits for the thread."""
        self._running = False
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while self._running:
            frame = sys._current_frames().get(self._main)  # noqa: SLF001
            self.samples.append((time.perf_counter(), _stack(frame)))
            del frame
            time.sleep(self.interval_s)

    def top(self, start: float = 0.0, end: float = float("inf"), n: int = 25,
            only: str = "") -> str:
        """A table of the functions sampled between ``start`` and ``end`` (perf_counter s).

        Args:
            start: window start.
            end: window end.
            n: rows per table.
            only: keep cumulative rows whose name contains this (e.g. ``parley``).

        Returns:
            Two tables (self, cumulative), ms estimated from the sample spacing.
        """
        picked = [(t, s) for t, s in self.samples if start <= t <= end]
        if len(picked) < 2:
            return "  (no samples)"
        span_ms = (picked[-1][0] - picked[0][0]) * 1000
        per = span_ms / len(picked)
        own: Counter[str] = Counter()
        cum: Counter[str] = Counter()
        for _t, stack in picked:
            if stack:
                own[stack[0]] += 1
            for name in set(stack):
                if only in name and not name.startswith(_PLUMBING):
                    cum[name] += 1
        lines = [f"  {len(picked)} samples over {span_ms:.0f} ms ({per:.2f} ms each)",
                 "  self:"]
        lines += [f"    {c * per:7.1f} ms  {name}" for name, c in own.most_common(n)]
        lines.append("  cumulative:")
        lines += [f"    {c * per:7.1f} ms  {name}" for name, c in cum.most_common(n)]
        return "\n".join(lines)

    def window(self, start: float, end: float, n: int = 12) -> str:
        """The innermost-first stacks sampled between ``start`` and ``end``, grouped."""
        picked = [s for t, s in self.samples if start <= t <= end]
        stacks = Counter(tuple(x for x in s if "asyncio" not in x)[:14] for s in picked)
        lines = []
        for stack, c in stacks.most_common(n):
            lines.append(f"    {c} × " + " < ".join(stack))
        return "\n".join(lines) or "    (no samples)"
