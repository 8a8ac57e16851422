"""Export a session: Markdown to read, Parley JSON to keep, Anthropic / OpenAI messages to reuse.

Formats (``fmt`` of :func:`export_session`):

A chat is a tree (edits and regenerations are branches: ``parley.core.store.tree``);
every format but ``parley`` holds the path the chat shows.

* ``markdown``: for people. Title, date and model(s) on top (and a line saying the
  chat has other branches, when it has), the system prompt folded, then every turn
  of the path shown under a role header (a reply that did not finish marked as
  stopped, or as cut off and why: ``parley.core.chat.unfinished``; compaction
  summaries shown where they were written, the turns they replaced kept); tool
  calls and tool results as fenced blocks (JSON for a call's input); thinking
  folded in ``<details>``; images, documents, audio and video as
  ``[image: …]``-style placeholders. Nothing is reported lost: media are
  placeholders by design.
* ``parley``: lossless (``parley.core.convert.export_parley``): the whole tree, every
  stored turn with its ids, times, flags, model and usage (with branches: each turn's
  parent, and the path shown), and the session's title, system prompt and model.
  Re-imported by ``parley.core.importing.conversation``.
* ``anthropic``: ``{"system"?: str, "messages": [...]}``, a valid Messages
  API request body minus ``model`` / ``max_tokens``: the turns as the model
  sees them (``parley.core.wire.to_messages``: aborted replies and compacted turns
  left out, tool pairing repaired), converted with ``to_anthropic``.
* ``openai``: ``{"messages": [...]}``, a valid Chat Completions ``messages``
  list (system prompt first), through ``to_messages`` and ``to_openai``. A
  conversation ending with the assistant gets the wire rules' short user
  continuation, as the API requires.

``lost`` lists one sentence per kind of thing the chosen format could not hold.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from parley.core.chat.unfinished import markdown_line
from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultPart,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    apply_compactions,
    now_ms,
)
from parley.core.convert import export_parley, to_anthropic, to_openai
from parley.core.providers.capabilities import ANTHROPIC, OPENAI, ProviderCaps
from parley.core.store.models import Session, TreeTurn
from parley.core.wire import to_messages

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

ExportFormat: TypeAlias = Literal["markdown", "parley", "anthropic", "openai"]

#: Each format's file-name ending and a label for a Save dialog's filter.
FORMATS: dict[str, tuple[str, str]] = {
    "markdown": (".md", "Markdown (*.md)"),
    "parley": (".parley.json", "Parley conversation (*.parley.json)"),
    "anthropic": (".anthropic.json", "Anthropic messages (*.json)"),
    "openai": (".openai.json", "OpenAI chat messages (*.json)"),
}

#: The Markdown's line for a chat with other branches than the one exported.
OTHER_BRANCHES = ("The chat has other branches (edits or regenerations); this is the one "
                  "shown. The Parley JSON export keeps them all.")

LOST_ABORTED = "{n} reply(ies) stopped or cut off before they finished were left out."
LOST_COMPACTED = (
    "{n} turn(s) replaced by a compaction summary were left out; the summary stands for them."
)
LOST_THINKING = "{n} thinking block(s) were left out (the format cannot carry them)."
LOST_UNKNOWN = "{n} block(s) of a kind the format does not know were left out."


@dataclass(frozen=True, slots=True)
class ExportResult:
    """An exported session.

    Attributes:
        text: the file's content (UTF-8 when written).
        suggested_filename: the session's title made safe for a file name, with
            the format's ending (``My trip.md``, ``My trip.parley.json``).
        lost: one sentence per kind of thing the format could not hold (empty
            for ``markdown`` and ``parley``; the other branches of a chat are not
            counted as lost: only ``parley`` is meant to hold them).
    """

    text: str
    suggested_filename: str
    lost: list[str] = field(default_factory=list)


async def export_session(store: AsyncStore, session_id: str, fmt: ExportFormat) -> ExportResult:
    """Export one session.

    Args:
        store: an ``AsyncStore``.
        session_id: the session.
        fmt: ``markdown`` | ``parley`` | ``anthropic`` | ``openai`` (see module docstring).

    Returns:
        The text, a suggested file name and what was lost.

    Raises:
        SessionNotFound: no such session.
        ValueError: ``fmt`` is not one of the formats (a bug in the caller).

    The JSON formats carry attached files inline (base64, read back from the
    store's attachments table); Markdown names them only.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; one of {sorted(FORMATS)}")
    session = await store.get_session(session_id)
    name = suggested_filename(session.title, fmt)
    # The stored turns are read on the store's thread; the text is made on another
    # thread too: for a 100,000-turn chat it takes seconds, and on the event loop (the
    # GUI thread) the window froze for as long.
    if fmt == "parley":  # the attached files' bytes (kept apart in the store) inline
        tree = await store.get_tree(session_id, hydrate=True)
        text = await asyncio.to_thread(_parley_text, session, tree)
        return ExportResult(text, name, [])
    turns = await store.get_turns(session_id, hydrate=fmt != "markdown")  # the path shown
    if fmt == "markdown":
        branched = bool((await store.branches(session_id)).points)
        note = OTHER_BRANCHES if branched else None
        return ExportResult(await asyncio.to_thread(to_markdown, session, turns, note=note),
                            name, [])
    text, lost = await asyncio.to_thread(_wire_text, session, turns, fmt)
    return ExportResult(text, name, lost)


def _parley_text(session: Session, tree: Sequence[TreeTurn]) -> str:
    """The Parley JSON of a session's whole tree (every branch, the path shown named)."""
    doc = export_parley([t.turn for t in tree], session=_session_meta(session),
                        parents={t.turn.id: t.parent_id for t in tree},
                        path=[t.turn.id for t in tree if t.on_path])
    return _dump(doc)


def _wire_text(session: Session, turns: Sequence[Turn], fmt: ExportFormat
               ) -> tuple[str, list[str]]:
    """The ``anthropic`` or ``openai`` request body of the path shown, and what it lost."""
    lost: list[str] = []
    caps = ANTHROPIC if fmt == "anthropic" else OPENAI
    wire = _wire_turns(turns, caps, lost)
    system = session.system_prompt or None
    if fmt == "anthropic":
        body: dict[str, Any] = {"system": system} if system else {}
        body["messages"] = to_anthropic(wire, lost=lost)
    else:
        body = {"messages": to_openai(wire, system=system, lost=lost)}
    return _dump(body), lost


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _session_meta(session: Session) -> dict[str, Any]:
    return {
        "title": session.title,
        "system": session.system_prompt,
        "model": session.model,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "exported_at": now_ms(),
    }


# --- provider formats: what the model sees -----------------------------------


def _count(turns: Iterable[Turn], kind: type) -> int:
    return sum(1 for t in turns for b in t.blocks if isinstance(b, kind))


def _wire_turns(turns: Sequence[Turn], caps: ProviderCaps, lost: list[str]) -> list[Turn]:
    """``to_messages`` of the turns, with a sentence in ``lost`` for what it left out."""
    aborted = sum(1 for t in turns if t.aborted)
    live = [t for t in turns if not t.aborted]
    seen = apply_compactions(live)
    kept_ids = {t.id for t in seen}
    compacted = sum(
        1
        for t in live
        if t.id not in kept_ids and not any(isinstance(b, CompactSummaryBlock) for b in t.blocks)
    )
    wire = to_messages(turns, caps)
    thinking = _count(seen, ThinkingBlock) - _count(wire, ThinkingBlock)
    unknown = _count(seen, UnknownBlock) - _count(wire, UnknownBlock)
    for template, n in (
        (LOST_ABORTED, aborted),
        (LOST_COMPACTED, compacted),
        (LOST_THINKING, thinking),
        (LOST_UNKNOWN, unknown),
    ):
        if n > 0:
            lost.append(template.format(n=n))
    return wire


# --- file names ----------------------------------------------------------------

_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]+')
_RESERVED = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d)$", re.IGNORECASE)
MAX_NAME_CHARS = 80


