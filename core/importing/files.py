"""Import any file Parley reads: a chat history (many chats) or one conversation.

:func:`import_path` is what File ▸ Import and ``parley --import`` run:

* a ChatGPT, Claude.ai or Open WebUI export (``parley.core.convert.histories``),
  unzipped or still zipped (``parley.core.importing.export_zip``: read in place, its
  files too), becomes one chat per conversation, each other branch of a conversation a
  branch of the chat's tree (‹ n/m › on the message where it parts), all written in ONE
  transaction (``Store.import_chats``): a
  failure or a cancel leaves nothing behind. Conversations imported before
  (recognised by the export's conversation id, kept in ``sessions.meta``)
  are left out, so importing the same file twice does not duplicate;
* Parley's Markdown export is written the same way (one chat; its
  ``source_id`` is a digest of the file's text without its export date), so
  importing the same export again adds nothing either;
* a Parley database (a sessions.db, a backup, a rescue copy) is merged by ids
  (``parley.core.importing.parley_file``): a second import adds nothing;
* anything else goes to ``parley.core.importing.conversation.import_conversation`` (a Parley
  export, JSON or Markdown, an Anthropic or OpenAI message list or request body).

Either way the result is an :class:`ImportSummary` whose :meth:`~ImportSummary.text`
is the short line shown to the person ("412 chats, 9,310 messages, 3 other branches
from a ChatGPT export; 2 files left out (2 not in the export).") and whose
:meth:`~ImportSummary.details` lists every file left out under two headings
("Not in the export", "Refused, with the reason").
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parley.core.content import ThinkingBlock, ToolResultBlock, Turn
from parley.core.context.text_limits import max_text_chars, text_chars
from parley.core.convert.chatgpt import FileFinder
from parley.core.convert.detect import decode, parse_json
from parley.core.convert.errors import NotAConversation
from parley.core.convert.histories import read_history
from parley.core.convert.history import FORMAT_NAMES, HistoryChat, ImportedHistory
from parley.core.convert.markdown import from_markdown, looks_like_markdown
from parley.core.gc_pause import gc_paused
from parley.core.importing.conversation import (
    MAX_IMPORT_BYTES,
    ImportResult,
    ImportTooLarge,
    check_texts,
    fresh_ids,
    import_conversation,
    imported_title,
    refuse_binary,
)
from parley.core.importing.export_folder import ExportFolder
from parley.core.importing.export_zip import ZIP_MAGIC, open_export
from parley.core.importing.inline_files import InlineFiles
from parley.core.importing.parley_file import import_database, is_database
from parley.core.store.imports import NewBranch, NewChat

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.merge import MergeReport

__all__ = ["MAX_HISTORY_BYTES", "ImportSummary", "import_data", "import_path"]

log = logging.getLogger(__name__)

#: The largest history export Parley reads (bytes): 1 GiB (years of ChatGPT use
#: are a few hundred MB; the parsed JSON takes several times that in memory).
MAX_HISTORY_BYTES = 1024 * 1024 * 1024
#: The headings of :meth:`ImportSummary.details` (the GUI's Details dialog and
#: ``parley --import`` print the same).
NOT_IN_EXPORT = "Not in the export"
REFUSED = "Refused, with the reason"
TOO_LONG = "Left out: a message longer than any model can read"


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What an import made.

    Attributes:
        source_format: ``chatgpt`` | ``claude.ai`` | ``open-webui`` | ``parley``
            | ``markdown`` | ``anthropic`` | ``openai``.
        session_ids: the new chats, in the file's order.
        messages: messages written, every branch's (each message once).
        branches: other branches written (besides the one each chat shows).
        skipped: conversations left out because they were imported before.
        empty: conversations left out because they hold no message.
        lost: one sentence per kind of thing that could not be carried.
        missing_files: (``image`` | ``file``, name) of files the export named
            but did not include.
        refused_files: (name, why) of files the export holds that were not read
            (``parley.core.importing.export_folder``: a link, too large, their bytes
            not what they claim to be).
        single: for one conversation, ``parley.core.importing.conversation``'s result (else None).
    """

    source_format: str
    session_ids: list[str]
    messages: int
    branches: int = 0
    skipped: int = 0
    empty: int = 0
    lost: list[str] = field(default_factory=list)
    missing_files: list[tuple[str, str]] = field(default_factory=list)
    single: ImportResult | None = None
    too_long: list[str] = field(default_factory=list)
    refused_files: list[tuple[str, str]] = field(default_factory=list)
    merged: MergeReport | None = None

    @property
    def changed(self) -> bool:
        """True when anything came in (a chat; for a Parley database, any row)."""
        return self.chats > 0 or (self.merged is not None and self.merged.changed)

    @property
    def chats(self) -> int:
        """How many chats were made."""
        return len(self.session_ids)

    @property
    def format_name(self) -> str:
        """The format named for people ("ChatGPT export", "openai")."""
        return FORMAT_NAMES.get(self.source_format, self.source_format)

    def line(self, file_name: str) -> str:
        """The summary after the file's name: ``"Imported x.json: 3 chats, …"``, or
        ``"x.json: Nothing new: …"`` when nothing came in."""
        return f"{'Imported ' if self.changed else ''}{file_name}: {self.text()}"

    def text(self) -> str:
        """The summary for people in one short line, e.g. ``"412 chats, 9,310 messages,
        3 other branches from a ChatGPT export; 4 files left out (3 not in the export,
        1 refused)."`` (then what else was left out, one short sentence per kind). No file
        or conversation is named here: :meth:`details` lists them all. Zero counts are not
        named (branches, files, notes); when nothing new came in, the files the export
        lacks are not counted either (they belong to chats imported before). A Parley
        database says what the merge added
        (``parley.core.importing.parley_file.report_text``)."""
        if self.merged is not None:
            from parley.core.importing.parley_file import report_text

            return report_text(self.merged)
        if not self.chats and self.skipped:
            what = ("the conversation" if self.skipped == 1
                    else f"the {self.skipped:,} conversations")
            empty = (f" {_n(self.empty, 'empty conversation')} "
                     f"{'was' if self.empty == 1 else 'were'} left out." if self.empty else "")
            return (f"Nothing new: {what} of this {_format_noun(self.format_name)} "
                    f"{'was' if self.skipped == 1 else 'were'} imported before.{empty}"
                    + "".join(f" {s}" for s in self._too_long()))
        parts = [_n(self.chats, "chat"), _n(self.messages, "message")]
        if self.branches:
            parts.append(_n(self.branches, "other branch", "other branches"))
        head = f"{', '.join(parts)} from {_from(self.format_name)}"
        missing, refused = len(self.missing_files), len(self.refused_files)
        if missing or refused:
            why = [f"{missing:,} not in the export" if missing else "",
                   f"{refused:,} refused" if refused else ""]
            head += f"; {_n(missing + refused, 'file')} left out ({', '.join(w for w in why if w)})"
        out = [head + "."]
        if self.skipped:
            out.append(f"{_n(self.skipped, 'conversation')} imported before "
                       f"{'was' if self.skipped == 1 else 'were'} left out.")
        if self.empty:
            out.append(f"{_n(self.empty, 'empty conversation')} "
                       f"{'was' if self.empty == 1 else 'were'} left out.")
        out.extend(self._too_long())
        out.extend(self.lost)
        return " ".join(out)

    def details(self) -> list[tuple[str, list[str]]]:
        """Everything :meth:`text` counts without naming, whole, as (heading, lines):
        :data:`NOT_IN_EXPORT` (``"image: a.png"``: files the export names but does not
        hold), :data:`REFUSED` (``"file-Key5-id_rsa.png: its name says it is an image,
        but its bytes are text"``: files it holds that were not read) and
        :data:`TOO_LONG` (conversation titles); only the non-empty ones. Empty when
        nothing new came in (those files belong to chats imported before)."""
        if self.merged is not None:
            return []
        out: list[tuple[str, list[str]]] = []
        if self.missing_files and (self.chats or not self.skipped):
            out.append((NOT_IN_EXPORT, [f"{kind}: {name}" for kind, name in self.missing_files]))
        if self.refused_files and (self.chats or not self.skipped):
            out.append((REFUSED, [f"{name}: {why}" for name, why in self.refused_files]))
        if self.too_long:
            out.append((TOO_LONG, list(self.too_long)))
        return out

    def details_text(self) -> str:
        """:meth:`details` for a terminal: each heading, then its lines indented by two
        spaces; '' when there is nothing to list."""
        return "\n".join(f"{heading}:\n" + "\n".join(f"  {line}" for line in lines)
                         for heading, lines in self.details())

    def _too_long(self) -> list[str]:
        """The sentence counting the conversations left out for a too long message."""
        n = len(self.too_long)
        if not n:
            return []
        return [f"{_n(n, 'conversation')} holding a message longer than any model can read "
                f"{'was' if n == 1 else 'were'} left out."]


