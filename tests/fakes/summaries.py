"""The fake provider's answer to Parley's summary requests: the points a model would make.

A summary names what the user said and what they shared: each typed message (quoted,
:func:`summary_quote_chars` of it), each image ("an image (image/png)") and each
document (its name, and the start of its words when the request carries them as text).
Files are never quoted as their bytes: base64 and data URLs stay out of a summary.

Parley asks for a summary in three shapes (``parley.core.compaction.prompt``), all read
here:

* a separate request holding the transcript of the turns (``<transcript>``), where a
  file is a placeholder line (``[image: image/png]``, ``[document: spec.pdf]``,
  ``parley.core.compaction.prompt.render_turn``);
* the summaries of a long transcript's parts to combine (``<part_summaries>``);
* the chat itself resent with the summary instruction added as a note (the
  cache-friendly summary), where files are the providers' own blocks: Anthropic
  ``image`` / ``document`` (``title``, a ``text`` source's ``data``), OpenAI
  ``image_url`` / ``file`` (``filename``) or a text part ``[document: NAME]\\nTEXT``
  (``parley.core.convert.anthropic`` / ``.openai``).

An earlier summary's points (lines starting ``- The user``) are carried into the new one.
"""

from __future__ import annotations

import re
from typing import Any

#: A point of an unscripted summary quotes this share of a long message (1 / N of it)…
SUMMARY_QUOTE_DIVISOR = 10
#: …at most this many characters.
SUMMARY_QUOTE_MAX = 2_000
#: Characters quoted of a document's text.
DOCUMENT_QUOTE = 160

_TRANSCRIPT = re.compile(r"<transcript>\s*(.*?)\s*</transcript>", re.S)
_PART_SUMMARIES = re.compile(r"<part_summaries>\s*(.*?)\s*</part_summaries>", re.S)
#: An earlier summary's point, carried on whole.
_POINT = re.compile(r"^- (The user .+)$", re.M)
#: Where a turn starts in a transcript (``render_turn``: "User:" / "Assistant:" on its own line).
_TURN = re.compile(r"^(User|Assistant):[ \t]*$", re.M)
#: A file's placeholder line in a transcript, or the head of an OpenAI text document part.
_FILE_LINE = re.compile(r"^\[(image|document): ([^\]\n]+)\]$")
_NOTE_START = "[Context compaction"  # parley.core.compaction.prompt.note_text
SUMMARY_ASK = "between <summary> and </summary>"  # parley.core.compaction.prompt.ANSWER_FORMAT


def summary_quote_chars(length: int, point_chars: int = 120) -> int:
    """Characters a summary point quotes of a user message of ``length`` characters:
    ``point_chars``, or a tenth of a longer message (at most :data:`SUMMARY_QUOTE_MAX`),
    so a normal summary is long enough for what it replaces — Parley rejects a summary
    under 2 % of the replaced text, at most 500 tokens (``parley.core.compaction.check``)."""
    return max(point_chars, min(length // SUMMARY_QUOTE_DIVISOR, SUMMARY_QUOTE_MAX))


def summary_text(said: str, messages: Any, point_chars: int = 120) -> str:
    """The tagged summary answering a summary request whose last user text is ``said``
    (``messages``: the request's messages, read for the cache-friendly shape)."""
    combined = _PART_SUMMARIES.search(said)
    transcript = _TRANSCRIPT.search(said)
    if combined:  # the summaries of a long conversation's parts: their points, joined
        points = _POINT.findall(combined.group(1))
    elif transcript:
        points = _transcript_points(transcript.group(1), point_chars)
    else:  # the note follows the conversation: the user's messages before it
        points = _message_points(messages, point_chars)
    body = "\n".join(f"- {p}" for p in points) or "- (no user messages)"
    return f"<summary>\nWhat happened so far:\n{body}\n</summary>"


def _said(text: str, point_chars: int) -> str:
    text = " ".join(text.split())
    return f"The user said: {text[:summary_quote_chars(len(text), point_chars)]}"


def _file(kind: str, name: str, text: str = "") -> str:
    """How a point names one file: "an image (image/png)", "“spec.pdf”" (and the start
    of its words when known)."""
    if kind == "image":
        return f"an image ({name})"
    words = " ".join(text.split())
    return f"“{name}”, which begins: {words[:DOCUMENT_QUOTE]}" if words else f"“{name}”"


def _shared(files: list[str]) -> list[str]:
    """One point for the files of one message (none for none)."""
    if not files:
        return []
    listed = files[0] if len(files) == 1 else ", ".join(files[:-1]) + " and " + files[-1]
    return [f"The user shared {listed}"]


def _text_points(text: str, point_chars: int, part: bool = False) -> list[str]:
    """Points of one user text: earlier points carried on, file lines named, the rest
    quoted as what the user said. ``part``: the text is one part of a request, where a
    first line ``[document: NAME]`` heads the document's own words (OpenAI)."""
    carried = _POINT.findall(text)
    if carried:
        return carried
    points: list[str] = []
    typed: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _FILE_LINE.match(line.strip())
        if match is None:
            typed.append(line)
            continue
        kind, name = match.groups()
        rest = "\n".join(lines[i + 1:]) if part and kind == "document" and i == 0 else ""
        points.append(_file(kind, name, rest))
        if rest:  # an OpenAI text document: the part is the file and its words
            break
    said = "\n".join(typed)
    return ([_said(said, point_chars)] if said.strip() else []) + _shared(points)


def _transcript_points(transcript: str, point_chars: int) -> list[str]:
    """The user's points in a rendered transcript, in order."""
    pieces = _TURN.split(transcript)
    out = _POINT.findall(pieces[0])  # an earlier summary before the first turn
    for who, body in zip(pieces[1::2], pieces[2::2], strict=False):
        if who == "User":
            out += _text_points(body.strip(), point_chars)
    return out


def _block_point(block: dict[str, Any]) -> str | None:
    """A file block's point (Anthropic or OpenAI shape); None for anything else."""
    kind = block.get("type")
    if kind == "image":
        source = block.get("source") or {}
        return _file("image", str(source.get("media_type") or "image"))
    if kind == "image_url":
        url = str((block.get("image_url") or {}).get("url", ""))
        media = url[5:].split(";")[0] if url.startswith("data:") else "a link"
        return _file("image", media or "image")
    if kind == "document":
        source = block.get("source") or {}
        text = source.get("data", "") if source.get("type") == "text" else ""
        return _file("document", str(block.get("title") or source.get("media_type")), text)
    if kind == "file":
        return _file("document", str((block.get("file") or {}).get("filename", "document")))
    return None


def _message_points(messages: Any, point_chars: int) -> list[str]:
    """The user's points in a request's messages, the summary note and request left out."""
    out: list[str] = []
    for msg in messages if isinstance(messages, list) else []:
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        files: list[str] = []
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") != "text":
                point = _block_point(block)
                files += [point] if point else []
                continue
            text = str(block.get("text", "")).split(_NOTE_START)[0]
            if text.strip() and SUMMARY_ASK not in text:
                for point in _text_points(text, point_chars, part=True):
                    if point.startswith("The user shared "):  # an OpenAI text document
                        files.append(point.removeprefix("The user shared "))
                    else:
                        out.append(point)
        out += _shared(files)
    return out
