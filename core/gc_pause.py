"""Keep Python's cyclic garbage collector from stalling the GUI thread during start-up.

Importing the provider SDKs (and SQLAlchemy, Pygments…) in a worker thread created a
few hundred thousand objects (the SDKs are now imported in the provider process,
``parley.core.providers.process``, which pauses its own collector for them; the figures
below are from before that), and CPython then runs full (generation 2) collections in
the middle of the import. A collection holds the GIL for its whole length: measured on
a 2-core machine, 30–240 ms each while ``import anthropic`` ran in a thread, against a
start-up budget of 50 ms for the longest GUI-thread stall. With the collector paused
for the import the longest stall was 15 ms and the import itself was faster.

:func:`gc_paused` pauses the collector while any start-up import runs (from any
thread) and, when the last one ends, moves every object alive then into the
collector's permanent generation (:func:`gc.freeze`): modules, classes and SDK
schemas live for the whole run anyway, and later collections then no longer walk
them, so no collection after start-up pays for them either.

Measured again with the start-up state machine (issue 33, ``tests.benchmarks.bench_startup
--runs 3 --display offscreen``, a 2-core machine at load average 6-7, medians): with the
pause, providers ready 11.7 s / 14.6 s (empty / 1 GB store) and the longest GUI stall
0.30 s / 0.35 s; without it (the same code, :func:`gc_paused` a no-op) 20.5 s / 18.1 s
and 0.92 s / 0.72 s. Under Xvfb (``--runs 3``, load 1.4-1.9): with the pause the longest
GUI stall 43 / 68 ms and the message at the provider 3.99 / 3.61 s, without it 151 / 134 ms
and 4.57 / 4.14 s. It is kept. Again in session 15 (the same code with the collector left
on, the switch interval still 1 ms, launched in turn with this one, 5 rounds, Xvfb, load
1.6-2.5): with the pause 18 / 44 ms and 2.89 / 3.63 s, without it 150 / 141 ms and 3.97 /
4.03 s. It still pays. Again in session 19, the SDKs now imported in the provider
process (two passes in opposite orders, ``--runs 4``, Xvfb, load 0.9-1.7, empty / 1 GB
store): with the pause the longest GUI stall 21-43 / 34-36 ms and the chats listed at
1.06-1.14 / 1.12-1.15 s; without it 38-54 / 62-66 ms (over the 50 ms budget with the
1 GB store) and 1.15-1.24 / 1.21-1.23 s. It still pays.

While such an import runs, threads also take turns at the GIL more often
(:data:`SWITCH_INTERVAL_S`, 1 ms, against CPython's 5 ms): every call from Qt into the
window's Python code (a paint, a size hint, a slot) needs the GIL back, and with the
SDK's import holding it the GUI thread waited up to the whole interval each time; many
such waits made one stall. Issue 33, ``bench_startup --runs 3 --stores full`` under
Xvfb at load 2.4-3.0: the longest GUI stall 72 ms with 5 ms, 51 ms with 1 ms.
"""

from __future__ import annotations

import functools
import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

_lock = threading.Lock()
_depth = 0
_was_enabled = False
_was_interval = 0.005

#: Seconds a thread runs before another waiting for the GIL gets it, while start-up
#: imports run (``sys.setswitchinterval``; CPython's default is 5 ms).
SWITCH_INTERVAL_S = 0.001

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block (re-entrant, thread-safe).

    The collector is disabled when the first block starts (if it was enabled) and,
    when the last running block ends, every object then alive is frozen
    (:func:`gc.freeze`) and the collector is enabled again. Reference counting
    frees ordinary garbage meanwhile; only cycles wait. Meanwhile the GIL's switch
    interval is :data:`SWITCH_INTERVAL_S` (the one before is put back after).
    """
    global _depth, _was_enabled, _was_interval
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
            _was_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_was_interval, SWITCH_INTERVAL_S))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                sys.setswitchinterval(_was_interval)
                gc.freeze()
                if _was_enabled:
                    gc.enable()


def pausing_gc(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: run ``fn`` inside :func:`gc_paused`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return fn(*args, **kwargs)

    return wrapper
