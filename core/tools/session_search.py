"""``session_search(query)``: the model looks things up in past conversations.

It uses the same full-text index as the sidebar's search box
(``Store.search``: every session's turns and titles, bm25 order, words
matched as typed, the last one as a prefix) and returns the best
:data:`MAX_HITS` matches as text: the session's title, the date, and a
snippet with the matched words in ``**bold**``. Hits from the conversation
the tool runs in are left out unless asked for: that conversation is already
in the model's context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from parley.core.providers.base import ToolSpec
from parley.core.store.models import MATCH_END, MATCH_START, SearchHit
from parley.core.tools.registry import ToolContext, ToolError

MAX_HITS = 10
#: Hits asked of the index, so that ``MAX_HITS`` remain once this session's are left out.
FETCH_HITS = 40
MAX_QUERY_CHARS = 500


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def format_hits(query: str, hits: Sequence[SearchHit]) -> str:
    """Return search hits as the text the model reads.

    Args:
        query: what was searched for.
        hits: the hits to show, best first.

    Returns:
        One numbered entry per hit: title, date (UTC), session id and a
        snippet with matches in ``**…**``; or a sentence saying nothing matched.
    """
    if not hits:
        return f"No past conversation matches '{query}'."
    lines = [f"{len(hits)} match(es) for '{query}' in past conversations, best first:"]
    for n, hit in enumerate(hits, 1):
        title = hit.session_title or "Untitled"
        where = "title" if hit.turn_id is None else "message"
        snippet = hit.snippet.replace(MATCH_START, "**").replace(MATCH_END, "**")
        lines.append(
            f"{n}. \"{title}\" — {_when(hit.created_at)} ({where} match, "
            f"session {hit.session_id})\n   {snippet}"
        )
    return "\n".join(lines)


class SessionSearchTool:
    """``session_search(query)`` over every session (``store.search``)."""

    def __init__(self) -> None:
        self.spec = ToolSpec(
            "session_search",
            "Search the user's past conversations (every session, all spaces) by words, "
            "like the search box of the app. Returns up to 10 matches, best first, each "
            "with the conversation's title, its date and a snippet. Use it when the user "
            "refers to something discussed before that is not in this conversation.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "A few words to find (all must match); "
                        "\"quotes\" keep a phrase together.",
                    },
                    "include_current": {
                        "type": "boolean",
                        "description": "Also search this conversation (default false).",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        )

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search and return the hits as text.

        Raises:
            ToolError: the query is empty.
            InvalidSearchQuery: nothing searchable in the query (a ParleyError:
                it reaches the model as an error result).
        """
        query = str(input["query"]).strip()
        if not query:
            raise ToolError("The query is empty: give a few words to search for.")
        include_current = bool(input.get("include_current", False))
        hits = await ctx.store.search(query, limit=FETCH_HITS)
        if not include_current:
            hits = [h for h in hits if h.session_id != ctx.session_id]
        return format_hits(query, hits[:MAX_HITS])
