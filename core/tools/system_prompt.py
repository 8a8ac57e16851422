"""The system prompt with its context blocks, frozen per session.

What the model reads first is the session's own system prompt, then its space's
documents (:mod:`parley.core.tools.space_documents`: their text, or a note naming
them when they are searched instead), then the context blocks
(:func:`render_system_prompt`):

* **Memory** — the space's memory (``parley.core.tools.memory``) with its size and
  limit, and how to change it (``set_context``);
* **Skills** — every skill by key and one-line description, and how to load
  one (``load_context``) and unload it (``unload_context``).

With tools off only a non-empty memory is added, as read-only notes.

**Frozen.** The first request of a session renders the prompt and saves it
(app state ``frozen_prompt:<session_id>``); every later request of the session
sends those exact bytes, so a memory write or a new skill file does not change
the prompt's prefix and the provider keeps reading it from its prompt cache.
It is rendered again (:class:`FrozenPrompts`) when:

* the session is compacted (its latest compaction summary turn changed): the
  cache prefix changes there anyway;
* the user asks (:meth:`FrozenPrompts.refresh`, e.g. a "Refresh memory and
  skills" command);
* the user changed what the prompt is made from on purpose: the session's own
  system prompt, or tools switched on or off for it;
* the model's context window changed which way the space's documents fit (sent
  whole or searched: ``parley.core.tools.space_documents.way``).

A space's documents added, replaced or removed later reach a chat at those moments
too: until then it keeps the documents it was given (:meth:`FrozenPrompts.given`),
images included (their bytes kept when frozen: ``parley.core.tools.space_images``).

A fork starts with its parent's frozen prompt (when made from the same system
prompt, tools on or off alike), so its first request can read the parent's
cached prefix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.core.app_state import FROZEN_PROMPT
from parley.core.content import CompactSummaryBlock, Turn, now_ms
from parley.core.tools import space_documents, space_images
from parley.core.tools.memory import Memory, MemoryStore
from parley.core.tools.skills import LOAD_TOOL, UNLOAD_TOOL, Skill, SkillLibrary
from parley.core.tools.space_documents import Given

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

MEMORY_HEADING = "# Memory"
SKILLS_HEADING = "# Skills"


def render_system_prompt(
    base: str | None,
    memory: Memory | None,
    skills: Sequence[Skill],
    *,
    tools_on: bool,
    space_name: str = "",
    documents: str | None = None,
) -> str | None:
    """Assemble the system prompt from the session's own prompt and the context blocks.

    Args:
        base: the session's system prompt (None or '' for none).
        memory: the space's memory (None: no memory block).
        skills: the skills to list (ignored when ``tools_on`` is False).
        tools_on: the model may call Parley's tools in this session.
        space_name: the space's name, shown in the memory block.
        documents: the space documents' section
            (``parley.core.tools.space_documents.render``), put right after ``base``.

    Returns:
        The prompt (sections separated by a blank line), or None when there is
        nothing to say (no base prompt, tools off, empty memory).
    """
    parts: list[str] = []
    if base and base.strip():
        parts.append(base.strip())
    if documents:
        parts.append(documents)
    where = f' "{space_name}"' if space_name else ""
    if memory is not None and (tools_on or memory.text):
        if tools_on:
            intro = (
                f"Notes you keep across the conversations of the space{where} (about "
                f"{memory.tokens:,} of {memory.limit:,} tokens used). Change them with the "
                "set_context tool when you learn something worth keeping."
            )
        else:
            intro = f"Notes kept across the conversations of the space{where}:"
        body = memory.text or "(empty)"
        parts.append(f"{MEMORY_HEADING}\n{intro}\n<memory>\n{body}\n</memory>")
    if tools_on and skills:
        lines = [
            SKILLS_HEADING,
            f"Reference documents you can load with {LOAD_TOOL}(key) when a task needs one, "
            f"and unload with {UNLOAD_TOOL}(key) when you are done with it:",
        ]
        lines += [f"- {s.key}: {s.description or s.name}" for s in skills]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) or None


def latest_summary_id(turns: Sequence[Turn]) -> str | None:
    """Return the id of the session's latest compaction summary turn, or None."""
    for turn in reversed(turns):
        if not turn.aborted and any(isinstance(b, CompactSummaryBlock) for b in turn.blocks):
            return turn.id
    return None


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a frozen prompt was made for; a different one means render again.

    Attributes:
        base_sha256: hash of the session's own system prompt ('' hashed for none).
        tools_on: tools were on.
        summary_id: the latest compaction summary turn then (None: never compacted).
    """

    base_sha256: str
    tools_on: bool
    summary_id: str | None

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base_sha256, "tools": self.tools_on, "summary": self.summary_id}


def fingerprint(base: str | None, tools_on: bool, turns: Sequence[Turn]) -> Fingerprint:
    """Return the fingerprint of a session's prompt inputs (see :class:`Fingerprint`)."""
    digest = hashlib.sha256((base or "").encode("utf-8")).hexdigest()
    return Fingerprint(digest, tools_on, latest_summary_id(turns))


