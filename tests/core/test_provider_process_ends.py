"""The provider process never outlives Parley (parley.core.providers.process.worker's
``end_with_parent``): a stopped one is killed with a Parley killed by SIGKILL, one whose
Parley ended before it started exits at once, and one started from a thread that ends
soon after (the reader restarting it) lives on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from parley.core.providers.process.protocol import encode, read_message, write_all
from parley.core.providers.process.spawn import spawn, worker_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the kernel ends it with its parent on Linux only")

#: A Parley-like parent: starts the provider process as Parley does (spawn.py, from its
#: main thread), waits until it answers (its first act, asking to end with Parley, is
#: done), says its pid, and waits to be killed.
PARENT = textwrap.dedent("""
    import time
    from parley.core.providers.process.protocol import encode, read_message, write_all
    from parley.core.providers.process.spawn import spawn, worker_command
    helper = spawn(worker_command())
    write_all(helper.stdin.fileno(), encode(("ping", 0)))
    assert read_message(helper.stdout.fileno()) == ("pong", 0, None)
    print(helper.pid, flush=True)
    time.sleep(120)
""")


def alive(pid: int) -> bool:
    """True while ``pid`` runs or is stopped (a zombie, killed but not yet reaped by
    whoever adopted it, is not alive)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def answers(proc: subprocess.Popen[bytes]) -> bool:
    """Ping ``proc`` over its pipes; True when it pongs."""
    assert proc.stdin is not None and proc.stdout is not None
    write_all(proc.stdin.fileno(), encode(("ping", 0)))
    return read_message(proc.stdout.fileno()) == ("pong", 0, None)


def test_a_stopped_helper_dies_with_a_killed_parley() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT],  # noqa: S603
                              stdout=subprocess.PIPE, text=True)
    helper = 0
    try:
        assert parent.stdout is not None
        helper = int(parent.stdout.readline())
        os.kill(helper, signal.SIGSTOP)  # reads nothing from now on: the pipe cannot end it
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while alive(helper) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(helper), "the stopped provider process outlived a killed Parley"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if helper and alive(helper):
            os.kill(helper, signal.SIGKILL)


def test_a_helper_whose_parley_ended_before_it_started_exits_at_once() -> None:
    command = worker_command()
    assert command[-2:] == ["--parent", str(os.getpid())]
    command[-1] = "1"  # not its parent: as though Parley had ended before it asked
    proc = spawn(command)
    try:
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_helper_started_from_a_thread_that_ends_lives_on() -> None:
    """The reader thread restarts the process and ends: the process must not end with it
    (on Linux the kernel's signal follows the thread that started it)."""
    started: list[subprocess.Popen[bytes]] = []
    may_end = threading.Event()

    def start_then_end() -> None:
        started.append(spawn(worker_command()))
        may_end.wait(30)

    thread = threading.Thread(target=start_then_end)
    thread.start()
    proc: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + 20
        while not started and time.monotonic() < deadline:
            time.sleep(0.01)
        proc = started[0]
        assert answers(proc)  # it runs its loop: it asked to end with its parent already
        may_end.set()
        thread.join(10)
        time.sleep(0.5)
        assert proc.poll() is None and answers(proc)
    finally:
        may_end.set()
        thread.join(10)
        if proc is not None:
            assert proc.stdin is not None
            proc.stdin.close()  # Parley's quit: it exits by itself
            assert proc.wait(10) == 0
