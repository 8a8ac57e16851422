"""What the summarizing model is asked, and how its answer is read.

Two requests write a summary (the order is ``parley.core.compaction.summary``'s):

* the *cache-friendly* one resends the last request with :func:`note_text`
  added after its last message, so the conversation is read from the prompt
  cache;
* the *separate* one sends :func:`transcript_prompt`: the summarized turns as
  a plain transcript in one user message, with :data:`SUMMARIZER_SYSTEM`.

Both ask for the same fixed structure (:data:`STRUCTURE`) inside
``<summary>`` tags, and a re-compaction asks to update the previous summary
rather than start over (:data:`UPDATE_PREVIOUS`). :func:`extract_summary`
reads the answer: an answer without the tags is no summary.

A conversation too long for the summary model is summarized in parts
(:func:`part_prompt`, each part a transcript that fits), then the parts'
summaries are combined (:func:`merge_prompt`).

The transcript is shortened in levels when it does not fit the summary
model: level 0 caps each tool input / output at :data:`TOOL_CHARS`\\[0] characters,
level 1 caps tool output harder (head and tail kept). What the user and the
assistant wrote is never clipped: a transcript that still does not fit is
summarized in parts (no turn, and no word of one, is left out).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    tool_result_to_text,
)

SUMMARIZER_SYSTEM = (
    "You write working summaries of conversations between a user and an AI assistant. "
    "The assistant will continue the conversation from your summary alone, without the "
    "original messages, so the summary must keep everything it needs: facts, decisions, "
    "exact names and numbers, and what is still to be done."
)

STRUCTURE = """\
Use exactly these sections:
## Topic
What the conversation is about and what the user wants, in one or two sentences.
## Key points
Facts established, decisions made and why, what was tried and what came of it \
(errors and their fixes included), and the user's stated preferences.
## Current state
Where the work stands at the end of the summarized part.
## Open items
Questions not yet answered, tasks not yet done, and what the user asked for next.
## Exact details
Verbatim: names, file paths, URLs, identifiers, commands, code symbols, numbers, \
versions, dates and quoted requirements that later messages may depend on. Copy \
them exactly; never round or paraphrase them."""

UPDATE_PREVIOUS = (
    "The summarized part begins with a summary of an even earlier part. Update that "
    "summary instead of replacing it: keep every fact from it that may still matter "
    "(its exact details included), fold in what happened since, and drop only what is "
    "clearly obsolete."
)

ANSWER_FORMAT = (
    "Write the summary in the language of the conversation. Reply with the summary "
    "only, between <summary> and </summary>."
)

#: Added to a summary request asked once more after an answer that was not a summary.
PLAIN_FORMAT = (
    "Important: your answer must be the summary itself and nothing else. Start it with "
    "<summary> on a line of its own and end it with </summary>. Do not reply to the "
    "conversation, do not ask questions, and do not repeat these instructions."
)

#: Text of Parley's summary requests that a summary never holds: an answer holding one
#: of them echoes the request (``parley.core.compaction.check``).
ECHO_MARKERS = (
    "Reply with the summary only",
    "<transcript>",
    "Use exactly these sections",
    "[Context compaction",
    "Start it with <summary>",
    "<part_summaries>",
)

SUMMARY_LABEL = "Summary of the earlier conversation:"

#: Characters kept of each tool input / tool output, per level (text is never clipped).
TOOL_CHARS = (8_000, 1_000)
LEVELS = len(TOOL_CHARS)


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[… {cut:,} characters left out …]\n{text[-tail:]}"


def _snippet(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def describe_turn(turn: Turn) -> str:
    """A short way to point at a turn in an instruction (``the user's message beginning «…»``)."""
    text = turn.text().strip()
    who = "the user's message" if turn.role == "user" else "the assistant's reply"
    if text:
        return f"{who} beginning «{_snippet(text)}»"
    uses = [b.name for b in turn.blocks if isinstance(b, ToolUseBlock)]
    if uses:
        return f"the assistant's call to the tool `{uses[0]}`"
    return f"{who} with attachments"


def note_text(kept_visible: Sequence[Turn], has_previous: bool) -> str:
    """The instruction added after the last message of the resent request.

    Args:
        kept_visible: the kept turns the resent request shows (they stay
            verbatim, so the summary need not cover them); empty when the
            whole conversation shown is summarized.
        has_previous: the conversation shown begins with an earlier summary.
    """
    if kept_visible:
        scope = (
            f" up to (not including) {describe_turn(kept_visible[0])}; that message and "
            "everything after it stay in your context verbatim, so mention them only "
            "where the earlier part needs them"
        )
    else:
        scope = ""
    parts = [
        "[Context compaction — a request from the Parley app, not from the user] Do not "
        "answer or continue the conversation and do not call any tools. Instead, write a "
        f"summary of the conversation above{scope}. It will replace those messages in "
        "your context, so it must let you continue the work without them.",
        STRUCTURE,
    ]
    if has_previous:
        parts.append(UPDATE_PREVIOUS)
    parts.append(ANSWER_FORMAT)
    return "\n\n".join(parts)


def _tool_use(block: ToolUseBlock, level: int) -> str:
    args = json.dumps(dict(block.input), ensure_ascii=False, default=str)
    return f"[called tool `{block.name}` with {_clip(args, TOOL_CHARS[level])}]"


def _tool_result(block: ToolResultBlock, level: int) -> str:
    kind = "tool error" if block.is_error else "tool result"
    return f"[{kind}]\n{_clip(tool_result_to_text(block), TOOL_CHARS[level])}\n[end of {kind}]"


def render_turn(turn: Turn, level: int = 0) -> str:
    """One turn as transcript text (``User:`` / ``Assistant:`` followed by its blocks).

    Thinking is left out (the model's private reasoning); images and documents
    become placeholders; a summary becomes a marked section.
    """
    pieces: list[str] = []
    for b in turn.blocks:
        if isinstance(b, TextBlock):
            pieces.append(b.text)
        elif isinstance(b, ToolUseBlock):
            pieces.append(_tool_use(b, level))
        elif isinstance(b, ToolResultBlock):
            pieces.append(_tool_result(b, level))
        elif isinstance(b, ImageBlock):
            pieces.append(f"[image: {b.media_type}]")
        elif isinstance(b, DocumentBlock):
            pieces.append(f"[document: {b.name or b.media_type}]")
        elif isinstance(b, CompactSummaryBlock):
            pieces.append(f"{SUMMARY_LABEL}\n{b.summary.strip()}")
        elif isinstance(b, ThinkingBlock | UnknownBlock):
            continue
    body = "\n".join(p for p in pieces if p.strip())
    if any(isinstance(b, CompactSummaryBlock) for b in turn.blocks):
        return body  # a summary speaks for itself (restored files follow it)
    who = "User" if turn.role == "user" else "Assistant"
    return f"{who}:\n{body}"


def _body(turn: Turn) -> str:
    text = render_turn(turn)
    return text if text.startswith(SUMMARY_LABEL) else text.partition("\n")[2].strip()


def has_content(turns: Sequence[Turn]) -> bool:
    """True when any of ``turns`` holds something a summary can speak of.

    Text, tool calls and results, files and earlier summaries count; thinking,
    unknown blocks and whitespace-only text do not.
    """
    return any(_body(t) for t in turns)


def transcript_prompt(
    turns: Sequence[Turn], *, level: int, previous: bool = False
) -> str:
    """The one user message of the separate summary request.

    Args:
        turns: the turns to summarize, in order (a previous summary first).
        level: shortening level, 0 … ``LEVELS - 1``.
        previous: the turns begin with a previous summary.
    """
    lead = "Below is the transcript of the earlier part of a conversation between a user "
    lead += "and an AI assistant."
    return _ask(lead, "\n\n".join(render_turn(t, level) for t in turns), previous)


def part_prompt(body: str, *, part: int, parts: int, previous: bool = False) -> str:
    """The one user message asking for a summary of one part of a long transcript.

    Args:
        body: the part's transcript text (rendered turns, oldest first).
        part: 1-based number of the part.
        parts: how many parts there are.
        previous: the part begins with a previous summary (the first part only).
    """
    lead = (
        f"Below is part {part} of {parts} of the transcript of the earlier part of a "
        "conversation between a user and an AI assistant. It is too long to summarize "
        "at once, so each part is summarized on its own and the summaries are then "
        "combined: summarize this part only, keeping everything later parts may "
        "depend on."
    )
    return _ask(lead, body, previous)


def _ask(lead: str, body: str, previous: bool) -> str:
    parts = [
        lead,
        f"<transcript>\n{body}\n</transcript>",
        "Write a summary of this transcript. It will replace these messages in the "
        "assistant's context, so it must let the assistant continue the work without them.",
        STRUCTURE,
    ]
    if previous:
        parts.append(UPDATE_PREVIOUS)
    parts.append(ANSWER_FORMAT)
    return "\n\n".join(parts)


def plainly(prompt: str) -> str:
    """``prompt`` asked once more, the answer's format stated plainly (:data:`PLAIN_FORMAT`)."""
    return f"{prompt}\n\n{PLAIN_FORMAT}"


def merge_prompt(
    summaries: Sequence[str],
    spans: Sequence[tuple[int, int]] | None = None,
    total: int | None = None,
) -> str:
    """The one user message asking to combine the summaries of consecutive parts.

    Args:
        summaries: the summaries, oldest first.
        spans: the (first, last) 1-based part numbers each summary covers
            (default: one part each, numbered from 1).
        total: how many parts the whole transcript has (default ``len(summaries)``).
    """
    spans = spans or [(i, i) for i in range(1, len(summaries) + 1)]
    total = total or len(summaries)

    def label(first: int, last: int) -> str:
        return f"Part {first}" if first == last else f"Parts {first}–{last}"

    body = "\n\n".join(
        f"## {label(*span)} of {total}\n{s.strip()}"
        for span, s in zip(spans, summaries, strict=True)
    )
    return "\n\n".join([
        "Below are summaries of consecutive parts of the earlier part of a conversation "
        "between a user and an AI assistant, oldest first. Combine them into one summary "
        "of all of it. It will replace those messages in the assistant's context, so it "
        "must let the assistant continue the work without them. Keep every fact and "
        "exact detail that may still matter; where a later part changes an earlier one, "
        "the later part wins.",
        f"<part_summaries>\n{body}\n</part_summaries>",
        STRUCTURE,
        ANSWER_FORMAT,
    ])


_SUMMARY = re.compile(r"<summary>\s*(.*?)\s*(?:</summary>|$)", re.S | re.I)
#: Fenced code blocks (an unclosed fence runs to the end) and inline code spans.
_CODE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1|\Z)|`[^`\n]+`", re.S | re.M)
#: An HTML/XML start or end tag (``<details>``, ``</div>``, ``<br/>``).
_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)\b[^<>]*?(/?)>")
#: Elements that never hold anything (no end tag).
_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
    "source", "track", "wbr",
})


def _open_elements(text: str) -> int:
    """How many elements are open at the end of ``text`` (void and self-closed ones aside)."""
    stack: list[str] = []
    for tag in _TAG.finditer(text):
        closing, name, self_closed = tag.group(1), tag.group(2).lower(), tag.group(3)
        if name in _VOID or self_closed:
            continue
        if not closing:
            stack.append(name)
        elif name in stack:
            del stack[len(stack) - 1 - stack[::-1].index(name):]
    return len(stack)


def _own_summary(text: str) -> re.Match[str] | None:
    """The first ``<summary>`` section that is Parley's: at the top level of the answer.

    A ``<summary>`` inside a code block or inline code, or inside another
    element (HTML's ``<details><summary>Click to expand</summary>``), is part
    of the answer's content, not the section Parley asked for.
    """
    code = [m.span() for m in _CODE.finditer(text)]
    for match in _SUMMARY.finditer(text):
        start = match.start()
        if any(a <= start < b for a, b in code):
            continue
        before = _CODE.sub("", text[:start])
        if _open_elements(before):
            continue
        return match
    return None


def extract_summary(text: str) -> str | None:
    """Return the summary in a model's answer, or None when there is none.

    The text between ``<summary>`` tags (an unclosed tag: to the end; whether
    it was cut off is the caller's question). None when the answer has no
    ``<summary>`` tag (an answer that is not a summary — a reply to the
    conversation, an error page — must not replace anything), when what the
    tags hold is empty, when its only ``<summary>`` tags are nested in other
    markup or code (an HTML ``<details><summary>…</summary>`` block, a code
    fence; see :func:`_own_summary`), or when the answer repeats Parley's own instruction
    (:data:`ANSWER_FORMAT`): a server that echoes the request (a test double,
    a misconfigured local model) would otherwise have the word between the
    instruction's tags ("and") taken for the summary.
    """
    if ANSWER_FORMAT in text:
        return None
    match = _own_summary(text)
    summary = match.group(1).strip() if match else ""
    return summary or None
