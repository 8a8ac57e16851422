"""Parley's own export format: a session and its turns, losslessly.

Shape (version 1)::

    {"format": "parley", "version": 1,
     "session": {"title": ..., "system": ..., ...},   # free-form metadata
     "turns": [Turn.to_json(), ...]}

Every block round-trips through ``parley.core.content.block_to_json`` /
``block_from_json``; a block kind this version does not know is kept as an
unknown block, so a file written by a newer Parley loses nothing it can carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parley.core.content import ContentError, Turn
from parley.core.convert.errors import NotAConversation

__all__ = ["FORMAT", "VERSION", "ParleyDocument", "export_parley", "import_parley"]

FORMAT = "parley"
VERSION = 1


@dataclass(slots=True)
class ParleyDocument:
    """An imported Parley export.

    Attributes:
        turns: the turns, with the ids, times and flags they were saved with.
        session: the session metadata as written (``title``, ``system``, ...).
    """

    turns: list[Turn]
    session: dict[str, Any] = field(default_factory=dict)


def export_parley(
    turns: Sequence[Turn], *, session: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Return a session and its turns as a Parley export (a JSON-ready dict).

    Args:
        turns: the session's turns in order (aborted and summary turns included).
        session: JSON-ready metadata, e.g. ``{"title": ..., "system": ...}``.

    Returns:
        ``{"format": "parley", "version": 1, "session": {...}, "turns": [...]}``.
    """
    return {
        "format": FORMAT,
        "version": VERSION,
        "session": dict(session or {}),
        "turns": [t.to_json() for t in turns],
    }


def import_parley(data: Mapping[str, Any]) -> ParleyDocument:
    """Read a Parley export written by :func:`export_parley`.

    Args:
        data: the parsed JSON object.

    Returns:
        The turns (ids, times, aborted flags, models and usage kept) and the
        session metadata.

    Raises:
        NotAConversation: `data` is not a Parley export, was written by a newer
            format version, or holds a turn that cannot be read (the reason
            names it).
    """
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise NotAConversation('it is not a Parley export (no "format": "parley")')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise NotAConversation("the Parley export has no format version")
    if version > VERSION:
        raise NotAConversation(
            f"it was written by a newer Parley (format version {version}; this version reads "
            f"up to {VERSION}), so update Parley and import it again"
        )
    session = data.get("session") or {}
    if not isinstance(session, Mapping):
        raise NotAConversation('its "session" is not an object')
    raw_turns = data.get("turns")
    if not isinstance(raw_turns, list):
        raise NotAConversation('its "turns" are not a list')
    turns: list[Turn] = []
    for i, raw in enumerate(raw_turns, start=1):  # counted from 1, for people
        if not isinstance(raw, Mapping):
            raise NotAConversation(f"turn {i} is not an object")
        try:
            turns.append(Turn.from_json(raw))
        except ContentError as exc:
            raise NotAConversation(f"turn {i} cannot be read ({exc})") from exc
    return ParleyDocument(turns, dict(session))
