"""The root of every error a Parley user can meet.

Errors a person can act on derive from :class:`ParleyError` and carry a message
that says what happened, what was kept and what to do. Bugs are not dressed up
as user errors: they propagate to the crash handler and the log.
"""

from __future__ import annotations

from typing import Any


def _rebuilt(cls: type[ParleyError], args: tuple[Any, ...], state: dict[str, Any]) -> ParleyError:
    """A :class:`ParleyError` unpickled: its type, ``args`` and attributes, no ``__init__``."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class ParleyError(Exception):
    """Base class of every user-facing Parley error.

    Attributes:
        message: the sentence shown to the user (also ``str(err)``).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as type, ``args`` and attributes: a subclass's ``__init__`` takes other
        arguments than ``args`` (the provider process sends errors this way,
        ``parley.core.providers.process``)."""
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))
