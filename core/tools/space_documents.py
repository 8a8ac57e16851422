"""A space's documents in its chats' prompt, or searched by the model when too large.

Every chat of a space is given the space's documents
(:mod:`parley.core.store.space_documents`) as part of its frozen system prompt
(:mod:`parley.core.tools.system_prompt`), right after the chat's own prompt, so the
provider's prompt cache holds them (Anthropic: the system prompt's ``cache_control``
mark ends the cached prefix after them). Which way a chat gets them (:func:`way`):

* ``sent``: their text, page by page, when all of them together take at most
  :data:`SHARE_KEY` of the model's context window (default 25 %);
* ``search``: above that, a note naming them, and the tool
  ``search_space_documents(query)`` (:class:`SpaceDocumentsSearchTool`) that
  returns the best pages with their file name and page number;
* ``unsearchable``: too large, and Parley's tools are off for the chat: only the note.

The way a chat got them is frozen with its prompt (``documents`` in its frozen
record); it is looked at again only when the model's window changes which way fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import quoteattr

from parley.core.app_state import FROZEN_PROMPT
from parley.core.providers.base import ToolSpec
from parley.core.settings import Settings
from parley.core.store.space_documents import MATCH_END, MATCH_START, DocumentHit, SpaceDocument
from parley.core.tools.registry import ToolContext, ToolError
from parley.core.tools.space_images import image_shas, is_image

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

SHARE_KEY = "spaces.documents_max_share"
SEARCH_TOOL = "search_space_documents"
DOCUMENTS_HEADING = "# Space documents"
MAX_HITS = 8
#: What the prompt says of an image among the documents (the image itself is sent).
IMAGE_NOTE = ("It is the image given at the start of the conversation's first message, in "
              "the documents' order.")
Way = Literal["none", "sent", "search", "unsearchable"]


def way(tokens: int, count: int, window: int | None, share: float, *, tools_on: bool) -> Way:
    """Which way documents of ``tokens`` tokens go to a model of ``window`` tokens.

    Args:
        tokens: the documents' estimated tokens, all together.
        count: how many documents (0: ``none``).
        window: the model's context window, tokens (None: unknown; they are sent).
        share: the largest share of the window they may take when sent (0–1).
        tools_on: Parley's tools are on (else too large is ``unsearchable``).
    """
    if count == 0:
        return "none"
    if window is None or tokens <= share * window:
        return "sent"
    return "search" if tools_on else "unsearchable"


def describe(documents: Sequence[SpaceDocument], window: int | None, share: float,
             model: str, *, tools_on: bool = True) -> str:
    """One sentence for the space dialog: how many, how large, and which way they go.

    E.g. "3 documents, 41,000 tokens: sent with every message", or "3 documents,
    410,000 tokens: too large for claude-x's window (25% of 200,000 tokens): the
    model searches them".
    """
    tokens = sum(d.tokens for d in documents)
    n = len(documents)
    if n == 0:
        return "No documents: chats in this space get none."
    head = f"{n} document{'s' if n != 1 else ''}, {tokens:,} tokens"
    chosen = way(tokens, n, window, share, tools_on=tools_on)
    if chosen == "sent":
        return f"{head}: sent with every message (kept in the prompt cache)."
    over = (f"too large for {model}'s window ({share:.0%} of {window:,} tokens)"
            if window else "too large")
    if chosen == "search":
        return f"{head}: {over}: the model searches them."
    return f"{head}: {over}, and tools are off in this space: the model cannot read them."


def render_sent(space_name: str, documents: Sequence[tuple[SpaceDocument, list[str]]]) -> str:
    """The prompt section holding the documents' text, page by page."""
    where = f' "{space_name}"' if space_name else ""
    parts = [f"{DOCUMENTS_HEADING}\nThe space{where} gives this conversation these documents. "
             "Cite a document by its name and page when you use it."]
    for doc, pages in documents:
        if is_image(doc):
            parts.append(f"<document name={quoteattr(doc.name)} kind=\"image\">{IMAGE_NOTE}"
                         "</document>")
            continue
        body = "\n".join(
            f"<page number=\"{i}\">\n{text}\n</page>" for i, text in enumerate(pages, 1)
        ) if len(pages) > 1 else (pages[0] if pages else "")
        parts.append(f"<document name={quoteattr(doc.name)} pages=\"{doc.pages}\">\n{body}\n"
                     "</document>")
    return "\n".join(parts)


