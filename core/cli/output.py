"""The command-line modes' output when its reader goes away (``parley --import F | head -1``).

A process writing to a pipe whose reader has exited gets ``EPIPE``, which Python raises
as ``BrokenPipeError`` — at the next ``print``, or when it flushes ``sys.stdout`` on
exit. The command-line modes (``--import``, ``--migrate-only``, ``--copy-to``) report their
result through the exit status too, so a reader that stopped reading must not turn a
finished import into a traceback and exit status 1. :func:`quiet_when_reader_leaves` makes
``sys.stdout`` and ``sys.stderr`` drop what is written once their reader is gone (the
Python documentation's advice for SIGPIPE, "Note on SIGPIPE", in the ``signal`` module's).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TextIO


class QuietWhenReaderLeaves(io.TextIOBase):
    """A text stream writing to ``stream`` until its reader is gone, then dropping writes.

    Args:
        stream: the stream written to (``sys.stdout``, ``sys.stderr``).

    Attributes:
        gone: True once a write or flush met a closed pipe.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        """Write ``text``; returns its length whether or not anybody reads it."""
        if not self.gone:
            try:
                self.stream.write(text)
            except BrokenPipeError:
                self._reader_left()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_left()

    def isatty(self) -> bool:
        return not self.gone and self.stream.isatty()

    def writable(self) -> bool:
        return True

    def _reader_left(self) -> None:
        """Stop writing, and point the descriptor at the null device so that the flush
        Python does on exit (of what the stream still buffers) cannot fail either."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.stream.fileno())
            os.close(null)


def quiet_when_reader_leaves() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` :class:`QuietWhenReaderLeaves` (idempotent)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, QuietWhenReaderLeaves):
            setattr(sys, name, QuietWhenReaderLeaves(stream))
