"""Parley's own export format: a session and its turns, losslessly.

Shape (version 1: a chat without branches)::

    {"format": "parley", "version": 1,
     "session": {"title": ..., "system": ..., ...},   # free-form metadata
     "turns": [Turn.to_json(), ...]}

Version 2 carries the whole conversation tree (``parley.core.store.schema``'s
``turn_links``/``turn_path``): every turn of every branch, each after its parent,
with ``"parent_id"`` (null for a first message), and ``"path"``, the ids of the
turns the chat shows, first message first. A chat without branches is still
written as version 1, which every Parley reads.

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
#: The newest version written and read; version 1 (no tree) is still written when it says
#: everything.
VERSION = 2
PARENT_KEY = "parent_id"


@dataclass(slots=True)
class ParleyDocument:
    """An imported Parley export.

    Attributes:
        turns: the turns, with the ids, times and flags they were saved with; with a
            tree, every branch's, each after its parent.
        session: the session metadata as written (``title``, ``system``, ...).
        parents: each turn's parent id (None: a first message), for a version 2
            export; None for version 1 (the turns are one line).
        path: the ids of the turns the chat shows (version 2), else None.
    """

    turns: list[Turn]
    session: dict[str, Any] = field(default_factory=dict)
    parents: dict[str, str | None] | None = None
    path: list[str] | None = None


def export_parley(
    turns: Sequence[Turn],
    *,
    session: Mapping[str, Any] | None = None,
    parents: Mapping[str, str | None] | None = None,
    path: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Return a session and its turns as a Parley export (a JSON-ready dict).

    Args:
        turns: the session's turns in order (aborted and summary turns included):
            the path shown, or with ``parents`` every turn of the tree, each after its
            parent (``Store.get_tree``'s order).
        session: JSON-ready metadata, e.g. ``{"title": ..., "system": ...}``.
        parents: each turn's parent id (None: a first message), to write the tree.
        path: with ``parents``: the ids of the turns the chat shows, in order.

    Returns:
        ``{"format": "parley", "version": 1, "session": {...}, "turns": [...]}``, or
        version 2 with each turn's ``parent_id`` and the ``path`` when ``parents`` holds
        a turn off ``path`` (module docstring).
    """
    doc: dict[str, Any] = {"format": FORMAT, "version": 1, "session": dict(session or {})}
    if parents is None or path is None or len(path) == len(turns):
        doc["turns"] = [t.to_json() for t in turns]
        return doc
    doc["version"] = VERSION
    doc["turns"] = [{**t.to_json(), PARENT_KEY: parents.get(t.id)} for t in turns]
    doc["path"] = list(path)
    return doc


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
    parents: dict[str, str | None] = {}
    for i, raw in enumerate(raw_turns, start=1):  # counted from 1, for people
        if not isinstance(raw, Mapping):
            raise NotAConversation(f"turn {i} is not an object")
        try:
            turn = Turn.from_json(raw)
        except ContentError as exc:
            raise NotAConversation(f"turn {i} cannot be read ({exc})") from exc
        if version >= 2:
            parent = raw.get(PARENT_KEY)
            if parent is not None and parent not in parents:
                raise NotAConversation(f"turn {i}'s parent is not a turn before it")
            parents[turn.id] = parent
        turns.append(turn)
    if version < 2:
        return ParleyDocument(turns, dict(session))
    return ParleyDocument(turns, dict(session), parents, _path(data.get("path"), parents))


def _path(raw: Any, parents: Mapping[str, str | None]) -> list[str]:
    """The path a version 2 export shows, checked: a line of its turns from a first
    message down, each the child of the one before. Raises NotAConversation."""
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise NotAConversation('its "path" is not a list of turn ids')
    before: str | None = None
    for turn_id in raw:
        if turn_id not in parents or parents[turn_id] != before:
            raise NotAConversation('its "path" is not a line of its turns from a first message')
        before = turn_id
    return list(raw)
