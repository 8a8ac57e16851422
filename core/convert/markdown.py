"""Parley's own Markdown export (``parley.core.export.to_markdown``) read back as a conversation.

What the export writes, and what is read back:

* ``# Title`` → the title ("Untitled chat" → none);
* the folded ``System prompt`` → the system prompt;
* each ``---`` / ``## User`` | ``## Assistant · model`` | ``## Tool result`` |
  ``## Summary`` section → one turn (``*(stopped before it finished)*``: aborted;
  ``*(cut off before it finished — connection lost)*``: aborted, and why, as
  ``Turn.stop_reason`` / ``cut_off``: ``parley.core.chat.unfinished``);
* ``**Tool call:** `name``` with its JSON → a tool call; ``**Tool result:**`` /
  ``**Tool error:**`` → its result, paired with the call by name;
* a folded ``Thinking`` → a thinking block (unsigned: never sent back to a model);
* ``*(signal from slack, sent by ana)*`` → the text's origin;
* anything else → text, as written (``[image: …]`` placeholders included:
  the export names files, it does not hold them; they are reported).

A compaction summary comes back as a user turn with its text (the export does
not say which turns it replaced). A file is recognised as such an export by its
``# `` title line and its ``- Exported from Parley on`` line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from parley.core.chat.unfinished import read_markdown_line
from parley.core.content import Block, TextBlock, TextOrigin, ThinkingBlock, ToolResultPart, Turn
from parley.core.convert.history import Notes, Piece, Result, assemble, tool_call

__all__ = ["MarkdownChat", "from_markdown", "looks_like_markdown"]

LOST_SUMMARY = ("{n} compaction summary(ies) came back as ordinary messages (the Markdown "
                "file does not say which messages they stood for).")
LOST_PLACEHOLDER = ("{n} image(s) or file(s) were only named in the Markdown file, not "
                    "included; their names were kept as text.")

_MARK = re.compile(r"^- Exported from Parley on ", re.MULTILINE)
_HEADER = re.compile(r"^## (User|Assistant(?: · (.*))?|Tool result|Summary)$")
_FENCE_LINE = re.compile(r"^(`{3,})")
_FENCE = re.compile(r"^(`{3,})([^\n`]*)\n(.*?)\n\1[ \t]*$", re.DOTALL | re.MULTILINE)
_CALL = re.compile(r"\*\*Tool call:\*\* `([^`\n]+)`\n\n")
_RESULT = re.compile(r"\*\*Tool (result|error):\*\* `([^`\n]+)`\n\n")
_THINKING = re.compile(r"<details>\n<summary>Thinking</summary>\n\n(.*?)\n\n</details>", re.DOTALL)
_MODELS = re.compile(r"^- Model: (.*)$", re.MULTILINE)
_SYSTEM = re.compile(r"<details>\n<summary>System prompt</summary>\n\n(.*?)\n\n</details>",
                     re.DOTALL)
_ORIGIN = re.compile(r"\*\((signal|event)(?: from ([^,\n]+))?(?:, sent by ([^\n]+))?\)\*\n\n")
_PLACEHOLDER = re.compile(r"^\[(image|document|audio|video): [^\]\n]+\]$", re.MULTILINE)


@dataclass(slots=True)
class MarkdownChat:
    """A conversation read from Parley's Markdown export.

    Attributes:
        title: the ``# `` title (None for "Untitled chat").
        system: the system prompt, if the file shows one.
        turns: the turns, oldest first.
        lost: one sentence per kind of thing that could not be read back.
    """

    title: str | None
    system: str | None
    turns: list[Turn]
    lost: list[str] = field(default_factory=list)


def looks_like_markdown(text: str) -> bool:
    """True when ``text`` starts with a ``# `` title and carries the export's mark."""
    head = text.lstrip("\ufeff \t\r\n")[:4096]
    return head.startswith("# ") and _MARK.search(head) is not None