class FrozenPrompts:
    """Renders a session's system prompt once and keeps sending the same bytes.

    Args:
        store: the ``AsyncStore`` (``get_state`` / ``set_state``, ``get_space``).
        memories: the space memories.
        library: the skills.
    """

    def __init__(self, store: AsyncStore, memories: MemoryStore, library: SkillLibrary) -> None:
        self.store = store
        self.memories = memories
        self.library = library
        #: What each chat was given, as :meth:`get` last read or saved its frozen record
        #: (the request that follows asks for it again: tools, the space's images).
        self._given: dict[str, Given | None] = {}

    async def render(self, session: Session, *, tools_on: bool,
                     window: int | None = None) -> str | None:
        """Render the prompt of a session as it would be now (nothing saved).

        Args:
            session: a ``parley.core.store.Session`` (``space_id``, ``system_prompt``).
            tools_on: tools are on for the session.
            window: the model's context window, tokens (None: unknown), which decides
                whether the space's documents are sent or searched.
        """
        return (await self._render(session, tools_on=tools_on, window=window))[0]

    async def _render(self, session: Session, *, tools_on: bool,
                      window: int | None) -> tuple[str | None, Given]:
        space = await self.store.get_space(session.space_id)
        memory = await self.memories.get(session.space_id)
        skills = self.library.skills() if tools_on else []
        documents, given = await space_documents.render(
            self.store, session.space_id, space.name, window, tools_on=tools_on)
        text = render_system_prompt(session.system_prompt, memory, skills, tools_on=tools_on,
                                    space_name=space.name, documents=documents)
        return text, given

    async def get(self, session: Session, turns: Sequence[Turn], *, tools_on: bool,
                  window: int | None = None) -> str | None:
        """Return the system prompt to send for a session: the frozen one, or a new one.

        Args:
            session: the session (``id``, ``space_id``, ``system_prompt``).
            turns: its stored turns (for the latest compaction summary).
            tools_on: tools are on for this request.
            window: the model's context window, tokens (None: unknown).

        Returns:
            The prompt (None for none). Byte-identical to the previous call's
            unless the fingerprint changed, the window changed which way the
            space's documents go, or :meth:`refresh` was called; a new prompt is
            saved (with what documents it gives) before it is returned.
        """
        mark = fingerprint(session.system_prompt, tools_on, turns).to_json()
        record = await FROZEN_PROMPT.get(self.store, session.id)
        if window is None and isinstance(record, Mapping):  # e.g. tools refused: same window
            before = Given.from_json(record.get("documents"))
            window = before.window if before is not None else None
        if (isinstance(record, Mapping) and record.get("fingerprint") == mark
                and not await self._way_changed(record, window, tools_on)):
            self._given[session.id] = Given.from_json(record.get("documents"))
            text = record.get("text")
            return text if isinstance(text, str) else None
        parent = getattr(session, "parent_session_id", None)
        inherited = None
        if record is None and parent:
            inherited = await self._inherit(parent, mark)
        if inherited is not None:
            text, given = inherited
        else:
            text, given = await self._render(session, tools_on=tools_on, window=window)
        # The images' bytes as they are now, whatever replaces them later.
        await space_images.keep(self.store, given.images if given else [])
        await FROZEN_PROMPT.set(
            self.store, {"text": text, "fingerprint": mark, "frozen_at": now_ms(),
                         "documents": given.to_json() if given else None}, session.id)
        self._given[session.id] = given
        return text

    async def _way_changed(self, record: Mapping[str, Any], window: int | None,
                           tools_on: bool) -> bool:
        """True when ``window`` changes which way the frozen documents would go."""
        given = Given.from_json(record.get("documents"))
        if window is None or given is None or given.way == "none":
            return False
        share = await space_documents.max_share(self.store)
        now = space_documents.way(given.tokens, len(given.names), window, share,
                                  tools_on=tools_on)
        return now != given.way

    async def given(self, session_id: str) -> Given | None:
        """What space documents a chat was given (``space_documents.given_to``): as
        :meth:`get` last read or saved it in this process, else read from the store."""
        if session_id in self._given:
            return self._given[session_id]
        return await space_documents.given_to(self.store, session_id)

    async def _inherit(self, parent_id: str,
                       mark: Mapping[str, Any]) -> tuple[str, Given | None] | None:
        """The parent's frozen prompt (and documents) when made from the same base prompt
        and tools flag."""
        record = await FROZEN_PROMPT.get(self.store, parent_id)
        if not isinstance(record, Mapping) or not isinstance(record.get("text"), str):
            return None
        theirs = record.get("fingerprint")
        if not isinstance(theirs, Mapping):
            return None
        same = all(theirs.get(k) == mark[k] for k in ("base", "tools"))
        return (str(record["text"]), Given.from_json(record.get("documents"))) if same else None

    async def refresh(self, session_id: str) -> None:
        """Forget a session's frozen prompt: its next request renders memory and skills anew."""
        self._given.pop(session_id, None)
        await FROZEN_PROMPT.set(self.store, None, session_id)

    async def frozen(self, session_id: str) -> str | None:
        """Return the frozen prompt of a session, or None when none is frozen (or it is empty)."""
        record = await FROZEN_PROMPT.get(self.store, session_id)
        text = record.get("text") if isinstance(record, Mapping) else None
        return text if isinstance(text, str) else None
