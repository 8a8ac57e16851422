"""Starting the provider process: early (once the window has painted), or when first asked.

:func:`start_early` runs as soon as the app's window has painted (``parley.gui.app``);
:class:`parley.core.providers.process.client.ProviderProcess` takes the process it
started (:func:`take_early`) at its first request instead of starting another.

The process is told Parley's pid (:data:`PARENT_SWITCH`) and, on Linux, asks to be
killed when the thread that started it ends (``prctl(PR_SET_PDEATHSIG)``: see
:mod:`parley.core.providers.process.worker`): so it is always started from a thread that
lives as long as Parley — the main thread, or one kept for it (:func:`spawn`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future

#: The packaged app's switch that makes its executable the provider process
#: (``packaging/parley_entry.py``).
FROZEN_SWITCH = "--provider-worker"
WORKER_MODULE = "parley.core.providers.process.worker"
#: The switch that tells the provider process Parley's pid (it exits at once when its
#: parent is another: Parley ended before it could ask to end with it).
PARENT_SWITCH = "--parent"
#: Longest wait (s) for the thread kept for starting the process to start one.
START_WAIT_S = 30.0

_early: subprocess.Popen[bytes] | None = None
_early_asked = False  # start_early ran, or take_early did: no early start from then on


def worker_command() -> list[str]:
    """The command that starts the provider process: this interpreter running
    :mod:`parley.core.providers.process.worker`, or the packaged app with
    :data:`FROZEN_SWITCH`; then :data:`PARENT_SWITCH` and this process's pid."""
    parent = [PARENT_SWITCH, str(os.getpid())]
    if getattr(sys, "frozen", False):
        return [sys.executable, FROZEN_SWITCH, *parent]
    return [sys.executable, "-m", WORKER_MODULE, *parent]


def spawn(command: list[str]) -> subprocess.Popen[bytes]:
    """Start ``command`` with pipes for its stdin and stdout (its stderr is ours), from
    the main thread or, called from another thread, from a thread kept for it for the
    life of this process (on Linux the provider process is killed when the thread that
    started it ends: a reader or watchdog thread restarting it ends soon after).

    Raises:
        OSError: it could not be started.
    """
    if threading.current_thread() is threading.main_thread():
        return _popen(command)
    return _on_lasting_thread(command)


def _popen(command: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - our own interpreter or executable
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
    )


_starter: threading.Thread | None = None
_starter_jobs: list[tuple[list[str], Future[subprocess.Popen[bytes]]]] = []
_starter_wake = threading.Condition()


def _on_lasting_thread(command: list[str]) -> subprocess.Popen[bytes]:
    """:func:`_popen` run by the thread kept for it (started at first use, and again in a
    forked child).

    Raises:
        OSError: it could not be started, or not within :data:`START_WAIT_S`.
    """
    from concurrent.futures import Future
    from concurrent.futures import TimeoutError as FutureTimeout

    global _starter
    started: Future[subprocess.Popen[bytes]] = Future()
    with _starter_wake:
        if _starter is None or not _starter.is_alive():
            _starter = threading.Thread(target=_start_asked, name="parley-provider-starter",
                                        daemon=True)
            _starter.start()
        _starter_jobs.append((command, started))
        _starter_wake.notify()
    try:
        return started.result(timeout=START_WAIT_S)
    except FutureTimeout:
        raise OSError("the provider process was not started in time") from None


def _start_asked() -> None:
    """Start each process asked of the kept thread (runs for the life of this process)."""
    while True:
        with _starter_wake:
            while not _starter_jobs:
                _starter_wake.wait()
            command, started = _starter_jobs.pop(0)
        if not started.set_running_or_notify_cancel():
            continue
        try:
            started.set_result(_popen(command))
        except Exception as exc:  # handed to the caller, who raises it
            started.set_exception(exc)


def _forget_in_child() -> None:
    """In a forked child: the parent's kept thread does not run here (and its lock may
    have been held at the fork)."""
    global _starter, _starter_wake
    _starter = None
    _starter_jobs.clear()
    _starter_wake = threading.Condition()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


#: What the process started early imports at once, before any provider asks: Anthropic's
#: SDK (the usual first provider; an OpenAI-only user's SDK comes when asked, ~1 s later
#: on a busy second core).
WARM_EARLY = "anthropic"


def start_early() -> None:
    """Start the provider process now, importing :data:`WARM_EARLY`'s SDK at once, for the
    first request to take; a failure is left for that request to meet and report.

    The app calls it once its window has painted (``parley.gui.app.run``). Only the first
    call starts one, and none once a request took or made a process (:func:`take_early`):
    a late call never leaves a second process running.
    """
    global _early, _early_asked
    if _early_asked:
        return
    _early_asked = True
    try:
        _early = spawn([*worker_command(), "--warm", WARM_EARLY])
    except OSError:
        _early = None


def take_early() -> subprocess.Popen[bytes] | None:
    """The process :func:`start_early` started, if it still runs (then only once; from
    then on :func:`start_early` starts none)."""
    global _early, _early_asked
    _early_asked = True
    proc, _early = _early, None
    if proc is not None and proc.poll() is not None:
        return None
    return proc
