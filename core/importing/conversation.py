"""Import a conversation file as a new session.

Accepted: whatever ``parley.core.convert.auto_detect_and_convert`` reads — a Parley
export (JSON or Markdown), a list of Parley turns, Anthropic Messages or OpenAI
Chat Completions messages (a list, or a request body with ``messages``, whose
``model`` becomes the session's) — as UTF-8 text of at most
:data:`MAX_IMPORT_BYTES`. Anything else is refused with
:class:`~parley.core.convert.NotAConversation` (its ``reason`` says why) before
anything is written: an empty file, a binary file, text that is not JSON,
JSON of another shape, a conversation with no turns, or one holding a message
longer than any model can read (``parley.core.context.text_limits``: :class:`ImportMessageTooLong`).

The new session gets the title given, else the data's title, else one made
from its first user message the way a new chat is titled from its first
message (``parley.core.chat.titles.first_line_title``), else "Imported chat",
its system prompt (or the space's when it has none), and new ids for every
turn (a file exported from this very database can be imported again);
compaction summaries of a Parley export are re-linked to the new ids and
recorded as compactions. A Parley export of a chat with branches (version 2,
``parley.core.convert.parley``) comes in as that tree: each turn below its parent
(``Store.show_branch`` to the parent, then the turn appended), and the chat shows
the path the export showed. Times, aborted marks, models and usage of the turns
are kept; the session's own usage starts at zero (like a fork: no request was
made by this session). Attached files go to the store's attachments table as
any saved turn's do; a file whose data is damaged, or that is only referenced
(``"attachment"`` without ``data``) and not already in this store, becomes a
text placeholder and is reported in ``lost``.

Parsing and converting run on a worker thread (a large file would stall the
event loop otherwise). The turns are written one transaction each; if a write
fails, the half-written session is deleted again and the error raised.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from parley.core.chat.titles import first_line_title
from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultPart,
    Turn,
    new_id,
)
from parley.core.context.text_limits import max_text_chars, megabytes, text_chars
from parley.core.convert import NotAConversation, auto_detect_and_convert
from parley.core.convert.detect import ImportedConversation, SourceFormat
from parley.core.importing.inline_files import by_bytes, claimed
from parley.core.store.attachments import missing_data
from parley.core.store.models import Session

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: The largest file Parley imports (bytes): 100 MiB, enough for long chats with images.
MAX_IMPORT_BYTES = 100 * 1024 * 1024
#: How many leading bytes are checked for NUL bytes (a binary file).
_SNIFF_BYTES = 8192
DEFAULT_TITLE = "Imported chat"

LOST_MISSING_FILE = (
    "{n} attached file(s) were only referenced, not included, in the file; each was "
    "replaced by a placeholder."
)
LOST_DAMAGED_FILE = "{n} attached file(s) had damaged data; each was replaced by a placeholder."
LOST_MISMATCHED_FILE = (
    "{n} attached file(s) were not what they claimed to be (their bytes are another kind); "
    "each was replaced by a placeholder."
)


class ImportTooLarge(NotAConversation):
    """The file is larger than :data:`MAX_IMPORT_BYTES`; nothing was read or imported.

    Attributes:
        size: the file's size in bytes.
        limit: the limit in bytes.
    """

    def __init__(self, size: int, limit: int = MAX_IMPORT_BYTES) -> None:
        reason = (
            f"it is {_mb(size)}, and Parley imports conversation files of at most {_mb(limit)}"
        )
        super().__init__(reason)
        self.message = (
            f"This file is too large to import: {reason}. Nothing was imported. If it is a "
            "conversation, export it again without attachments, or split it."
        )
        self.args = (self.message,)
        self.size = size
        self.limit = limit


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):,.1f} MB"


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import made.

    Attributes:
        session: the new session (``turn_count`` = ``turns_imported``).
        turns_imported: how many turns were written.
        source_format: ``parley`` | ``markdown`` | ``anthropic`` | ``openai``.
        lost: one sentence per kind of thing that could not be imported.
    """

    session: Session
    turns_imported: int
    source_format: SourceFormat
    lost: list[str] = field(default_factory=list)