def from_markdown(text: str) -> MarkdownChat:
    """Read a Markdown export back (see the module docstring for what maps to what).

    Args:
        text: the file's text (``\\r\\n`` line ends accepted).

    Returns:
        The title, system prompt, turns (possibly none) and what was lost.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    notes = Notes()
    head, sections = _sections(text.strip("\n"))
    title_line = head.strip("\n").split("\n", 1)[0][2:].strip()
    system = _SYSTEM.search(head)
    listed = _MODELS.search(head)
    refs = re.findall(r"`([^`]+)`", listed.group(1)) if listed else []
    full = {ref.partition(":")[2] or ref: ref for ref in refs}  # header name → provider:model
    pieces: list[Piece] = []
    for i, (kind, model, body) in enumerate(sections):
        pieces.append(_section(kind, full.get(model, model) if model else None, body, notes, i))
    return MarkdownChat(
        title=None if title_line in ("", "Untitled chat") else title_line,
        system=_unescape(system.group(1)) if system else None,
        turns=assemble(pieces),
        lost=notes.sentences(),
    )


def _sections(text: str) -> tuple[str, list[tuple[str, str | None, str]]]:
    """The head and (kind, model, body) of each ``---`` / ``## …`` section.

    A ``---`` line starts a section only between blank lines, before a header
    the export writes, and outside code fences (a message quoting an export
    stays one message).
    """
    lines = text.split("\n")
    starts: list[tuple[int, re.Match[str]]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        run = _FENCE_LINE.match(line)
        if run is not None:
            if fence is None:
                fence = run.group(1)
            elif line.strip() == run.group(1) and len(run.group(1)) >= len(fence):
                fence = None
            continue
        if fence is None and line == "---" and (i == 0 or lines[i - 1] == "") \
                and lines[i + 1:i + 2] == [""]:
            header = _HEADER.match(lines[i + 2]) if i + 2 < len(lines) else None
            if header is not None and lines[i + 3:i + 4] in ([""], []):
                starts.append((i, header))
    head_end = starts[0][0] if starts else len(lines)
    out: list[tuple[str, str | None, str]] = []
    for n, (i, header) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        body = "\n".join(lines[i + 4:end]).strip("\n")
        out.append((header.group(1), header.group(2), body))
    return "\n".join(lines[:head_end]), out


def _unescape(text: str) -> str:
    return text.replace("&lt;/details>", "</details>")


def _section(kind: str, model: str | None, body: str, notes: Notes, index: int) -> Piece:
    unfinished = read_markdown_line(body)
    cut_off, stop_reason = False, None
    if unfinished is not None:
        body, cut_off, stop_reason = unfinished
    if body == "*(empty)*":
        body = ""
    if kind == "Summary":
        notes.add(LOST_SUMMARY)
        return Piece("user", (TextBlock(body),) if body else ())
    role = "assistant" if kind.startswith("Assistant") else "user"
    blocks = _blocks(body, notes, index)
    return Piece(role, tuple(blocks), None, model, unfinished is not None,  # type: ignore[arg-type]
                 cut_off=cut_off, stop_reason=stop_reason)


def _blocks(body: str, notes: Notes, index: int) -> list[Block | Result]:
    """Split a section into blocks at the special paragraphs the export writes."""
    out: list[Block | Result] = []
    pos = 0
    text: list[str] = []
    while pos < len(body):
        found = _special(body, pos, notes, index, len(out))
        if found is None:
            nxt = body.find("\n\n", pos)
            end = len(body) if nxt < 0 else nxt + 2
            text.append(body[pos:end])
            pos = end
            continue
        block, end = found
        _flush(text, out, notes)
        text = []
        out.append(block)
        pos = end
        while body.startswith("\n", pos):
            pos += 1
    _flush(text, out, notes)
    return out


def _flush(text: list[str], out: list[Block | Result], notes: Notes) -> None:
    joined = "".join(text).strip("\n")
    if joined:
        notes.add(LOST_PLACEHOLDER, len(_PLACEHOLDER.findall(joined)))
        out.append(TextBlock(joined))


def _special(body: str, pos: int, notes: Notes, index: int,
             count: int) -> tuple[Block | Result, int] | None:
    if m := _CALL.match(body, pos):
        fence = _FENCE.match(body, m.end())
        if fence is None:
            return None
        try:
            arguments = json.loads(fence.group(3))
        except ValueError:
            arguments = {"input": fence.group(3)}
        if not isinstance(arguments, dict):
            arguments = {"input": arguments}
        return tool_call(f"md/{index}/{count}", m.group(1), arguments), fence.end()
    if m := _RESULT.match(body, pos):
        parts, end = _result_parts(body, m.end(), notes)
        return Result(m.group(2), parts, m.group(1) == "error"), end
    if m := _THINKING.match(body, pos):
        return ThinkingBlock(_unescape(m.group(1))), m.end()
    if m := _ORIGIN.match(body, pos):
        nxt = body.find("\n\n", m.end())
        end = len(body) if nxt < 0 else nxt
        origin = TextOrigin(m.group(1), m.group(2), m.group(3))  # type: ignore[arg-type]
        return TextBlock(body[m.end():end], origin=origin), end
    return None


def _result_parts(body: str, pos: int, notes: Notes) -> tuple[tuple[ToolResultPart, ...], int]:
    """A tool result's parts: fences (text) and placeholders, up to the next special paragraph."""
    parts: list[ToolResultPart] = []
    if body.startswith("*(no output)*", pos):
        return (), pos + len("*(no output)*")
    while pos < len(body):
        if fence := _FENCE.match(body, pos):
            parts.append(TextBlock(fence.group(3)))
            pos = fence.end()
        elif (line := _PLACEHOLDER.match(body, pos)) is not None:
            notes.add(LOST_PLACEHOLDER)
            parts.append(TextBlock(line.group(0)))
            pos = line.end()
        else:
            break
        while body.startswith("\n", pos):
            pos += 1
    return tuple(parts), pos
