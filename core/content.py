"""The provider-neutral message model: turns and content blocks.

A conversation is a list of :class:`Turn`. Each turn has a role (``user`` or
``assistant``) and a list of content blocks. Blocks are small frozen
dataclasses; every one round-trips losslessly through JSON with
:func:`block_to_json` / :func:`block_from_json` (``Turn.to_json`` /
``Turn.from_json`` for whole turns). A block type this version does not know
is kept as :class:`UnknownBlock` holding its raw JSON, so nothing a newer
version or a provider wrote is ever dropped.

Timestamps are Unix epoch milliseconds, UTC.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["user", "assistant"]
OriginKind: TypeAlias = Literal["user", "signal", "event"]
JSON: TypeAlias = dict[str, Any]


def new_id() -> str:
    """Return a new opaque unique id (32 lowercase hex characters)."""
    return uuid.uuid4().hex


def now_ms() -> int:
    """Return the current time as Unix epoch milliseconds (UTC)."""
    return time.time_ns() // 1_000_000


class ContentError(ValueError):
    """A JSON value is not a valid Parley turn or block (the message says which field)."""


@dataclass(frozen=True, slots=True)
class TextOrigin:
    """Where a text block came from when it was not typed into the composer.

    Attributes:
        kind: ``user`` (typed), ``signal`` (a message relayed from elsewhere,
            e.g. Slack) or ``event`` (something that happened, e.g. a timer).
        source: the system it came from, such as ``"slack"``.
        sender: who sent it in that system.
        message_id: its id in that system.
    """

    kind: OriginKind = "user"
    source: str | None = None
    sender: str | None = None
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text (markdown for display).

    Attributes:
        text: the text.
        origin: where it came from, when not typed by the user.
        recovered: True for legacy content that could not be parsed and was
            kept verbatim (``parley.core.store.upgrade.convert``).
    """

    text: str
    origin: TextOrigin | None = None
    recovered: bool = False
    type: Literal["text"] = field(default="text", init=False)


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image: inline (base64 ``data``), by ``url``, or stored in sessions.db.

    Attributes:
        media_type: e.g. ``image/png``.
        data: the bytes, base64; None for a ``url`` image and for a stored
            attachment read back from the store (until ``Store.hydrate``).
        url: a link to the image (then ``data`` is None).
        attachment_id: the sha256 (64 hex chars) of the bytes in the store's
            ``attachments`` table. The store sets it when it saves the turn
            and keeps ``data`` out of the turn's JSON; ``Store.hydrate`` puts
            ``data`` back before a request. Serialized as ``"attachment"``.
        name: the file name it was attached as, when known (kept for the
            person: the viewer's Save As, editing; never sent to a provider).
    """

    media_type: str
    data: str | None = None
    url: str | None = None
    attachment_id: str | None = None
    name: str | None = None
    type: Literal["image"] = field(default="image", init=False)


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A document such as a PDF: base64 ``data`` with its media type and file name.

    Attributes:
        media_type: e.g. ``application/pdf``.
        data: the bytes, base64; ``""`` for a stored attachment read back
            from the store (until ``Store.hydrate``).
        name: the file name, when known.
        attachment_id: as for :class:`ImageBlock`.
    """

    media_type: str
    data: str
    name: str | None = None
    attachment_id: str | None = None
    type: Literal["document"] = field(default="document", init=False)


@dataclass(frozen=True, slots=True)
class MediaPart:
    """Audio or video inside a tool result: base64 ``data`` with its media type."""

    kind: Literal["audio", "video"]
    media_type: str
    data: str

    @property
    def type(self) -> str:
        return self.kind


ToolResultPart: TypeAlias = TextBlock | ImageBlock | DocumentBlock | MediaPart


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """The model asks to call a tool.

    Attributes:
        id: the call id; the matching tool_result names it in ``tool_use_id``.
        name: the tool's name.
        input: the arguments, a JSON object.
    """

    id: str
    name: str
    input: Mapping[str, Any]
    type: Literal["tool_use"] = field(default="tool_use", init=False)


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The output of a tool call, sent back in the next user turn.

    Attributes:
        tool_use_id: the ``id`` of the tool_use it answers.
        content: the output as parts (text, image, audio, video, document).
        is_error: True when the tool failed; the model reads the parts as the error.
    """

    tool_use_id: str
    content: tuple[ToolResultPart, ...] = ()
    is_error: bool = False
    type: Literal["tool_result"] = field(default="tool_result", init=False)


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Extended thinking; ``signature`` must be sent back unchanged (Anthropic)."""

    thinking: str
    signature: str | None = None
    type: Literal["thinking"] = field(default="thinking", init=False)


@dataclass(frozen=True, slots=True)
class CompactSummaryBlock:
    """A compaction summary standing in for older turns in the model context.

    Storage is non-destructive: the replaced turns stay in the session. The
    range is given by the ids of its first and last replaced turn (inclusive,
    in session order); :func:`apply_compactions` uses it.

    Attributes:
        summary: the summary text.
        replaced_count: how many turns it stands for.
        first_turn_id: id of the first replaced turn (None for v3 summaries,
            whose turns were deleted by the v3 app).
        last_turn_id: id of the last replaced turn (None for v3 summaries).
        compaction_id: the row in the ``compactions`` table, when there is one.
        legacy: True for a summary migrated from a v3 file.
    """

    summary: str
    replaced_count: int = 0
    first_turn_id: str | None = None
    last_turn_id: str | None = None
    compaction_id: str | None = None
    legacy: bool = False
    type: Literal["compact_summary"] = field(default="compact_summary", init=False)


@dataclass(frozen=True, slots=True)
class UnknownBlock:
    """A block this version does not understand, kept as its raw JSON object."""

    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        return str(self.raw.get("type", "unknown"))


Block: TypeAlias = (
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | CompactSummaryBlock
    | UnknownBlock
)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage and cost of one model request (or a sum of them).

    Attributes:
        input_tokens: uncached input tokens.
        output_tokens: output tokens (thinking included).
        cache_read_tokens: input tokens read from the prompt cache.
        cache_write_tokens: input tokens written to the prompt cache.
        cost_usd: cost in US dollars, when known.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_input_tokens(self) -> int:
        """All input tokens of the request: uncached + cache read + cache write."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cost_usd + other.cost_usd,
        )

    def to_json(self) -> JSON:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": self.cost_usd,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        return cls(
            int(data.get("input_tokens", 0)),
            int(data.get("output_tokens", 0)),
            int(data.get("cache_read_tokens", 0)),
            int(data.get("cache_write_tokens", 0)),
            float(data.get("cost_usd", 0.0)),
        )


#: How ``Turn.stop_reason`` of an aborted reply a failure cut off begins (the cause follows).
FAILED_STOP = "failed:"
#: ``Turn.failure`` of a reply cut off by a failure that is no broken stream.
OTHER_FAILURE = "other"


@dataclass(slots=True)
class Turn:
    """One message of a conversation.

    Attributes:
        role: ``user`` or ``assistant``.
        blocks: the content blocks, in order.
        id: unique id (32 hex chars by default).
        created_at: Unix epoch milliseconds, UTC.
        aborted: True for a reply cut off (Stop, crash); shown in the
            transcript but left out of the model context (wire rule 1).
        model: for assistant turns, ``provider:model`` that wrote it.
        usage: for assistant turns, the request's usage.
        cut_off: for an aborted reply, True when what is kept is what was written
            while it streamed (``parley.core.chat.journal``): Parley ended (a crash, a kill, a
            power cut) before the reply finished; False when it was stopped (Esc)
            or failed, and saved as such.
        stop_reason: for a complete reply that stopped at the output limit,
            ``"max_tokens"`` (Anthropic ``stop_reason: max_tokens``, OpenAI
            ``finish_reason: length``); for an aborted reply a failure cut off (not
            stopped with Esc), :data:`FAILED_STOP` and the failure's cause
            (``"failed:connection"``…: :attr:`failure`); None otherwise (other reasons
            are not kept; an aborted reply saved before causes were kept has None too).
            Stored with the usage (``parley.core.store.turns``), no column of its own.
        writing_elsewhere: for a ``cut_off`` reply read from a PostgreSQL database, True
            while the Parley journalling it (another computer's, or another window's) is
            still connected: the reply is in progress, not cut off
            (``parley.core.store.turns``). Never saved or exported; always False on a file.
    """

    role: Role
    blocks: list[Block]
    id: str = field(default_factory=new_id)
    created_at: int = field(default_factory=now_ms)
    aborted: bool = False
    model: str | None = None
    usage: Usage | None = None
    cut_off: bool = False
    stop_reason: str | None = None
    writing_elsewhere: bool = False

    @property
    def failure(self) -> str | None:
        """For an aborted reply a failure cut off, the failure's cause as kept in
        :attr:`stop_reason` (``connection``, ``timeout``, ``unreadable``, ``ended``,
        ``process``, ``error`` — ``parley.core.providers.errors.StreamInterrupted.cause`` —
        or ``other``: any other failure); None for a reply stopped with Esc, cut off by
        Parley's end, or not aborted."""
        reason = self.stop_reason
        if not self.aborted or reason is None or not reason.startswith(FAILED_STOP):
            return None
        return reason.removeprefix(FAILED_STOP) or OTHER_FAILURE

    def text(self) -> str:
        """Return the concatenated text of the turn's text blocks ('' if none)."""
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def with_blocks(self, blocks: Iterable[Block]) -> Turn:
        """Return a copy of this turn with other blocks (same id, role, time)."""
        return replace(self, blocks=list(blocks))

    def to_json(self) -> JSON:
        """Return the turn as a JSON object (Parley's own export format)."""
        out: JSON = {
            "id": self.id,
            "role": self.role,
            "created_at": self.created_at,
            "blocks": [block_to_json(b) for b in self.blocks],
        }
        if self.aborted:
            out["aborted"] = True
            if self.cut_off:
                out["cut_off"] = True
        if self.model is not None:
            out["model"] = self.model
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Turn:
        """Build a turn from :meth:`to_json` output.

        Raises:
            ContentError: a required field is missing or has the wrong type.
        """
        role = data.get("role")
        if role not in ("user", "assistant"):
            raise ContentError(f"turn role must be 'user' or 'assistant', not {role!r}")
        blocks = data.get("blocks")
        if not isinstance(blocks, list):
            raise ContentError("turn 'blocks' must be a list")
        usage = data.get("usage")
        return cls(
            role=role,
            blocks=[block_from_json(b) for b in blocks],
            id=str(data.get("id") or new_id()),
            created_at=int(data.get("created_at") or now_ms()),
            aborted=bool(data.get("aborted", False)),
            model=data.get("model"),
            usage=Usage.from_json(usage) if isinstance(usage, Mapping) else None,
            cut_off=bool(data.get("cut_off", False)),
            stop_reason=str(data["stop_reason"]) if data.get("stop_reason") else None,
        )


# --- JSON ------------------------------------------------------------------


def _origin_to_json(o: TextOrigin) -> JSON:
    out: JSON = {"kind": o.kind}
    if o.source is not None:
        out["source"] = o.source
    if o.sender is not None:
        out["sender"] = o.sender
    if o.message_id is not None:
        out["message_id"] = o.message_id
    return out


def _part_to_json(p: ToolResultPart) -> JSON:
    if isinstance(p, MediaPart):
        return {"type": p.kind, "media_type": p.media_type, "data": p.data}
    return block_to_json(p)


def block_to_json(b: Block | ToolResultPart) -> JSON:
    """Return a block as a JSON object with a ``type`` key (lossless)."""
    if isinstance(b, TextBlock):
        out: JSON = {"type": "text", "text": b.text}
        if b.origin is not None:
            out["origin"] = _origin_to_json(b.origin)
        if b.recovered:
            out["recovered"] = True
        return out
    if isinstance(b, ImageBlock):
        out = {"type": "image", "media_type": b.media_type}
        if b.data is not None:
            out["data"] = b.data
        if b.url is not None:
            out["url"] = b.url
        if b.attachment_id is not None:
            out["attachment"] = b.attachment_id
        if b.name is not None:
            out["name"] = b.name
        return out
    if isinstance(b, DocumentBlock):
        out = {"type": "document", "media_type": b.media_type}
        if b.data or b.attachment_id is None:
            out["data"] = b.data
        if b.name is not None:
            out["name"] = b.name
        if b.attachment_id is not None:
            out["attachment"] = b.attachment_id
        return out
    if isinstance(b, MediaPart):
        return _part_to_json(b)
    if isinstance(b, ToolUseBlock):
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": dict(b.input)}
    if isinstance(b, ToolResultBlock):
        return {
            "type": "tool_result",
            "tool_use_id": b.tool_use_id,
            "content": [_part_to_json(p) for p in b.content],
            "is_error": b.is_error,
        }
    if isinstance(b, ThinkingBlock):
        out = {"type": "thinking", "thinking": b.thinking}
        if b.signature is not None:
            out["signature"] = b.signature
        return out
    if isinstance(b, CompactSummaryBlock):
        out = {"type": "compact_summary", "summary": b.summary, "replaced_count": b.replaced_count}
        for key in ("first_turn_id", "last_turn_id", "compaction_id"):
            if getattr(b, key) is not None:
                out[key] = getattr(b, key)
        if b.legacy:
            out["legacy"] = True
        return out
    if isinstance(b, UnknownBlock):
        return dict(b.raw)
    raise TypeError(f"not a content block: {b!r}")


def _req(data: Mapping[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise ContentError(f"{data.get('type')} block needs '{key}' of type {kind.__name__}")
    return value


def _attachment(data: Mapping[str, Any]) -> str | None:
    ref = data.get("attachment")
    if ref is not None and not isinstance(ref, str):
        raise ContentError(f"{data.get('type')} block needs 'attachment' of type str")
    return ref


def _part_from_json(data: Mapping[str, Any]) -> ToolResultPart:
    kind = data.get("type")
    if kind in ("audio", "video"):
        return MediaPart(kind, _req(data, "media_type", str), _req(data, "data", str))
    block = block_from_json(data)
    if not isinstance(block, TextBlock | ImageBlock | DocumentBlock):
        raise ContentError(f"a tool_result part cannot be of type {kind!r}")
    return block


def block_from_json(data: Any) -> Block:
    """Build a block from :func:`block_to_json` output.

    A JSON object whose ``type`` is not one of Parley's block types becomes an
    :class:`UnknownBlock` holding it unchanged.

    Raises:
        ContentError: ``data`` is not an object, or a known type lacks a field.
    """
    if not isinstance(data, Mapping):
        raise ContentError(f"a content block must be a JSON object, not {type(data).__name__}")
    kind = data.get("type")
    if kind == "text":
        origin = data.get("origin")
        return TextBlock(
            _req(data, "text", str),
            TextOrigin(
                origin.get("kind", "user"),
                origin.get("source"),
                origin.get("sender"),
                origin.get("message_id"),
            )
            if isinstance(origin, Mapping)
            else None,
            bool(data.get("recovered", False)),
        )
    if kind == "image":
        ref = _attachment(data)
        if data.get("data") is None and data.get("url") is None and ref is None:
            raise ContentError("image block needs 'data', 'url' or 'attachment'")
        name = data.get("name")
        return ImageBlock(
            _req(data, "media_type", str), data.get("data"), data.get("url"), ref,
            name if isinstance(name, str) else None,
        )
    if kind == "document":
        ref = _attachment(data)
        body = data.get("data", "") if ref is not None else _req(data, "data", str)
        if not isinstance(body, str):
            raise ContentError("document block needs 'data' of type str")
        return DocumentBlock(_req(data, "media_type", str), body, data.get("name"), ref)
    if kind == "tool_use":
        return ToolUseBlock(
            _req(data, "id", str), _req(data, "name", str), _req(data, "input", dict)
        )
    if kind == "tool_result":
        parts = data.get("content", [])
        if isinstance(parts, str):
            parts = [{"type": "text", "text": parts}]
        return ToolResultBlock(
            _req(data, "tool_use_id", str),
            tuple(_part_from_json(p) for p in parts),
            bool(data.get("is_error", False)),
        )
    if kind == "thinking":
        return ThinkingBlock(_req(data, "thinking", str), data.get("signature"))
    if kind == "compact_summary":
        return CompactSummaryBlock(
            _req(data, "summary", str),
            int(data.get("replaced_count", 0)),
            data.get("first_turn_id"),
            data.get("last_turn_id"),
            data.get("compaction_id"),
            bool(data.get("legacy", False)),
        )
    return UnknownBlock(dict(data))


def blocks_to_json_text(blocks: Sequence[Block]) -> str:
    """Serialize blocks to compact JSON text (what the store keeps per turn)."""
    return json.dumps([block_to_json(b) for b in blocks], ensure_ascii=False, separators=(",", ":"))


def blocks_from_json_text(text: str) -> list[Block]:
    """Parse :func:`blocks_to_json_text` output.

    Raises:
        ContentError: the text is not a JSON array of block objects.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContentError(f"stored blocks are not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ContentError("stored blocks must be a JSON array")
    return [block_from_json(b) for b in data]


# --- helpers ---------------------------------------------------------------


def tool_result_to_text(output: str | ToolResultBlock | Iterable[ToolResultPart]) -> str:
    """Flatten any tool output to text.

    Args:
        output: a string, a tool_result block, or its parts.

    Returns:
        The text parts joined by newlines; images, documents, audio and video
        become placeholders such as ``[image: image/png]``. An error result is
        prefixed with ``Error: ``.
    """
    if isinstance(output, str):
        return output
    prefix = ""
    parts: Iterable[ToolResultPart]
    if isinstance(output, ToolResultBlock):
        parts = output.content
        prefix = "Error: " if output.is_error else ""
    else:
        parts = output
    pieces: list[str] = []
    for p in parts:
        if isinstance(p, TextBlock):
            pieces.append(p.text)
        elif isinstance(p, DocumentBlock):
            pieces.append(f"[document: {p.name or p.media_type}]")
        elif isinstance(p, ImageBlock):
            pieces.append(f"[image: {p.media_type}]")
        else:
            pieces.append(f"[{p.kind}: {p.media_type}]")
    return prefix + "\n".join(pieces)


def apply_compactions(turns: Sequence[Turn]) -> list[Turn]:
    """Return the turns the model sees once compaction summaries are applied.

    The latest summary turn (the last turn holding a :class:`CompactSummaryBlock`)
    wins: a re-compaction's summary already carries the earlier one's facts.
    Its replaced range (``first_turn_id`` … ``last_turn_id``, inclusive, in list
    order) and every earlier summary turn are removed; the summary turn is put
    where the range began; the kept turns follow in order. A v3 (legacy)
    summary has no range and stays where it is. Nothing is mutated.

    Args:
        turns: a session's turns in order, summary turns included.

    Returns:
        A new list (the same Turn objects, no copies).
    """
    summary_idx = None
    for i in range(len(turns) - 1, -1, -1):
        if any(isinstance(b, CompactSummaryBlock) for b in turns[i].blocks):
            summary_idx = i
            break
    if summary_idx is None:
        return list(turns)
    summary_turn = turns[summary_idx]
    block = next(b for b in summary_turn.blocks if isinstance(b, CompactSummaryBlock))
    ids = [t.id for t in turns]
    if block.first_turn_id not in ids or block.last_turn_id not in ids:
        return list(turns)
    start, end = ids.index(block.first_turn_id), ids.index(block.last_turn_id)
    if end < start:
        return list(turns)
    out: list[Turn] = []
    for i, t in enumerate(turns):
        if i == start:
            out.append(summary_turn)
        if start <= i <= end or i == summary_idx:
            continue
        if any(isinstance(b, CompactSummaryBlock) for b in t.blocks):
            continue
        out.append(t)
    return out
