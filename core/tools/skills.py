"""Skills: reference documents the model loads into its context on demand.

A skill is a Markdown file. The user's own skills live in ``<data folder>/skills``
(``parley.core.paths.data_dir()``); a few are bundled in ``resources/skills``. A user
skill with the same key as a bundled one replaces it. The key is the file name
without ``.md``, lower-cased, other characters than ``a-z 0-9 _ -`` made ``-``.
An optional front matter gives the name and a one-line description::

    ---
    name: Markdown tables
    description: Lay out tables in Markdown that render everywhere.
    ---
    (the body: what the model reads when it loads the skill)

Without front matter the first ``# heading`` is the name and the first line of
prose the description (cut to :data:`DESCRIPTION_CHARS`).

The system prompt lists every skill by key and description
(``parley.core.tools.system_prompt``). ``load_context(key)`` returns the body as the
tool's result, so it sits in the history like any tool output;
``unload_context(key)`` marks it unloaded, and from then on
:func:`stub_unloaded` replaces that result with a short stub in what is sent
(never in what is stored), which frees the space in later requests.
Which skills are loaded is read from the session's turns themselves
(:func:`skill_states`), so forks, crashes and restarts need no extra state.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley import resources
from parley.core.content import Block, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.context.tokens import text_tokens
from parley.core.providers.base import ToolSpec
from parley.core.tools.registry import ToolContext, ToolError

log = logging.getLogger(__name__)

LOAD_TOOL = "load_context"
UNLOAD_TOOL = "unload_context"
#: The bundled skills shipped with Parley.
BUNDLED_DIR = resources.folder() / "skills"
#: A skill longer than this is refused at load time (tokens).
MAX_SKILL_TOKENS = 20_000
#: Skill files larger than this are skipped when listing (bytes).
MAX_SKILL_BYTES = 400_000
DESCRIPTION_CHARS = 160
UNLOADED_STUB = "[skill '{key}' was unloaded: its text (about {tokens:,} tokens) is no longer here]"
_KEY_CHARS = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill file.

    Attributes:
        key: what ``load_context`` takes (from the file name).
        name: a name for people.
        description: one line: when the skill helps.
        body: the text the model reads (front matter removed).
        path: the file.
        bundled: True for a skill shipped with Parley.
    """

    key: str
    name: str
    description: str
    body: str
    path: Path
    bundled: bool = False

    @property
    def tokens(self) -> int:
        """The body's size in tokens (estimate)."""
        return text_tokens(self.body)


def skill_key(stem: str) -> str:
    """Return the key of a skill file named ``<stem>.md`` ('' when nothing is left)."""
    return _KEY_CHARS.sub("-", stem.strip().lower()).strip("-")


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                key, sep, value = line.partition(":")
                if sep:
                    meta[key.strip().lower()] = value.strip().strip("\"'")
            return meta, "\n".join(lines[end + 1 :])
    return {}, text


def parse_skill(path: Path, text: str, *, bundled: bool = False) -> Skill | None:
    """Read a skill from its file's text.

    Args:
        path: the file (its name gives the key).
        text: its content.
        bundled: shipped with Parley.

    Returns:
        The skill, or None when the file name gives no key or the body is empty.
    """
    key = skill_key(path.stem)
    meta, body = _front_matter(text)
    body = body.strip()
    if not key or not body:
        return None
    name = meta.get("name", "")
    description = meta.get("description", "")
    for line in body.splitlines():
        line = line.strip()
        if not name and line.startswith("# "):
            name = line[2:].strip()
        elif not description and line and not line.startswith(("#", "---", "```")):
            description = line
        if name and description:
            break
    description = " ".join(description.split())
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return Skill(key, name or key, description, body, path, bundled)


def _read_folder(folder: Path, bundled: bool) -> Iterable[Skill]:
    try:
        paths = sorted(p for p in folder.glob("*.md") if p.is_file())
    except OSError:
        return
    for path in paths:
        try:
            if path.stat().st_size > MAX_SKILL_BYTES:
                log.warning("skill %s skipped: larger than %d bytes", path, MAX_SKILL_BYTES)
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("skill %s could not be read: %s", path, exc)
            continue
        skill = parse_skill(path, text, bundled=bundled)
        if skill is not None:
            yield skill


@dataclass
class SkillLibrary:
    """The skills on offer: bundled ones, then the user's (which win on a shared key).

    Args:
        user_dir: the user's skills folder (None: ``parley.core.paths.data_dir() / "skills"``
            at each listing, so ``PARLEY_HOME`` is honoured).
        bundled_dir: the bundled skills (None: none).

    The folders are read at each call (a handful of small files): a skill the
    user adds shows up in the next session without a restart.
    """

    user_dir: Path | None = None
    bundled_dir: Path | None = field(default=BUNDLED_DIR)

    def folder(self) -> Path:
        """Return the user's skills folder (it may not exist yet)."""
        if self.user_dir is not None:
            return self.user_dir
        from parley.core.paths import data_dir

        return data_dir() / "skills"

    def skills(self) -> list[Skill]:
        """Return every skill, sorted by key."""
        found: dict[str, Skill] = {}
        if self.bundled_dir is not None:
            found.update((s.key, s) for s in _read_folder(self.bundled_dir, True))
        found.update((s.key, s) for s in _read_folder(self.folder(), False))
        return [found[k] for k in sorted(found)]

    def get(self, key: str) -> Skill | None:
        """Return the skill with this key (case-insensitive), or None."""
        wanted = skill_key(key)
        return next((s for s in self.skills() if s.key == wanted), None)


# --- which skills are loaded: read from the turns ------------------------------


