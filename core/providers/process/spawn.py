"""Starting the provider process, cheaply enough to do before the window is painted.

:func:`start_early` runs first thing in the app (``parley.gui.app``) and imports only
:mod:`subprocess`; :class:`parley.core.providers.process.client.ProviderProcess` takes
the process it started (:func:`take_early`) at its first request instead of starting
another.
"""

from __future__ import annotations

import subprocess
import sys

#: The packaged app's switch that makes its executable the provider process
#: (``packaging/parley_entry.py``).
FROZEN_SWITCH = "--provider-worker"
WORKER_MODULE = "parley.core.providers.process.worker"

_early: subprocess.Popen[bytes] | None = None


def worker_command() -> list[str]:
    """The command that starts the provider process: this interpreter running
    :mod:`parley.core.providers.process.worker`, or the packaged app with
    :data:`FROZEN_SWITCH`."""
    if getattr(sys, "frozen", False):
        return [sys.executable, FROZEN_SWITCH]
    return [sys.executable, "-m", WORKER_MODULE]


def spawn(command: list[str]) -> subprocess.Popen[bytes]:
    """Start ``command`` with pipes for its stdin and stdout (its stderr is ours).

    Raises:
        OSError: it could not be started.
    """
    return subprocess.Popen(  # noqa: S603 - our own interpreter or executable
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
    )


#: What the process started early imports at once, before any provider asks: Anthropic's
#: SDK (the usual first provider; an OpenAI-only user's SDK comes when asked, ~1 s later
#: on a busy second core).
WARM_EARLY = "anthropic"


def start_early() -> None:
    """Start the provider process now, importing :data:`WARM_EARLY`'s SDK at once, for the
    first request to take; a failure is left for that request to meet and report."""
    global _early
    if _early is None:
        try:
            _early = spawn([*worker_command(), "--warm", WARM_EARLY])
        except OSError:
            _early = None


def take_early() -> subprocess.Popen[bytes] | None:
    """The process :func:`start_early` started, if it still runs (then only once)."""
    global _early
    proc, _early = _early, None
    if proc is not None and proc.poll() is not None:
        return None
    return proc