def _check_bytes(data: bytes | str) -> None:
    """Refuse sizes and binary content before parsing. Raises NotAConversation."""
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > MAX_IMPORT_BYTES:
        raise ImportTooLarge(size, MAX_IMPORT_BYTES)
    if not data.strip():
        raise NotAConversation("the file is empty")
    refuse_binary(data)


def refuse_binary(data: bytes | str) -> None:
    """Refuse a binary file (a NUL byte in its first 8 KiB) with what it seems to be.

    Raises:
        NotAConversation: "it is a ZIP archive…" (a data export not unzipped yet:
            the reason says which file inside to import) or "it is a binary file".
    """
    head = data[:_SNIFF_BYTES]
    if isinstance(head, str):
        head = head.encode("utf-8", "replace")
    if head.startswith(b"PK\x03\x04"):
        raise NotAConversation(
            "it is a ZIP archive, not JSON text; a ChatGPT or Claude.ai data export comes "
            "zipped: unzip it and import the conversations.json inside")
    if b"\x00" in head:
        raise NotAConversation("it is a binary file, not JSON text")


def _convert(data: bytes | str) -> ImportedConversation:
    """Parse and convert (runs on a worker thread)."""
    _check_bytes(data)
    try:
        found = auto_detect_and_convert(data)
    except RecursionError as exc:  # JSON nested thousands deep
        raise NotAConversation("its JSON is nested too deeply") from exc
    if not found.turns:
        raise NotAConversation("it holds no messages")
    check_texts(found.turns)
    return found


class ImportMessageTooLong(NotAConversation):
    """A message of the file is longer than any model can read
    (``parley.core.context.text_limits``); nothing was imported."""

    def __init__(self, index: int, chars: int, limit: int) -> None:
        reason = (f"message {index + 1} is {chars:,} characters long ({megabytes(chars)}), "
                  f"more than any model can read (about {limit:,} characters)")
        super().__init__(reason)
        self.message = (f"This conversation cannot be imported: {reason}. Nothing was "
                        "imported. Shorten that message (or split it into several), then import "
                        "again.")
        self.args = (self.message,)
        self.chars = chars
        self.limit = limit


def check_texts(turns: list[Turn]) -> None:
    """Refuse a conversation holding a message no model can read. Raises ImportMessageTooLong."""
    limit = max_text_chars()
    for i, turn in enumerate(turns):
        chars = max(text_chars(turn.blocks),
                    sum(len(b.thinking) for b in turn.blocks if isinstance(b, ThinkingBlock)))
        if chars > limit:
            raise ImportMessageTooLong(i, chars, limit)


def fresh_ids(turns: list[Turn]) -> list[Turn]:
    """Copies of the turns with new ids; summary blocks re-linked to them."""
    ids = {t.id: new_id() for t in turns}
    out: list[Turn] = []
    for t in turns:
        blocks = [
            replace(
                b,
                first_turn_id=ids.get(b.first_turn_id or "", b.first_turn_id),
                last_turn_id=ids.get(b.last_turn_id or "", b.last_turn_id),
                compaction_id=None,
            )
            if isinstance(b, CompactSummaryBlock)
            else b
            for b in t.blocks
        ]
        out.append(replace(t, id=ids[t.id], blocks=blocks))
    return out


File = ImageBlock | DocumentBlock


def _damaged(block: File) -> bool:
    try:
        base64.b64decode(block.data or "", validate=True)
    except (binascii.Error, ValueError):
        return True
    return False


