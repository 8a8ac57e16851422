"""App-state rows that name a version session, re-pointed to its chat (the tree conversion).

``app_state`` keys and values name sessions by id: the last chat open
(``session.last@<machine>``: the id as its value), a chat's draft
(``draft:<id>``), its unseen-turns note (``unseen:<id>``), its frozen system
prompt, MCP approvals… (``parley.core.store.settings_repo`` holds them as JSON
text). When the version sessions are folded into their chats
(``parley.core.store.upgrade.tree``), a row naming a version names its chat
instead; where the chat has a row of its own under the same key, the row of the
version the chat showed wins (the person was looking at it), any other is dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from parley.core.store.schema import app_state as A

_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


def _named(key: str, owner: dict[str, str]) -> str | None:
    """The version a key names (one of its tokens), or None."""
    return next((t for t in _TOKEN.findall(key) if t in owner), None)


def _value(raw: str, owner: dict[str, str]) -> str | None:
    """The value re-pointed (a session id, or a list of them), or None when unchanged."""
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return None
    if isinstance(value, str) and value in owner:
        return json.dumps(owner[value])
    if isinstance(value, list) and any(isinstance(v, str) and v in owner for v in value):
        out: list[Any] = []
        for v in value:  # a chat named twice once its versions are it: kept once
            v = owner.get(v, v) if isinstance(v, str) else v
            if v not in out:
                out.append(v)
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    return None


def repoint_state(con: Connection, owner: dict[str, str], shown: set[str]) -> None:
    """Re-point the ``app_state`` rows naming a version of ``owner`` (version id -> chat
    id); ``shown``: the versions their chats showed. Reads the table once (a few rows
    per chat at most)."""
    rows = {r.key: r.value for r in con.execute(select(A.c.key, A.c.value))}
    for key, raw in list(rows.items()):
        value = _value(raw, owner)
        if value is not None:
            con.execute(update(A).where(A.c.key == key).values(value=value))
            rows[key] = value
    for key in sorted(rows):
        vid = _named(key, owner)
        if vid is None:
            continue
        new_key = "".join(owner[t] if t == vid else t for t in _split(key))
        if new_key in rows and vid not in shown:
            con.execute(A.delete().where(A.c.key == key))
        else:
            con.execute(A.delete().where(A.c.key == new_key))
            con.execute(update(A).where(A.c.key == key).values(key=new_key))
            rows[new_key] = rows[key]
        del rows[key]


def _split(key: str) -> list[str]:
    """``key`` cut into tokens and what lies between them (joined again, it is ``key``)."""
    return [p for p in re.split(r"([A-Za-z0-9_-]+)", key) if p]