def suggested_filename(title: str | None, fmt: ExportFormat) -> str:
    """A file name for an export: the title without characters file systems refuse.

    Args:
        title: the session's title (None: "Parley chat").
        fmt: the format (gives the ending, see :data:`FORMATS`).

    Returns:
        E.g. ``"Trip to Lisbon.md"``; at most :data:`MAX_NAME_CHARS` characters
        before the ending; never empty, never a reserved Windows device name.
    """
    name = " ".join(_UNSAFE.sub(" ", title or "").split()).strip(" .")
    if len(name) > MAX_NAME_CHARS:
        name = name[:MAX_NAME_CHARS].rstrip(" .")
    if not name or _RESERVED.match(name):
        name = f"Parley chat {name}".strip()
    return name + FORMATS[fmt][0]


# --- Markdown --------------------------------------------------------------------


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).astimezone().strftime("%Y-%m-%d %H:%M")


def fence(text: str, lang: str = "") -> str:
    """Wrap ``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _placeholder(part: ImageBlock | DocumentBlock | MediaPart) -> str:
    if isinstance(part, ImageBlock):
        name = part.url if part.url and not part.url.startswith("data:") else part.media_type
        return f"[image: {name}]"
    if isinstance(part, DocumentBlock):
        return f"[document: {part.name or part.media_type}]"
    return f"[{part.kind}: {part.media_type}]"


def _origin_line(block: TextBlock) -> str | None:
    o = block.origin
    if o is None or o.kind == "user":
        return None
    where = f" from {o.source}" if o.source else ""
    who = f", sent by {o.sender}" if o.sender else ""
    return f"*({o.kind}{where}{who})*"


def _result_parts(parts: Sequence[ToolResultPart]) -> str:
    out: list[str] = []
    texts: list[str] = []
    for p in parts:
        if isinstance(p, TextBlock):
            texts.append(p.text)
            continue
        if texts:
            out.append(fence("\n".join(texts)))
            texts = []
        out.append(_placeholder(p))
    if texts:
        out.append(fence("\n".join(texts)))
    return "\n\n".join(out) if out else "*(no output)*"


def _block_md(block: Block, tool_names: dict[str, str]) -> str:
    if isinstance(block, TextBlock):
        origin = _origin_line(block)
        return f"{origin}\n\n{block.text}" if origin else block.text
    if isinstance(block, ImageBlock | DocumentBlock):
        return _placeholder(block)
    if isinstance(block, ToolUseBlock):
        tool_names[block.id] = block.name
        body = json.dumps(dict(block.input), ensure_ascii=False, indent=2)
        return f"**Tool call:** `{block.name}`\n\n{fence(body, 'json')}"
    if isinstance(block, ToolResultBlock):
        name = tool_names.get(block.tool_use_id, block.tool_use_id)
        head = "Tool error" if block.is_error else "Tool result"
        return f"**{head}:** `{name}`\n\n{_result_parts(block.content)}"
    if isinstance(block, ThinkingBlock):
        text = block.thinking.strip().replace("</details>", "&lt;/details>")
        return f"<details>\n<summary>Thinking</summary>\n\n{text}\n\n</details>"
    if isinstance(block, CompactSummaryBlock):
        count = block.replaced_count  # messages, as the window's card and toast say
        n = f" of {count:,} earlier message{'s' if count != 1 else ''}" if count else ""
        return f"**Summary{n}** (compaction)\n\n{block.summary.strip()}"
    return f"[{block.type} block]"


def _header(turn: Turn) -> str:
    if any(isinstance(b, CompactSummaryBlock) for b in turn.blocks):
        return "## Summary"
    if turn.role == "assistant":
        model = f" · {turn.model.partition(':')[2] or turn.model}" if turn.model else ""
        return f"## Assistant{model}"
    if turn.blocks and all(isinstance(b, ToolResultBlock) for b in turn.blocks):
        return "## Tool result"
    return "## User"


def _models(session: Session, turns: Sequence[Turn]) -> list[str]:
    found = list(dict.fromkeys(t.model for t in turns if t.role == "assistant" and t.model))
    return found or ([session.model] if session.model else [])


def to_markdown(session: Session, turns: Sequence[Turn], *, note: str | None = None) -> str:
    """Render a session as Markdown (see the module docstring for what is shown how).

    Args:
        session: the session (title, date, model, system prompt).
        turns: the path it shows, in order (``Store.get_turns``: raw, everything kept).
        note: a line under the heading (that the chat has other branches), if any.

    Returns:
        Markdown text ending with a newline. Dates are local time.
    """
    lines = [f"# {session.title or 'Untitled chat'}", "", f"- Date: {_when(session.created_at)}"]
    if note:
        lines.append(f"- {note}")
    models = _models(session, turns)
    if models:
        lines.append("- Model: " + ", ".join(f"`{m}`" for m in models))
    lines.append(f"- Exported from Parley on {_when(now_ms())}")
    if session.system_prompt:
        prompt = session.system_prompt.strip().replace("</details>", "&lt;/details>")
        lines += ["", "<details>", "<summary>System prompt</summary>", "", prompt, "", "</details>"]
    tool_names: dict[str, str] = {}
    for turn in turns:
        lines += ["", "---", "", _header(turn), ""]
        unfinished = markdown_line(turn)
        if unfinished is not None:
            lines += [unfinished, ""]
        parts = [_block_md(b, tool_names) for b in turn.blocks]
        lines.append("\n\n".join(p for p in parts if p.strip()) or "*(empty)*")
    return "\n".join(lines).rstrip() + "\n"