class _FileCheck:
    """Replaces attached files the store could not save by placeholders, counting them.

    A file is kept when it carries valid base64 data of the kind it declares (its bytes
    decide: ``parley.core.importing.inline_files``), is a URL image, or is a reference
    (``attachment_id`` without data) to a file this store already holds.
    """

    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.missing = 0
        self.damaged = 0
        self.mismatched = 0

    def file(self, block: File) -> File | TextBlock:
        what = "image" if isinstance(block, ImageBlock) else "document"
        name = getattr(block, "name", None) or block.media_type
        if block.data:
            if _damaged(block):
                self.damaged += 1
                return TextBlock(f"[{what}: {name} — its data was damaged in the imported file]")
            checked = by_bytes(block)
            if not isinstance(checked, str):
                return checked
            self.mismatched += 1
            return TextBlock(f"[{what}: {name} — not imported: it claims to be "
                             f"{claimed(block)}, but its bytes are {checked}]")
        if block.attachment_id is None or block.attachment_id in self.known:
            return block
        self.missing += 1
        return TextBlock(f"[{what}: {name} — not included in the imported file]")

    def part(self, part: ToolResultPart) -> ToolResultPart:
        return self.file(part) if isinstance(part, ImageBlock | DocumentBlock) else part

    def block(self, block: Block) -> Block:
        if isinstance(block, ImageBlock | DocumentBlock):
            return self.file(block)
        if isinstance(block, ToolResultBlock):
            return replace(block, content=tuple(self.part(p) for p in block.content))
        return block

    def turns(self, turns: list[Turn]) -> list[Turn]:
        return [t.with_blocks(self.block(b) for b in t.blocks) for t in turns]

    def lost(self) -> list[str]:
        out = []
        if self.missing:
            out.append(LOST_MISSING_FILE.format(n=self.missing))
        if self.damaged:
            out.append(LOST_DAMAGED_FILE.format(n=self.damaged))
        if self.mismatched:
            out.append(LOST_MISMATCHED_FILE.format(n=self.mismatched))
        return out


def _summary_range(turn: Turn, written: set[str]) -> CompactSummaryBlock | None:
    """The turn's summary block when its range is among the turns already written."""
    block = next((b for b in turn.blocks if isinstance(b, CompactSummaryBlock)), None)
    if block is None or block.first_turn_id is None or block.last_turn_id is None:
        return None
    if block.first_turn_id in written and block.last_turn_id in written:
        return block
    return None


async def _write_turn(store: AsyncStore, session_id: str, turn: Turn, written: set[str]) -> None:
    block = _summary_range(turn, written)
    if block is None:
        await store.append_turn(session_id, turn)
    else:
        await store.record_compaction(
            session_id,
            turn,
            first_turn_id=block.first_turn_id or "",
            last_turn_id=block.last_turn_id or "",
            replaced_count=block.replaced_count,
            model=turn.model,
            usage=turn.usage,
            reason="imported",
        )
    written.add(turn.id)


async def import_conversation(
    store: AsyncStore,
    data: bytes | str,
    *,
    space_id: str | None = None,
    title: str | None = None,
) -> ImportResult:
    """Create a new session from a conversation file's content.

    Args:
        store: an ``AsyncStore``.
        data: the file's content: UTF-8 JSON bytes (a BOM is accepted) or text;
            at most :data:`MAX_IMPORT_BYTES`.
        space_id: the space of the new session (None: the default space).
        title: the new session's title (None: the file's title, else the first
            line of its first user message (:func:`imported_title`)).

    Returns:
        The new session, how many turns were imported, the format recognised
        and what was lost (e.g. OpenAI ``name`` fields, unknown parts).

    Raises:
        ImportTooLarge: ``data`` is larger than the limit; nothing was written.
        NotAConversation: ``data`` is not a conversation (empty, binary, not
            JSON, the wrong shape, no messages); ``reason`` says why; nothing
            was written.
        SpaceNotFound: ``space_id`` does not exist; nothing was written.
        StoreError: a write failed; the partly written session was removed
            (if even that failed, it stays, titled, with the turns written).
    """
    found = await asyncio.to_thread(_convert, data)
    refs = missing_data(found.turns)
    known = set(await store.attachment_infos(refs)) if refs else set()
    check = _FileCheck(known)
    turns = await asyncio.to_thread(lambda: check.turns(fresh_ids(found.turns)))
    parents, path = _tree(found, turns)
    shown = [t for t in turns if path is None or t.id in path]
    name = (title or "").strip() or (found.title or "").strip() or imported_title(shown)
    session = await store.create_session(space_id=space_id, title=name, system_prompt=found.system,
                                         model=found.model)
    written: set[str] = set()
    line: list[str] = []  # the path shown as the turns are written
    try:
        for turn in turns:
            if parents is not None:
                await _end_at(store, session.id, parents[turn.id], line, parents)
            await _write_turn(store, session.id, turn, written)
            line.append(turn.id)
        if path:
            await store.show_branch(session.id, path[-1], exact=True)
    except BaseException:
        await _discard(store, session.id)
        raise
    session = await store.get_session(session.id)
    log.info("imported %d turns (%s) as session %s", len(turns), found.source_format, session.id)
    lost = list(found.lost) + check.lost()
    return ImportResult(session, len(turns), found.source_format, lost)


