"""A chat opened from elsewhere (the palette, search, a link) is listed in the sidebar.

The list reads each space a page at a time ("Show more"); a chat opened beyond the pages
read would be neither selected nor scrolled to. :func:`list_up_to` reads the pages of its
space up to it, in one read from where the list stops (its place in the list is counted
first: ``Store.session_position``), never the whole list again. The rows go into the
list :data:`STEP` at a time, the event loop running between (10,000 chats, the oldest
opened: 9,950 rows in one go held the GUI thread ~1.2 s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.gui.sidebar.view import Sidebar

STEP = 250  # rows put in the list at a time


async def list_up_to(store: Any, sidebar: Sidebar, session_id: str, space_id: str, page: int,
                     add: Callable[[str, Sequence[Any], bool], None]) -> bool:
    """Read ``space_id``'s chats from the last listed one through ``session_id`` (whole
    pages of ``page``) and give them to ``add`` (space id, sessions, whether more follow).

    Nothing is read when the chat is listed, archived and hidden, or its space's first
    page is not listed yet (start-up lists it, then selects it). Returns True when a read
    was listed.

    Raises:
        SessionNotFound: the chat was deleted meanwhile (the caller's to ignore).
    """
    model = sidebar.model
    if model.has(session_id) or not model.has_more(space_id):
        return False
    where = await store.session_position(session_id, include_archived=sidebar.show_archived)
    offset = model.loaded_count(space_id)
    if where is None or where < offset or model.has(session_id):
        return False
    count = -(-(where + 1 - offset) // page) * page  # whole pages, through the chat
    sessions = await store.list_sessions(space_id=space_id, limit=count + 1, offset=offset,
                                         include_archived=sidebar.show_archived)
    more = len(sessions) > count
    sessions = sessions[:count]
    for start in range(0, len(sessions), STEP):
        if model.loaded_count(space_id) != offset + start or not model.has_more(space_id):
            return start > 0  # another page came meanwhile ("Show more"): left as it is
        last = start + STEP >= len(sessions)
        add(space_id, sessions[start:start + STEP], more if last else True)
        if not last:
            await asyncio.sleep(0)
    return True
