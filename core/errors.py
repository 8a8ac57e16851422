"""The root of every error a Parley user can meet.

Errors a person can act on derive from :class:`ParleyError` and carry a message
that says what happened, what was kept and what to do. Bugs are not dressed up
as user errors: they propagate to the crash handler and the log.
"""

from __future__ import annotations


class ParleyError(Exception):
    """Base class of every user-facing Parley error.

    Attributes:
        message: the sentence shown to the user (also ``str(err)``).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