def render_note(space_name: str, documents: Sequence[SpaceDocument], *, searchable: bool) -> str:
    """The prompt section naming documents too large to send."""
    where = f' "{space_name}"' if space_name else ""
    tokens = sum(d.tokens for d in documents)
    lines = [DOCUMENTS_HEADING,
             f"The space{where} has documents too large to include here "
             f"(about {tokens:,} tokens):"]
    lines += [f"- {d.name} (an image: {IMAGE_NOTE[0].lower()}{IMAGE_NOTE[1:]})" if is_image(d)
              else f"- {d.name} ({d.pages} page{'s' if d.pages != 1 else ''})"
              for d in documents]
    if searchable:
        lines.append(f"Search them with {SEARCH_TOOL}(query) whenever a question may be "
                     "answered by them; each result gives the document and page to cite.")
    else:
        lines.append("You cannot read them in this conversation; say so if asked about them.")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Given:
    """What a chat was given, as frozen with its prompt.

    Attributes:
        way: see :func:`way`.
        names: the documents' names, in order.
        tokens: their estimated tokens, all together.
        window: the model's context window it was decided for (None: unknown).
        shas: the documents' sha256s, in order (empty when frozen before they were
            noted): whether the space's documents changed since (:meth:`same_as`).
        images: the sha256s of those that are images, in order: sent as images at the
            start of the chat's first message (``parley.core.tools.space_images``).
    """

    way: Way
    names: list[str]
    tokens: int
    window: int | None = None
    shas: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"way": self.way, "names": self.names, "tokens": self.tokens,
                "window": self.window, "shas": self.shas, "images": self.images}

    def same_as(self, documents: Sequence[SpaceDocument]) -> bool:
        """True when ``documents`` (the space's now) are those given: same names and,
        when noted, same contents."""
        if [d.name for d in documents] != self.names:
            return False
        return not self.shas or [d.sha256 for d in documents] == self.shas

    @classmethod
    def from_json(cls, value: object) -> Given | None:
        if not isinstance(value, Mapping) or value.get("way") not in (
                "none", "sent", "search", "unsearchable"):
            return None
        names = [str(n) for n in value.get("names") or []]
        window = value.get("window")
        shas = [str(h) for h in value.get("shas") or []]
        images = [str(h) for h in value.get("images") or []]
        return cls(value["way"], names, int(value.get("tokens") or 0),
                   int(window) if isinstance(window, int) else None, shas, images)


async def given_to(store: AsyncStore, session_id: str) -> Given | None:
    """What space documents a chat was given with its frozen prompt (None: none frozen
    yet, or frozen before space documents existed)."""
    record = await FROZEN_PROMPT.get(store, session_id)
    return Given.from_json(record.get("documents")) if isinstance(record, Mapping) else None


OLDER_NOTE = ("The space's documents have changed since: this chat keeps those it was "
              "given (its prompt is frozen so the cache holds); a new chat gets the "
              "space's documents as they are now.")


def given_text(given: Given, now: Sequence[SpaceDocument] | None = None) -> tuple[str, str]:
    """A chat's documents for its header: the short text and the tooltip.

    Args:
        given: what the chat was given.
        now: the space's documents now (None: not compared); when they differ from those
            given, the text says "older set" and the tooltip why (:data:`OLDER_NOTE`).

    Returns:
        E.g. ("2 documents", "Given to this chat: report.pdf, notes.txt (sent with every
        message, 4,100 tokens)"); ("", "") when it was given none and the space has none.
    """
    older = now is not None and not given.same_as(now)
    n = len(given.names)
    if n == 0 or given.way == "none":
        return ("no documents (older set)", f"Given to this chat: none. {OLDER_NOTE}") \
            if older else ("", "")
    how = {"sent": f"sent with every message, {given.tokens:,} tokens",
           "search": "too large to send: the model searches them",
           "unsearchable": "too large to send, and tools are off: not readable"}[given.way]
    names = ", ".join(given.names)
    text = f"{n} document{'s' if n != 1 else ''}"
    tip = f"Given to this chat: {names} ({how})"
    return (f"{text} (older set)", f"{tip}. {OLDER_NOTE}") if older else (text, tip)


