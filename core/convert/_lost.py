"""Collects what a conversion could not express, as sentences for the user."""

from __future__ import annotations


class LostLog:
    """Counts losses by reason and writes one sentence per reason.

    A reason is a sentence template holding ``{n}``, the number of times it
    happened, e.g. ``"{n} thinking block(s) were left out."``.
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, reason: str, n: int = 1) -> None:
        """Record that `reason` happened `n` more times (0: nothing)."""
        if n <= 0:
            return
        self._counts[reason] = self._counts.get(reason, 0) + n

    def flush(self, target: list[str] | None) -> None:
        """Append one sentence per reason, in first-seen order, to `target` (if given)."""
        if target is not None:
            target.extend(reason.format(n=n) for reason, n in self._counts.items())
        self._counts.clear()
