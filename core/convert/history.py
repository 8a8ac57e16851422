"""Chat histories: many conversations in one file, each possibly a tree of branches.

The readers of ChatGPT's, Claude.ai's and Open WebUI's exports
(``parley.core.convert.chatgpt``, ``claude_ai``, ``open_webui``) turn each
conversation into a :class:`HistoryChat`: the branch the person last looked at
as the chat's turns (the path it shows), every other branch (an edited message,
another answer, a branch of a branch) as a :class:`HistoryBranch` continuing
from a turn of the chat or of an earlier branch — each message once, with its
parent, as the session's tree stores them (``parley.core.store.imports``). They
share the tree walk (:func:`branches`, :func:`chat_from_tree`) and
:func:`assemble`, which makes valid Parley turns out of a branch's messages:
consecutive messages of one side join into one turn, and every tool result is
paired with the tool call it answers (a call is made up when the export holds
a result without one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Literal, TypeAlias

from parley.core.content import (
    Block,
    TextBlock,
    ToolResultBlock,
    ToolResultPart,
    ToolUseBlock,
    Turn,
)
from parley.core.convert._common import short_hash

__all__ = [
    "HistoryBranch",
    "HistoryChat",
    "HistoryFormat",
    "ImportedHistory",
    "Notes",
    "Piece",
    "Result",
    "assemble",
    "branches",
    "chat_from_tree",
    "seconds_to_ms",
]

HistoryFormat: TypeAlias = Literal["chatgpt", "claude.ai", "open-webui"]

#: How each format is named to people.
FORMAT_NAMES: dict[str, str] = {
    "chatgpt": "ChatGPT export",
    "claude.ai": "Claude.ai export",
    "open-webui": "Open WebUI export",
    "parley": "Parley's JSON export",
    "markdown": "Parley's Markdown export",
    "anthropic": "Anthropic message list",
    "openai": "OpenAI message list",
}


@dataclass(frozen=True, slots=True)
class Result:
    """A tool's output before it is paired with its call (see :func:`assemble`).

    Attributes:
        name: the tool's name as the export gives it (None: unknown).
        parts: the output.
        is_error: the tool failed.
        call_id: the call it answers, when the export says so.
    """

    name: str | None
    parts: tuple[ToolResultPart, ...]
    is_error: bool = False
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Piece:
    """One message of an export as Parley content, before turns are assembled.

    Attributes:
        role: ``user`` or ``assistant`` (a tool's output is a user-side :class:`Result`).
        blocks: the content; user pieces may hold :class:`Result` items.
        created_at: epoch ms, or None when the export has no time.
        model: ``provider:model`` of an assistant message, when known.
        aborted: the message was stopped or cut off before it finished.
        cut_off: Parley's end cut it off (``Turn.cut_off``), when the export says so.
        stop_reason: ``Turn.stop_reason`` (a failure's ``"failed:<cause>"``), when the
            export says it.
    """

    role: Literal["user", "assistant"]
    blocks: tuple[Block | Result, ...]
    created_at: int | None = None
    model: str | None = None
    aborted: bool = False
    cut_off: bool = False
    stop_reason: str | None = None


@dataclass(slots=True)
class HistoryBranch:
    """Another branch of a conversation: its own turns, below a turn already read.

    Attributes:
        after: the id of the turn it continues from — a turn of the chat or of an
            earlier branch of the same chat; None when it starts with another
            first message (the very first message was edited).
        turns: its own turns (none of the chat's or an earlier branch's), oldest
            first; the first one's parent is ``after``, each next one's the one
            before it.
    """

    after: str | None
    turns: list[Turn]


@dataclass(slots=True)
class HistoryChat:
    """One conversation of a history export.

    Attributes:
        source_id: the export's conversation id (recognises a second import).
        title: the conversation's title, if any.
        created_at: epoch ms, if known.
        updated_at: epoch ms, if known.
        turns: the chat's turns (the branch last shown: the path the chat
            shows), oldest first.
        branches: the other branches, each after the turn it continues from.
        system: a system prompt the conversation carried, if any.

    Which model wrote a reply is on its turn (``Turn.model``); the chat's own
    model is left to the space's default (an export's model names are often
    not models an API serves, e.g. ``text-davinci-002-render-sha``).
    """

    source_id: str | None
    title: str | None
    created_at: int | None
    updated_at: int | None
    turns: list[Turn]
    branches: list[HistoryBranch] = field(default_factory=list)
    system: str | None = None


class Notes:
    """What an import could not carry: counted sentences and the files not included."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._missing: dict[tuple[str, str], None] = {}
        self._refused: dict[str, str] = {}

    def add(self, reason: str, n: int = 1) -> None:
        """Count ``reason`` (a sentence holding ``{n}``) ``n`` more times (0: nothing)."""
        if n <= 0:
            return
        self._counts[reason] = self._counts.get(reason, 0) + n

    def missing(self, name: str, kind: str = "file") -> None:
        """A file the export names but does not hold (counted once per name).

        Args:
            name: its name or asset id.
            kind: ``image`` or ``file``.
        """
        self._missing[(kind, name)] = None

    def refused(self, name: str, why: str) -> None:
        """A file the export holds but that was not read (counted once per name).

        Args:
            name: the file's name in the export.
            why: the reason, after "was not read: " ("it is a link to another file").
        """
        self._refused.setdefault(name, why)

    @property
    def missing_files(self) -> list[tuple[str, str]]:
        """(kind, name) of each file given to :meth:`missing`, first-seen order."""
        return list(self._missing)

    @property
    def refused_files(self) -> list[tuple[str, str]]:
        """(name, why) of each file given to :meth:`refused`, first-seen order."""
        return list(self._refused.items())

    def sentences(self) -> list[str]:
        """One sentence per reason, in first-seen order."""
        return [reason.format(n=n) for reason, n in self._counts.items()]