def to_be_given_text(documents: Sequence[SpaceDocument]) -> tuple[str, str]:
    """A new chat's header line: the space's documents it will be given ("" when none)."""
    if not documents:
        return "", ""
    n = len(documents)
    names = ", ".join(d.name for d in documents)
    return (f"{n} document{'s' if n != 1 else ''}",
            f"This chat will be given its space's documents: {names}")


async def max_share(store: AsyncStore) -> float:
    """The setting :data:`SHARE_KEY`: the largest share of the window documents may take."""
    share: float = await Settings.of(store).get(SHARE_KEY)
    return share


async def render(store: AsyncStore, space_id: str, space_name: str, window: int | None, *,
                 tools_on: bool) -> tuple[str | None, Given]:
    """Render a space's documents for a chat's prompt as they are now.

    Returns:
        The prompt section (None when the space has none) and what it gives.
    """
    documents = await store.space_documents(space_id)
    tokens = sum(d.tokens for d in documents)
    chosen = way(tokens, len(documents), window, await max_share(store), tools_on=tools_on)
    given = Given(chosen, [d.name for d in documents], tokens, window,
                  [d.sha256 for d in documents], image_shas(documents))
    if chosen == "none":
        return None, given
    if chosen == "sent":
        texts = [(d, await store.space_document_pages(d.id)) for d in documents]
        return render_sent(space_name, texts), given
    return render_note(space_name, documents, searchable=chosen == "search"), given


def format_hits(query: str, hits: Sequence[DocumentHit]) -> str:
    """Search hits as the model reads them: file, page, snippet (matches in ``**…**``)."""
    if not hits:
        return f"No page of the space's documents matches '{query}'."
    lines = [f"{len(hits)} page(s) match '{query}', best first:"]
    for n, hit in enumerate(hits, 1):
        snippet = hit.snippet.replace(MATCH_START, "**").replace(MATCH_END, "**")
        lines.append(f"{n}. {hit.name}, page {hit.page} of {hit.pages}:\n   {snippet}")
    return "\n".join(lines)


class SpaceDocumentsSearchTool:
    """``search_space_documents(query)`` over the documents of the chat's space."""

    def __init__(self) -> None:
        self.spec = ToolSpec(
            SEARCH_TOOL,
            "Search the documents of this conversation's space (full text, every page). "
            f"Returns up to {MAX_HITS} pages, best first, each with the document's name, the "
            "page number and the text around the match. Cite the document and page.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "maxLength": 500,
                        "description": "Words to find (all must be on the page); "
                        "\"quotes\" keep a phrase together.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        )

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search and return the pages as text.

        Raises:
            ToolError: the query is empty.
            InvalidSearchQuery: nothing searchable in it (reaches the model as an error).
        """
        query = str(input.get("query", "")).strip()
        if not query:
            raise ToolError("The query is empty: give a few words to search for.")
        ids, gone = await searchable_for(ctx.store, ctx.session_id, ctx.space_id)
        hits = await ctx.store.search_space_documents(ctx.space_id, query, MAX_HITS, ids)
        text = format_hits(query, hits)
        if gone:
            text += (f"\nNot searchable any more: {', '.join(gone)} (removed from the space "
                     "or replaced since this conversation began).")
        return text


async def searchable_for(store: AsyncStore, session_id: str,
                         space_id: str) -> tuple[list[str] | None, list[str]]:
    """Which of the space's documents a chat searches: those it was given, as they were.

    A document added since is not searched (the chat was never told of it); one removed
    or replaced since is named as gone (its text given to the chat is no longer stored).

    Returns:
        The ids of the documents to search (None: no frozen record, all of the space's)
        and the names of those given that are gone.
    """
    given = await given_to(store, session_id)
    if given is None:
        return None, []
    now = await store.space_documents(space_id)
    if given.shas:
        kept = [d for d in now if d.sha256 in given.shas]
        have = {d.sha256 for d in kept}
        gone = [n for n, h in zip(given.names, given.shas, strict=False) if h not in have]
    else:  # frozen before the contents were noted: by name
        kept = [d for d in now if d.name in given.names]
        gone = [n for n in given.names if n not in {d.name for d in kept}]
    return [d.id for d in kept], gone