@dataclass(frozen=True)
class SkillStates:
    """What the turns say about skills.

    Attributes:
        loaded: key → ids of the load_context calls whose text is in the
            history and not unloaded since (in order).
        unloaded: ids of load_context calls that a later unload_context undid.
    """

    loaded: dict[str, list[str]]
    unloaded: frozenset[str]


def skill_states(turns: Sequence[Turn]) -> SkillStates:
    """Replay the load_context / unload_context calls of a session.

    A call counts once it has a tool_result without ``is_error``; aborted
    turns are skipped.

    Args:
        turns: the session's stored turns, oldest first.
    """
    calls: dict[str, tuple[str, str]] = {}
    loaded: dict[str, list[str]] = {}
    unloaded: set[str] = set()
    for turn in turns:
        if turn.aborted:
            continue
        for b in turn.blocks:
            if isinstance(b, ToolUseBlock) and b.name in (LOAD_TOOL, UNLOAD_TOOL):
                calls[b.id] = (b.name, skill_key(str(b.input.get("key", ""))))
            elif isinstance(b, ToolResultBlock) and b.tool_use_id in calls and not b.is_error:
                name, key = calls.pop(b.tool_use_id)
                if name == LOAD_TOOL:
                    loaded.setdefault(key, []).append(b.tool_use_id)
                else:
                    unloaded.update(loaded.pop(key, []))
    return SkillStates(loaded, frozenset(unloaded))


def _is_stub(block: ToolResultBlock) -> bool:
    texts = [p.text for p in block.content if isinstance(p, TextBlock)]
    return len(block.content) == 1 and len(texts) == 1 and texts[0].startswith("[skill '")


def _stub(block: ToolResultBlock, key: str) -> ToolResultBlock:
    if _is_stub(block):
        return block
    tokens = sum(text_tokens(p.text) for p in block.content if isinstance(p, TextBlock))
    stub = TextBlock(UNLOADED_STUB.format(key=key, tokens=tokens))
    return ToolResultBlock(block.tool_use_id, (stub,), block.is_error)


def stub_unloaded(turns: Sequence[Turn]) -> list[Turn] | None:
    """Return the turns to send, with the output of unloaded skills replaced by a stub.

    Args:
        turns: stored turns (as for ``ChatRequest.turns``). Not modified.

    Returns:
        None when no skill was unloaded (``turns`` go as they are: a request keeps
        its converted turns, ``ChatRequest.messages``); else a new list where a
        changed turn is a copy with the same id (so compaction ranges still apply)
        and the others are the same objects.
    """
    states = skill_states(turns)
    if not states.unloaded:
        return None
    keys = {
        b.id: skill_key(str(b.input.get("key", "")))
        for t in turns
        for b in t.blocks
        if isinstance(b, ToolUseBlock) and b.id in states.unloaded
    }
    out: list[Turn] = []
    for t in turns:
        if not any(
            isinstance(b, ToolResultBlock) and b.tool_use_id in keys for b in t.blocks
        ):
            out.append(t)
            continue
        blocks: list[Block] = [
            _stub(b, keys[b.tool_use_id])
            if isinstance(b, ToolResultBlock) and b.tool_use_id in keys
            else b
            for b in t.blocks
        ]
        out.append(t.with_blocks(blocks))
    return out


# --- the tools -------------------------------------------------------------------


class LoadContextTool:
    """``load_context(key)``: put a skill's text into the conversation."""

    def __init__(self, library: SkillLibrary) -> None:
        self.library = library
        self.spec = ToolSpec(
            LOAD_TOOL,
            "Load a skill (a reference document listed under Skills in the system prompt) "
            "into this conversation: its full text comes back as this tool's result. Load "
            "one when the task matches its description; unload it with unload_context "
            "when you no longer need it.",
            {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "The skill's key, as listed."}
                },
                "required": ["key"],
                "additionalProperties": False,
            },
        )

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Return the skill's text (or a note that it is loaded already).

        Raises:
            ToolError: no such skill, or it is longer than :data:`MAX_SKILL_TOKENS`.
        """
        key = str(input["key"])
        skill = self.library.get(key)
        if skill is None:
            known = ", ".join(s.key for s in self.library.skills()) or "none"
            raise ToolError(f"There is no skill '{key}'. Skills available: {known}.")
        if skill.key in skill_states(ctx.turns).loaded:
            return (
                f"The skill '{skill.key}' is already loaded: its text is earlier in this "
                "conversation."
            )
        if skill.tokens > MAX_SKILL_TOKENS:
            raise ToolError(
                f"The skill '{skill.key}' is about {skill.tokens:,} tokens long, over the "
                f"{MAX_SKILL_TOKENS:,}-token limit for one skill; it was not loaded."
            )
        return f"Skill '{skill.key}' ({skill.name}) loaded.\n\n{skill.body}"


class UnloadContextTool:
    """``unload_context(key)``: take a loaded skill's text out of later requests."""

    def __init__(self) -> None:
        self.spec = ToolSpec(
            UNLOAD_TOOL,
            "Unload a skill you loaded with load_context once you no longer need it: its "
            "text is removed from the conversation in later requests, freeing context space.",
            {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "The key of the loaded skill."}
                },
                "required": ["key"],
                "additionalProperties": False,
            },
        )

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Confirm the unload.

        Raises:
            ToolError: the skill is not loaded in this conversation.
        """
        key = skill_key(str(input["key"]))
        loaded = skill_states(ctx.turns).loaded
        if key not in loaded:
            names = ", ".join(sorted(loaded)) or "none"
            raise ToolError(f"The skill '{key}' is not loaded. Loaded skills: {names}.")
        return f"Unloaded the skill '{key}': its text is left out of the next requests."