@dataclass(slots=True)
class ImportedHistory:
    """The result of reading a history export.

    Attributes:
        source_format: ``chatgpt`` | ``claude.ai`` | ``open-webui``.
        chats: the conversations, in the file's order (empty ones left out).
        lost: one sentence per kind of thing that could not be carried.
        missing_files: (``image`` | ``file``, name) of each file the export names
            but does not include.
        empty: conversations left out because they hold no message.
        refused_files: (name, why) of each file the export holds that was not read
            (a link, outside the export, too large, its bytes not what it claims).
    """

    source_format: HistoryFormat
    chats: list[HistoryChat]
    lost: list[str] = field(default_factory=list)
    missing_files: list[tuple[str, str]] = field(default_factory=list)
    empty: int = 0
    refused_files: list[tuple[str, str]] = field(default_factory=list)


def seconds_to_ms(value: object) -> int | None:
    """Epoch seconds (int, float or numeric text; ms when it is too large for seconds)
    or ISO 8601 text as epoch ms; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return _iso_ms(value)
    else:
        return None
    if number != number or number <= 0:  # NaN, zero or negative
        return None
    return int(number) if number > 1e11 else int(number * 1000)


def _iso_ms(text: str) -> int | None:
    from datetime import datetime

    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp() * 1000)


# --- the tree ------------------------------------------------------------------


def branches(
    parents: Mapping[str, str | None], current: str | None, order: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """The branch on ``current`` and every other branch of a message tree.

    Args:
        parents: node id → its parent's id (None or an unknown id: a root).
        current: the node the person last looked at; None or unknown: the
            last leaf in ``order``.
        order: every node id, oldest first (decides which leaf is "last" and
            the order of the other branches).

    Returns:
        (the path root → ``current`` as node ids, the paths root → leaf of
        every other leaf). A cycle in ``parents`` is cut where it closes.
    """
    has_child = {p for p in parents.values() if p is not None and p in parents}
    leaves = [n for n in order if n not in has_child]
    if current not in parents:
        current = leaves[-1] if leaves else (order[-1] if order else None)
    if current is None:
        return [], []
    main = _path(parents, current)
    on_main = set(main)
    others = [_path(parents, leaf) for leaf in leaves if leaf not in on_main]
    return main, others


def _path(parents: Mapping[str, str | None], node: str) -> list[str]:
    path: list[str] = []
    seen: set[str] = set()
    at: str | None = node
    while at is not None and at in parents and at not in seen:
        seen.add(at)
        path.append(at)
        at = parents[at]
    path.reverse()
    return path


# --- pieces → turns --------------------------------------------------------------


def assemble(pieces: Sequence[Piece]) -> list[Turn]:
    """Make turns out of a branch's messages.

    Consecutive pieces of one side join into one turn (the first one's time,
    the first known model). A :class:`Result` becomes a ``tool_result`` block
    answering the latest unanswered call of its name (else any unanswered call,
    else a call that is added to the reply before it, so the turns stay valid).

    Args:
        pieces: the branch's messages, oldest first.

    Returns:
        Turns alternating between user and assistant; times never decrease.
    """
    return _assemble(pieces, [""] * len(pieces))[0]


def _assemble(pieces: Sequence[Piece], sources: Sequence[str]
              ) -> tuple[list[Turn], list[tuple[str, ...]]]:
    """:func:`assemble`, also returning which messages (``sources``: each piece's
    message id) each turn was made from, in order."""
    turns: list[Turn] = []
    nodes: list[list[str]] = []
    open_calls: list[ToolUseBlock] = []
    last_time = 0
    for piece, source in zip(pieces, sources, strict=True):
        blocks: list[Block] = []
        for item in piece.blocks:
            if isinstance(item, Result):
                before = len(turns)
                blocks.append(_pair(item, open_calls, turns, piece))
                if len(turns) > before:  # a made-up call in a reply of its own
                    nodes.append([source])
            else:
                if isinstance(item, ToolUseBlock):
                    open_calls.append(item)
                blocks.append(item)
        if not blocks:
            continue
        when = max(piece.created_at or last_time, last_time)
        last_time = when
        prev = turns[-1] if turns else None
        if prev is not None and prev.role == piece.role:
            turns[-1] = Turn(prev.role, [*prev.blocks, *blocks], id=prev.id,
                             created_at=prev.created_at, aborted=prev.aborted or piece.aborted,
                             model=prev.model or piece.model,
                             cut_off=prev.cut_off or piece.cut_off,
                             stop_reason=prev.stop_reason or piece.stop_reason)
            if nodes[-1][-1] != source:
                nodes[-1].append(source)
        else:
            turns.append(Turn(piece.role, blocks, created_at=when or _now(),
                              aborted=piece.aborted, model=piece.model,
                              cut_off=piece.cut_off, stop_reason=piece.stop_reason))
            nodes.append([source])
    return [_results_first(t) for t in turns], [tuple(n) for n in nodes]


def _now() -> int:
    from parley.core.content import now_ms

    return now_ms()


def _pair(result: Result, open_calls: list[ToolUseBlock], turns: list[Turn],
          piece: Piece) -> ToolResultBlock:
    call = next((c for c in open_calls if result.call_id and c.id == result.call_id), None)
    if call is None:
        call = next((c for c in reversed(open_calls) if c.name == result.name), None)
    if call is None and open_calls:
        call = open_calls[-1]
    if call is None:
        call = ToolUseBlock(f"call_{short_hash(repr((len(turns), result.name, result.parts)))}",
                            _tool_name(result.name), {})
        if turns and turns[-1].role == "assistant":
            turns[-1] = turns[-1].with_blocks([*turns[-1].blocks, call])
        else:
            turns.append(Turn("assistant", [call], created_at=piece.created_at or _now()))
    else:
        open_calls.remove(call)
    return ToolResultBlock(call.id, result.parts, result.is_error)


def _tool_name(name: str | None) -> str:
    """A tool name the APIs accept (letters, digits, ``_`` and ``-``)."""
    clean = "".join(c if c.isalnum() or c in "_-" else "_" for c in (name or "tool"))
    return clean[:64] or "tool"


def _results_first(turn: Turn) -> Turn:
    """A user turn's tool results before its other blocks (as the APIs require)."""
    if turn.role != "user" or not any(isinstance(b, ToolResultBlock) for b in turn.blocks):
        return turn
    results = [b for b in turn.blocks if isinstance(b, ToolResultBlock)]
    rest = [b for b in turn.blocks if not isinstance(b, ToolResultBlock)]
    return turn.with_blocks([*results, *rest])


