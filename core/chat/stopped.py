"""A message the person stopped before any reply came, remembered across restarts.

Stop (Esc, Cancel) before the first word of a reply leaves the chat ending with the
person's message, as a crash or a quit does. The window says "Stopped before any reply
came" at once; after a restart it reads the same from here, and the restart notice does
not count that message as one the crash left unanswered
(``parley.core.recovery.previous_run``).

The fact is an ``app_state`` row per chat (:data:`parley.core.app_state.STOPPED`: the
message's turn id), no column of the turn: a chat keeps at most one, written when the
person stops (``ChatRunner.cancel(..., person=True)``), dropped when that message is
sent again (Retry, an edit, a regeneration: ``ChatRunner`` runs without a new message),
and gone with its chat. It counts only while the chat's last message is that turn
(:func:`stopped_before_reply`), so a later message needs no write.
"""

from __future__ import annotations

import logging
from typing import Any

from parley.core.app_state import STOPPED, StateStore

log = logging.getLogger(__name__)


async def mark(store: StateStore, session_id: str, turn_id: str) -> None:
    """Remember that the person stopped ``turn_id``'s run before any reply came.

    Raises:
        StoreError: the store could not be written.
    """
    await STOPPED.set(store, turn_id, of=session_id)


async def stopped_turn(store: StateStore, session_id: str) -> str | None:
    """The turn id of the chat's message stopped before any reply, None when none.

    Raises:
        StoreError: the store could not be read.
    """
    value: Any = await STOPPED.get(store, of=session_id)
    return value if isinstance(value, str) else None


async def stopped_before_reply(store: StateStore, session_id: str, last_id: str) -> bool:
    """True when the chat's last message, ``last_id``, is one the person stopped before
    any reply came (not one a crash or a quit left).

    Raises:
        StoreError: the store could not be read.
    """
    return await stopped_turn(store, session_id) == last_id


async def forget(store: StateStore, session_id: str) -> None:
    """The chat's stopped message is sent again: drop the mark (one read; a write only
    when there was one).

    Raises:
        StoreError: the store could not be read or written.
    """
    if await stopped_turn(store, session_id) is not None:
        await STOPPED.set(store, None, of=session_id)