def _tree(found: ImportedConversation, turns: list[Turn]
          ) -> tuple[dict[str, str | None] | None, list[str] | None]:
    """The tree of a Parley export with branches in the new ids of ``turns`` (the same
    turns as ``found.turns``, in order): (each turn's parent, the path shown); (None,
    None) for a conversation that is one line."""
    if found.parents is None or found.path is None:
        return None, None
    new = {old.id: t.id for old, t in zip(found.turns, turns, strict=True)}
    parents = {new[o]: (new[p] if p is not None else None) for o, p in found.parents.items()}
    return parents, [new[o] for o in found.path]


async def _end_at(store: AsyncStore, session_id: str, parent: str | None, line: list[str],
                  parents: dict[str, str | None]) -> None:
    """Make the session's path end at ``parent`` (None: empty), so the turn appended next
    is its child; ``line`` is the path now and is updated."""
    if (line[-1] if line else None) == parent:
        return
    if parent is None:
        await store.branch_before(session_id, line[0])
        line.clear()
        return
    await store.show_branch(session_id, parent, exact=True)
    up: list[str] = []
    at: str | None = parent
    while at is not None:
        up.append(at)
        at = parents[at]
    line[:] = reversed(up)


def imported_title(turns: list[Turn]) -> str:
    """The title of an imported conversation whose file names none.

    Args:
        turns: the conversation's turns, oldest first.

    Returns:
        The first non-empty line of the first user message with text, cut to a
        title's length (:func:`parley.core.chat.titles.first_line_title`, as a new chat is
        titled from its first message); :data:`DEFAULT_TITLE` when no user
        message has text (tool results and compaction summaries don't count).
    """
    first = next((t for t in turns if t.role == "user" and t.text().strip()), None)
    return first_line_title(first.text()) if first is not None else DEFAULT_TITLE


async def _discard(store: AsyncStore, session_id: str) -> None:
    try:
        await asyncio.shield(store.delete_session(session_id))
    except Exception:
        log.exception("could not remove the half-imported session %s", session_id)


async def import_file(
    store: AsyncStore, path: Path | str, *, space_id: str | None = None, title: str | None = None
) -> ImportResult:
    """Import a conversation file (see :func:`import_conversation`).

    The size is checked before the file is read, so a huge file is refused at once.

    Raises:
        ImportTooLarge: the file is larger than :data:`MAX_IMPORT_BYTES`.
        NotAConversation: as :func:`import_conversation`.
        OSError: the file cannot be read (missing, no permission).
    """
    p = Path(path)
    size = await asyncio.to_thread(lambda: p.stat().st_size)
    if size > MAX_IMPORT_BYTES:
        raise ImportTooLarge(size, MAX_IMPORT_BYTES)
    data = await asyncio.to_thread(p.read_bytes)
    return await import_conversation(store, data, space_id=space_id, title=title)


__all__ = [
    "DEFAULT_TITLE",
    "MAX_IMPORT_BYTES",
    "ImportResult",
    "ImportTooLarge",
    "NotAConversation",
    "check_texts",
    "fresh_ids",
    "import_conversation",
    "import_file",
]