def tool_call(source_id: str, name: str | None, arguments: Mapping[str, object]) -> ToolUseBlock:
    """A tool call with an id made from the export's message id (the same on every branch)."""
    return ToolUseBlock(f"call_{short_hash(source_id)}", _tool_name(name), dict(arguments))


def text_parts(text: str) -> tuple[ToolResultPart, ...]:
    """A tool output's text as result parts (none for empty text)."""
    return (TextBlock(text),) if text else ()


# --- a tree → a chat and its branches ----------------------------------------------


def chat_from_tree(
    parents: Mapping[str, str | None],
    current: str | None,
    order: Sequence[str],
    pieces_of: Callable[[Sequence[str]], list[Piece]],
) -> tuple[list[Turn], list[HistoryBranch]]:
    """The chat's turns (branch on ``current``) and its other branches, each message once.

    Every branch is assembled root → leaf (:func:`assemble`, so its turns are valid
    on their own); a turn made from the same messages, below the same turn, with the
    same content as one already read is that turn, so a branch keeps only what it
    adds and says which turn it continues from. A branch of a branch continues from
    the earlier branch's turn. (A reply joined from several messages of one side
    that the export splits below its first message gives one turn per branch,
    each holding the shared messages.)

    Args:
        parents, current, order: the tree, as for :func:`branches`.
        pieces_of: converts a branch (message ids root → leaf) to pieces; the
            pieces of a branch are those of its messages one after another
            (``pieces_of([a, b]) == pieces_of([a]) + pieces_of([b])``).

    Returns:
        (turns, branches). A branch holding nothing the chat or an earlier branch
        does not already hold (e.g. it ends in a hidden message) is left out.
    """
    main_path, other_paths = branches(parents, current, order)
    cache: dict[str, list[Piece]] = {}

    def tagged(path: Sequence[str]) -> tuple[list[Turn], list[tuple[str, ...]]]:
        pieces: list[Piece] = []
        sources: list[str] = []
        for node in path:
            if node not in cache:
                cache[node] = pieces_of([node])
            pieces.extend(cache[node])
            sources.extend([node] * len(cache[node]))
        return _assemble(pieces, sources)

    #: (the parent turn's id, the messages a turn was made from) → the turns made so.
    known: dict[tuple[str | None, tuple[str, ...]], list[Turn]] = {}

    def place(turn: Turn, parent: str | None, nodes: tuple[str, ...]) -> Turn | None:
        """The turn already read that ``turn`` is, or None after recording it as new."""
        same = known.setdefault((parent, nodes), [])
        found = next((t for t in same if t.role == turn.role and t.blocks == turn.blocks), None)
        if found is None:
            same.append(turn)
        return found

    turns, nodes = tagged(main_path)
    parent: str | None = None
    for turn, made_of in zip(turns, nodes, strict=True):
        place(turn, parent, made_of)
        parent = turn.id
    out: list[HistoryBranch] = []
    for path in other_paths:
        parent = None
        branch: HistoryBranch | None = None
        for turn, made_of in zip(*tagged(path), strict=True):
            found = place(turn, parent, made_of) if branch is None else None
            if found is not None:
                parent = found.id
                continue
            if branch is None:
                branch = HistoryBranch(parent, [])
                out.append(branch)
            else:
                place(turn, parent, made_of)
            branch.turns.append(turn)
            parent = turn.id
    return turns, out