def _n(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def _article(name: str) -> str:
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def _from(name: str) -> str:
    """"a ChatGPT export", "Parley's Markdown export": the format after "from"."""
    return name if name.startswith("Parley") else _article(name)


def _format_noun(name: str) -> str:
    """"ChatGPT export", "file" (a single conversation's format is no export)."""
    return name.split("'s ", 1)[-1] if name.startswith("Parley") else name


async def import_path(
    store: AsyncStore,
    path: Path | str,
    *,
    single_space_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ImportSummary:
    """Import a file: a chat history export, or one conversation.

    Args:
        store: an ``AsyncStore``.
        path: the file; images of a ChatGPT export are looked for in its folder
            (``parley.core.importing.export_folder``); a ``.zip`` data export is read
            as it is, its images from the zip (``parley.core.importing.export_zip``).
        single_space_id: the space of a single conversation (one chat, which the
            window opens where the person is; None: the default space). A chat
            history's chats always go to the default space, where ``parley --import``
            puts them (a Parley database is merged by ids: each chat keeps its space).
        progress: ``progress(done, total)`` after each conversation written
            (called on the store's thread).
        cancelled: asked before each conversation; True rolls the import back.

    Returns:
        The summary.

    Raises:
        ImportTooLarge: the file (a zip: its conversations.json) is larger than
            :data:`MAX_HISTORY_BYTES` (or, for a single conversation,
            ``parley.core.importing.conversation.MAX_IMPORT_BYTES``).
        NotAConversation: the file is none of the formats; its reason says
            what was found; nothing was written.
        ImportCancelled: cancelled; nothing was written.
        SpaceNotFound, StoreError: nothing was written.
        OSError: the file cannot be read.
    """
    p = Path(path)
    head = await asyncio.to_thread(_head, p)
    if is_database(head):  # a sessions.db, a backup, a copy
        merged = await import_database(store, p)
        return ImportSummary("parley-db", list(merged.chat_ids), merged.messages,
                             merged=merged)
    if head.startswith(ZIP_MAGIC):  # a data export as it comes (export_zip)
        archive, data, files = await asyncio.to_thread(open_export, p, MAX_HISTORY_BYTES)
        try:
            with gc_paused():
                return await _import(store, data, files, single_space_id, progress, cancelled)
        finally:
            archive.close()
    size = await asyncio.to_thread(lambda: p.stat().st_size)
    if size > MAX_HISTORY_BYTES:
        raise ImportTooLarge(size, MAX_HISTORY_BYTES)
    data = await asyncio.to_thread(p.read_bytes)
    return await import_data(store, data, folder=p.parent, single_space_id=single_space_id,
                             progress=progress, cancelled=cancelled)


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(16)


async def import_data(
    store: AsyncStore,
    data: bytes | str,
    *,
    folder: Path | None = None,
    single_space_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ImportSummary:
    """:func:`import_path` for a file's content (``folder``: where its images are).

    The cyclic garbage collector is paused meanwhile (``parley.core.gc_pause``): a big
    export makes millions of objects, and each full collection it triggered held
    the GIL, freezing the window, for 100-300 ms.
    """
    files = ExportFolder(folder) if folder is not None else None
    with gc_paused():
        return await _import(store, data, files, single_space_id, progress, cancelled)


async def _import(
    store: AsyncStore,
    data: bytes | str,
    files: FileFinder | None,
    single_space_id: str | None,
    progress: Callable[[int, int], None] | None,
    cancelled: Callable[[], bool] | None,
) -> ImportSummary:
    history = await asyncio.to_thread(_read, data, files)
    if history is None:
        size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
        if size > MAX_IMPORT_BYTES:
            raise ImportTooLarge(size, MAX_IMPORT_BYTES)
        markdown = await asyncio.to_thread(_markdown_chat, data)
        if markdown is not None:
            return await _import_markdown(store, markdown, single_space_id)
        result = await import_conversation(store, data, space_id=single_space_id)
        return ImportSummary(result.source_format, [result.session.id], result.turns_imported,
                             lost=list(result.lost), single=result)
    if not history.chats:
        raise NotAConversation(
            f"it is {_article(FORMAT_NAMES[history.source_format])} whose "
            f"{_n(history.empty, 'conversation')} hold no messages")
    chats, too_long = await asyncio.to_thread(_prepare, history)
    written = await store.import_chats(chats, space_id=None, progress=progress,
                                       cancelled=cancelled)  # the default space
    log.info("imported %d chats, %d messages, %d other branches (%s); %d already there",
             len(written.session_ids), written.messages, written.branches,
             history.source_format, written.skipped)
    return ImportSummary(history.source_format, written.session_ids, written.messages,
                         written.branches, written.skipped, history.empty, history.lost,
                         history.missing_files, too_long=too_long,
                         refused_files=history.refused_files)


def _prepare(history: ImportedHistory) -> tuple[list[NewChat], list[str]]:
    """The chats to write, and the titles of those left out because a message of theirs
    is longer than any model can read (``core.text_limits``; never saved, as for a single
    conversation); worker thread. Files carried inline are checked by their bytes first
    (``parley.core.importing.inline_files``): those refused are added to
    ``history.refused_files``."""
    limit = max_text_chars()
    chats: list[NewChat] = []
    too_long: list[str] = []
    inline = InlineFiles()
    for chat in history.chats:
        chat.turns = inline.turns(chat.turns)
        for branch in chat.branches:
            branch.turns = inline.turns(branch.turns)
    history.refused_files.extend(inline.refused)
    for chat in history.chats:
        new = _new_chat(chat, history.source_format)
        every = [chat.turns, *(b.turns for b in chat.branches)]
        if any(_chars(t) > limit for turns in every for t in turns):
            too_long.append(new.title)
        else:
            chats.append(new)
    return chats, too_long


def _chars(turn: Turn) -> int:
    return max(text_chars(turn.blocks),
               sum(len(b.thinking) for b in turn.blocks if isinstance(b, ThinkingBlock)))


_EXPORT_DATE = re.compile(r"^- Exported from Parley on .*$", re.MULTILINE)


def _markdown_chat(data: bytes | str) -> tuple[NewChat, list[str]] | None:
    """Parley's Markdown export as one chat recognised again by its digest; None for
    anything else (worker thread). Raises NotAConversation (no messages, too long)."""
    text = decode(data)
    if not looks_like_markdown(text):
        return None
    chat = from_markdown(text)
    if not chat.turns:
        raise NotAConversation("it holds no messages")
    check_texts(chat.turns)
    turns = fresh_ids(chat.turns)
    digest = hashlib.sha256(_EXPORT_DATE.sub("", text.replace("\r\n", "\n"), count=1)
                            .strip().encode("utf-8")).hexdigest()
    title = (chat.title or "").strip() or imported_title(turns)
    return NewChat(title, turns, "markdown", digest, chat.system), chat.lost


async def _import_markdown(store: AsyncStore, found: tuple[NewChat, list[str]],
                           space_id: str | None) -> ImportSummary:
    chat, lost = found
    written = await store.import_chats([chat], space_id=space_id)
    if not written.session_ids:
        return ImportSummary("markdown", [], 0, skipped=written.skipped)
    session = await store.get_session(written.session_ids[0])
    result = ImportResult(session, len(chat.turns), "markdown", list(lost))
    return ImportSummary("markdown", written.session_ids, written.messages, lost=list(lost),
                         single=result)


def _read(data: bytes | str, files: FileFinder | None) -> ImportedHistory | None:
    """Parse and read a history export (worker thread); None when it is something else.
    ``files`` finds the export's images and files (its folder or its zip)."""
    if not data.strip():
        raise NotAConversation("the file is empty")
    refuse_binary(data)
    text = decode(data)
    if looks_like_markdown(text):
        return None
    try:
        parsed = _parse_gently(text)
    except RecursionError as exc:
        raise NotAConversation("its JSON is nested too deeply") from exc
    return read_history(parsed, files)


_SPACE = re.compile(r"[ \t\n\r]*")


def _parse_gently(text: str) -> Any:
    """``json.loads``, but a top-level list item by item.

    ``json.loads`` holds the GIL for the whole text (0.2-0.5 s for a 20 MB
    export: the window would freeze that long); one item at a time, the
    window's thread runs between items. Anything else, and any error, goes to
    ``parse_json`` (whose refusal says what is wrong).
    """
    i = _SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("[", i):
        return parse_json(text)
    decoder = json.JSONDecoder()
    items: list[Any] = []
    try:
        i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
        if text.startswith("]", i):
            i += 1
        else:
            while True:
                item, i = decoder.raw_decode(text, i)
                items.append(item)
                i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
                if text.startswith(",", i):
                    i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
                elif text.startswith("]", i):
                    i += 1
                    break
                else:
                    return parse_json(text)
    except json.JSONDecodeError:
        return parse_json(text)
    if text[i:].strip():
        return parse_json(text)
    return items


def _new_chat(chat: HistoryChat, source: str) -> NewChat:
    title = (chat.title or "").strip() or imported_title(chat.turns)
    branches = [NewBranch(b.after, b.turns, messages=message_count(b.turns))
                for b in chat.branches]
    return NewChat(title, chat.turns, source, chat.source_id, chat.system,
                   created_at=chat.created_at, updated_at=chat.updated_at, branches=branches,
                   messages=message_count(chat.turns))


def message_count(turns: Sequence[Turn]) -> int:
    """How many messages a person sees in ``turns``: each user message, and each reply
    once however many tool calls it made (its tool results and the turns after them,
    until the next user message, are the same reply, as an export keeps them)."""
    count = 0
    replying = False
    for turn in turns:
        if turn.role == "assistant":
            count += 0 if replying else 1
            replying = True
        elif turn.blocks and all(isinstance(b, ToolResultBlock) for b in turn.blocks):
            count += 0 if replying else 1
        else:
            count += 1
            replying = False
    return count
