"""Which pieces a transcript row is made of.

:class:`SpecBuilder` reads a node's blocks and returns its pieces in order
(:class:`Spec`): markdown chunks, code blocks drawn in parts, fold lines for
tool calls and thinking (with their bodies when unfolded), thumbnails, the
"Stopped — reply incomplete" mark, the muted "Answered by <model>" line under a
reply written by a model other than the chat's, the note before the first turn the
model still sees when no summary could be made. Where they go is
``parley.gui.transcript.layout``'s job.
"""

from __future__ import annotations

import html
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from parley.core.attachments.files import parse_text_file, size_text
from parley.core.chat.unfinished import FAILED_WHY as _FAILED_WHY
from parley.core.chat.unfinished import failure_why
from parley.core.content import (
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)
from parley.core.mcp.names import display_name
from parley.core.visible import escape_invisible
from parley.core.wire import STOPPED_NOTE
from parley.gui.text.long_text import (
    breakable,
    earlier_note,
    folded_note,
    shown_part,
    shown_text_after,
)
from parley.gui.text.markdown import CodeBlock, parse_fence
from parley.gui.text.markdown_blocks import split_blocks, split_blocks_kept
from parley.gui.transcript.pieces import (
    Piece,
    PieceCache,
    icon_html,
    result_status,
    result_text,
    tool_args_summary,
    tool_input_text,
)
from parley.gui.transcript.rows import Node, Transcript, card_count, summary_block

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen

CODE_GROUP = 40  # lines per part of a code block (a streamed block re-renders its last part)
SPLIT_MEMO = 64  # text blocks whose markdown split and pieces are remembered (streaming)
CHUNK_MEMO = 1000  # markdown chunks whose pieces are remembered (streaming)
#: While a reply is written, a last chunk longer than this (characters; one paragraph or
#: list with no blank line) is shown in parts cut at a line break after as many: only
#: its last part is made again on each update. Once written it is made whole.
LIVE_PART_CHARS = 2_000
RESUME_HREF = "parley:resume"
CONTINUE_HREF = "parley:continue"
REGENERATE_HREF = "parley:regenerate"
REGENERATE_WITH_HREF = "parley:regenerate-with"
REGENERATE_SEVERAL_HREF = "parley:regenerate-several"  # Ask several models (issue 34)
#: ‹ n/m › under a message with siblings (an edit's, a regeneration's): the previous /
#: next sibling's branch (``parley.core.branches``).
BRANCH_PREV_HREF = "parley:branch-prev"
BRANCH_NEXT_HREF = "parley:branch-next"
#: The size of the ‹ › glyphs (pt), and the smallest click target they make (px).
ARROW_PT = 17
BRANCH_TARGET_PX = 24
CARD_FOLD = "card"
#: "Try compacting again" on the note of turns the model no longer sees.
COMPACT_AGAIN_HREF = "parley:compact-again"
CARD_MORE_HREF = "parley:card-more"  # an open card's items not read: read the next page
CARD_MORE = "Show more"
#: Under a huge text shown folded (``parley.gui.text.long_text``): its next part in
#: place of the one shown ("parley:text-more:<block index>"); above a later part: the
#: part before it.
TEXT_MORE_HREF = "parley:text-more:"
TEXT_EARLIER_HREF = "parley:text-earlier:"
TEXT_MORE = "Show more"
TEXT_EARLIER = "Show earlier"
COMPACT_AGAIN = "Try compacting again"
#: The note's words (``parley.core.compaction.unseen``): how many turns, and why.
UNSEEN_LINE = "The model no longer sees the {n} earlier turns above"
UNSEEN_LINE_ONE = "The model no longer sees the earlier turn above"
UNSEEN_WHY = {
    "summary-refused": "No usable summary of them came from the summary model.",
    "summary-failed": "The request for a summary of them failed.",
    "waiting": "A summary was refused a moment ago; Parley waits a little before asking "
               "again.",
}
CODE_KINDS = ("codehead", "code")
ANSWERED_BY = "Answered by {name}"
#: A thinking block's fold line while the model writes it, and once it is done.
THINKING_LIVE = "Thinking…"
THINKING_DONE = "Thought"

#: ``provider:model`` of a reply -> the display name to show under it, or None for no
#: The marks of a message not in sessions.db yet (``SpecBuilder.save_marks``).
SAVING_TEXT = "Saving…"
#: Under a reply stopped with Esc (and one failed before Parley kept why: ``Turn.failure``).
STOPPED_MARK = "Stopped — reply incomplete"
#: Under a reply a failure cut off (``Turn.failure``: its cause, kept with it), and under
#: one that Continue took up.
FAILED_MARK = "Cut off — {why} · reply incomplete"
FAILED_CONTINUED_MARK = "Cut off — {why} · continued below"
#: ``Turn.failure`` -> the few words of :data:`FAILED_MARK` saying why (the exports say
#: the same: ``parley.core.chat.unfinished``).
FAILED_WHY = _FAILED_WHY
#: Under a stopped reply that Continue took up (the continuation follows below it), and
#: under one cut off by Parley's end that Continue took up: still "cut off", not "stopped"
#: (the person did not stop it).
CONTINUED_MARK = "Stopped — continued below"
CUT_OFF_CONTINUED_MARK = "Cut off when Parley closed — continued below"
#: What Continue sends under a reply stopped (or cut at the output limit): the model
#: reads its partial reply and goes on from there (``parley.core.wire`` rule 1).
CONTINUE_MESSAGE = "Continue from where you stopped."
#: The fold line standing for Continue's message between a stopped reply and its
#: continuation (no bubble: the two parts read as one reply); unfolded, it shows the
#: words the model was sent (:func:`continue_request`).
CONTINUED_LINE = "Continued — Parley asked the model to go on"
CONTINUED_FOLD = "continued"
CONTINUED_SENT = "The words the model was sent:"
CUT_OFF_MARK = "Cut off — Parley closed before the reply finished"
#: Under a reply another computer's Parley is still writing (``Turn.writing_elsewhere``).
ELSEWHERE_MARK = "Still being written on another computer…"
#: Under a complete reply that stopped at the model's output limit (``Turn.stop_reason``).
LENGTH_MARK = "Stopped at the length limit"
#: Tool call statuses shown as the app's icons (``resources/icons``).
STATUS_ICONS = ("check", "cross")
UNSAVED_TEXT = "Not saved yet — Parley keeps trying"  # after a warning icon
#: line (the chat's own model). The window sets it (``SpecBuilder.answered_by``).
ModelNamer = Callable[[str], str | None]


def _no_names(_ref: str) -> str | None:
    return None


#: Takes a tool call's wire name (``parley.core.mcp.names.wire_name``) and returns the
#: (server, tool) it stands for, or None when unknown (a label falls back to the wire
#: name). The window sets it (``SpecBuilder.tool_names``).
ToolNamer = Callable[[str], "tuple[str, str] | None"]


def _no_tool_names(_name: str) -> tuple[str, str] | None:
    return None


def live_parts(chunk: str) -> list[str]:
    """``chunk`` cut at the first line break after every :data:`LIVE_PART_CHARS`
    characters (a cut depends only on the text before it: the parts stay as they are
    while the chunk grows)."""
    parts: list[str] = []
    start = 0
    while len(chunk) - start > LIVE_PART_CHARS:
        cut = chunk.find("\n", start + LIVE_PART_CHARS)
        if cut < 0 or cut == len(chunk) - 1:
            break
        parts.append(chunk[start : cut + 1])
        start = cut + 1
    parts.append(chunk[start:])
    return parts


@dataclass(slots=True, eq=False)
class _TextMemo:
    """What a text block showed last (:meth:`SpecBuilder.text_specs`): a grown text reuses
    its leading pieces as they are (the same :class:`Spec` objects, in one list slice).

    Attributes:
        raw: the block's text.
        shown: what of it is shown (``parley.gui.text.long_text.shown_text``).
        hidden: characters of ``raw`` not shown.
        body: the pieces are an unfolded body (thinking).
        chunks: the markdown chunks of ``shown``.
        specs: the pieces of those chunks, in order.
        ends: ``len`` of ``specs`` after each chunk (``ends[i]``: pieces of chunks[:i+1]).
        parted: the last chunk's pieces are those of its parts (:data:`LIVE_PART_CHARS`).
        start: the first character of ``raw`` shown (a later part of a huge text).
    """

    raw: str
    shown: str
    hidden: int
    body: bool
    chunks: list[str]
    specs: list[Spec]
    ends: list[int]
    parted: bool = False
    start: int = 0


@dataclass(slots=True)
class Spec:
    """One piece of a row before it is placed.

    Attributes:
        piece: the rendered piece.
        kind: ``text`` | ``fold`` | ``body`` | ``mark`` | ``media`` | ``caption`` |
            ``codehead`` | ``code``.
        fold_key: for fold lines: the fold a click toggles.
        muted: painted in the muted colour (thinking).
        bar: an unfolded body, drawn right of a vertical rule.
        copy: part of "Copy message".
        clear: (width, height) px kept clear at the piece's right, its height at least
            that: the message's buttons float there (``actions_row``), over no text.
        joined: it goes on the paragraph of the piece above (a part of a long paragraph
            being written, :func:`live_parts`): no gap between them.
    """

    piece: Piece
    kind: str
    fold_key: str | None = None
    muted: bool = False
    bar: bool = False
    copy: bool = False
    clear: tuple[int, int] = (0, 0)
    joined: bool = False


#: The message's buttons (``actions_row.MessageActions``), as the layout keeps room for
#: them: each button's width, the frame and inset beside them, their height (px), plus
#: the inset under them; ``tests/gui/test_narrow_window.py`` checks them against the widget.
ACTION_BUTTON_PX = 28
ACTIONS_EDGE_PX = 16
ACTIONS_HEIGHT_PX = 30
#: px between the buttons and the message column's right edge (and the row's bottom: half).
ACTIONS_INSET = 8


class SpecBuilder:
    """Says which pieces a row is made of, with pieces from a :class:`PieceCache`."""

    def __init__(self, cache: PieceCache) -> None:
        self.cache = cache
        #: Names the model of a reply written by another model than the chat's (see
        #: :data:`ModelNamer`); by default no reply is named.
        self.answered_by: ModelNamer = _no_names
        #: Names any model: a reply with siblings is named whatever wrote it, so ‹ n/m ›
        #: over several models' answers says whose each is; set by the window.
        self.model_label: ModelNamer = _no_names
        #: The (server, tool) a tool call's wire name stands for, as configured (see
        #: :data:`ToolNamer`; ``parley.core.mcp.tools.McpTools.names_of``); set by the window.
        self.tool_names: ToolNamer = _no_tool_names
        #: turn id -> "saving" (a message waiting for the file's lock) or "unsaved" (a
        #: reply kept in memory until sessions.db takes it); set by the window.
        self.save_marks: dict[str, str] = {}
        #: turn id -> (sibling shown, siblings) of a message with siblings; set by the window.
        self.branches: dict[str, tuple[int, int]] = {}
        # What each recent text block showed: (turn id, block index) -> its memo.
        self._texts: OrderedDict[tuple[str, int], _TextMemo] = OrderedDict()
        #: ``time.perf_counter()`` after which a text shown before renders no more new
        #: chunks in this row (the rest in a later layout: :attr:`partial`); None: all.
        self.deadline: float | None = None
        #: The last row's pieces stop before the end of a text (the deadline passed).
        self.partial = False
        # The pieces of recent markdown chunks: (chunk, body) -> specs (see _chunk_specs).
        self._chunk_memo: OrderedDict[tuple[str, bool], tuple[Spec, ...]] = OrderedDict()

    def forget_code(self, languages: list[str]) -> None:
        """Make the code blocks in ``languages`` again (shown plain while their lexers
        were not made): each text block shown keeps its pieces before the first such
        block, the chunks' memo forgets those blocks."""
        names = {language.strip().lower() for language in languages}

        def in_them(chunk: str) -> bool:
            fence = parse_fence(chunk)
            return fence is not None and fence.language.strip().lower() in names

        for memo in self._texts.values():
            first = next((i for i, chunk in enumerate(memo.chunks[: len(memo.ends)])
                          if in_them(chunk)), None)
            if first is not None:
                memo.ends = memo.ends[:first]
                memo.specs = memo.specs[: memo.ends[-1] if first else 0]
        for key in [key for key in self._chunk_memo if in_them(key[0])]:
            del self._chunk_memo[key]

    def text_specs(self, key: str, index: int, text: str, *, body: bool = False,
                   markdown: bool = True, live: bool = False,
                   start: int = 0) -> tuple[list[Spec], int]:
        """The pieces of a text block's markdown (or plain text), and how many characters
        of it are not shown (a huge text is shown folded: ``long_text.shown_text``).

        A text that grew at its end (a reply streaming) reuses what its earlier text
        showed: the break chances up to its last space, the markdown chunks before the
        last one or two, and their pieces, in one slice of the list made before. The cost
        of an update follows what is new, not the length of the reply.

        Args:
            key: the turn's id.
            index: the block's index in the turn.
            text: the block's whole text.
            body: pieces of an unfolded body (thinking: muted, with a rule).
            markdown: False for text shown verbatim (a user's message).
            live: the text is being written: a long last chunk is shown in parts.
            start: of a huge text, the first character shown (a later part of it:
                ``long_text.shown_part``); 0 for its start.

        Returns:
            ``(specs, hidden)``: a new list (the caller may extend it), and the
            characters not shown after what is shown.
        """
        memo_key = (key, index)
        old = self._texts.get(memo_key)
        if old is not None and (old.body != body or bool(old.chunks) != markdown
                                or old.start != start):
            old = None
        if start:
            shown, _before, hidden = shown_part(text, start)
        else:
            shown, hidden = shown_text_after(
                None if old is None else (old.raw, old.shown, old.hidden), text)
        if not markdown:
            specs = [Spec(self.cache.plain(shown), "text", copy=True)] if shown else []
            memo = _TextMemo(text, shown, hidden, body, [], specs, [], start=start)
        else:
            chunks, kept = split_blocks_kept(
                None if old is None else (old.shown, old.chunks), shown)
            # Not past what it showed (in part: a deadline), nor its last chunk in parts.
            kept = 0 if old is None else min(kept, len(old.ends) - (1 if old.parted else 0))
            if old is not None and kept:
                specs, ends = old.specs[: old.ends[kept - 1]], old.ends[:kept]
            else:
                specs, ends = [], []
            # A text shown before that grew by more than can be made in time (a fast
            # stream's updates bunched while the row was laid out less often): the
            # rest of it in the next layouts. A text shown for the first time, whole; but
            # a later part of a huge text (Show more) in steps.
            deadline = self.deadline if old is not None or start else None
            parted = False
            for n in range(kept, len(chunks)):
                chunk = chunks[n]
                if deadline is not None and time.perf_counter() > deadline:
                    self.partial = True
                    break
                if live and n == len(chunks) - 1 and len(chunk) > LIVE_PART_CHARS \
                        and parse_fence(chunk) is None:
                    parted = True
                    for k, part in enumerate(live_parts(chunk)):
                        if part.strip():
                            made = self._chunk_specs(part, body)
                            if k and made:  # it goes on the paragraph above: no gap
                                made = (replace(made[0], joined=True), *made[1:])
                            specs.extend(made)
                elif chunk.strip():
                    specs.extend(self._chunk_specs(chunk, body))
                ends.append(len(specs))
            memo = _TextMemo(text, shown, hidden, body, chunks, specs, ends, parted, start)
        self._texts[memo_key] = memo
        self._texts.move_to_end(memo_key)
        if len(self._texts) > SPLIT_MEMO:
            self._texts.popitem(last=False)
        return list(memo.specs), hidden

    # -- what a row holds ---------------------------------------------------
    def specs(
        self, node: Node, transcript: Transcript, is_last: bool, idle: bool = False
    ) -> list[Spec]:
        """The pieces of a row, top to bottom.

        Args:
            node: the row.
            transcript: every row (tool results are shown with their calls).
            is_last: the transcript's last row (Resume, running tool calls).
            idle: no reply is being written in this chat: the last reply
                offers Regenerate.
        """
        if node.kind == "card":
            return self._card_specs(node)
        if node.kind == "unseen":
            return self._unseen_specs(transcript.unseen)
        turn = node.turn
        sent = continue_request(turn, transcript)
        if sent is not None:
            return self._continued_specs(node, sent)
        out: list[Spec] = []
        writing = is_last and not idle and not turn.aborted and turn.role == "assistant"
        for i, block in enumerate(turn.blocks):
            live = writing and i == len(turn.blocks) - 1  # the block being written now
            self._block_specs(out, node, transcript, i, block, is_last, live)
        if turn.role == "assistant" and not out and not turn.aborted:
            out.append(Spec(self.cache.line("typing", self._muted("…")), "mark"))
        content_end = len(out)
        if turn.role == "assistant" and turn.model:
            name = self.answered_by(turn.model) or (
                self.model_label(turn.model) if node.key in self.branches else None)
            if name:
                text = self._muted(ANSWERED_BY.format(name=name))
                out.append(Spec(self.cache.line(("answered-by", name), text), "mark"))
        mark = self.save_marks.get(node.key)
        if turn.aborted:
            out.append(self._aborted_spec(turn, resumable=is_last and mark is None,
                                          continued=not is_last
                                          and _continued(turn, transcript)))
        elif turn.role == "assistant" and turn.stop_reason == "max_tokens":
            out.append(self._length_spec(continuable=is_last and idle and mark is None))
        if not turn.aborted and is_last and idle and turn.role == "assistant" and mark is None:
            buttons = 3 + (2 if node.key in self.branches else 0) + \
                (1 if turn.stop_reason == "max_tokens" else 0)
            out.append(self._regenerate_spec(buttons))
        if mark is not None:
            out.append(self._save_spec(mark))
        # ‹ n/m › right under the message, before its marks and links, on every message
        # alike (a user's bubble, a reply).
        shown = self.branches.get(node.key) if node.kind == "turn" else None
        if shown is not None:
            out.insert(content_end, self._branches_spec(*shown))
        return out

    def _branches_spec(self, index: int, total: int) -> Spec:
        """‹ n/m ›: which of the message's siblings is shown, with links to the others."""
        muted = self.cache.colors.muted.name()

        # Each arrow is a large glyph padded on both sides inside its link: a click
        # target of at least ~24 px each way (BRANCH_TARGET_PX), not a 5 px glyph.
        def arrow(glyph: str, href: str, live: bool) -> str:
            body = f'&nbsp;&nbsp;<span style="font-size:{ARROW_PT}pt">{glyph}</span>&nbsp;&nbsp;'
            if live:
                return f'<a href="{href}" style="text-decoration:none"><b>{body}</b></a>'
            return f'<span style="color:{muted}">{body}</span>'

        text = (f'{arrow("‹", BRANCH_PREV_HREF, index > 1)}'
                f'<span style="color:{muted}">{index}/{total}</span>'
                f'{arrow("›", BRANCH_NEXT_HREF, index < total)}')
        return Spec(self.cache.line(("branches", index, total), text), "mark")

    def _save_spec(self, mark: str) -> Spec:
        if mark == "saving":
            text = self._muted(SAVING_TEXT)
        else:
            warn = self.cache.colors.warn_fg.name()
            text = (f'{icon_html("warning", warn)}&nbsp;'
                    f'<span style="color:{warn}">{UNSAVED_TEXT}</span>')
        return Spec(self.cache.line(("save", mark), text), "mark")

    def _block_specs(
        self, out: list[Spec], node: Node, tr: Transcript, i: int, block: object, last: bool,
        live: bool = False,
    ) -> None:
        """The pieces of block ``i``; ``live``: it is being written now (a thinking
        block reads "Thinking…" then, "Thought" once it is done)."""
        cache = self.cache
        user = node.turn.role == "user"
        if isinstance(block, TextBlock):
            if block.origin is not None and block.origin.kind != "user":
                caption = cache.line(("origin", block.origin), self._origin(block))
                out.append(Spec(caption, "caption"))
            if user and self._file_specs(out, node, i, block):
                return
            # Huge texts and long lines are shown folded (gui.text.long_text), a part at
            # a time: "Show more" / "Show earlier".
            start = node.parts.get(i, 0) if node.parts else 0
            specs, hidden = self.text_specs(node.key, i, block.text, live=live,
                                            markdown=not (user or block.recovered),
                                            start=start)
            if start:
                out.append(self._part_note(earlier_note(start), TEXT_EARLIER_HREF, i,
                                           TEXT_EARLIER))
            out.extend(specs)
            if hidden:
                out.append(self._part_note(folded_note(hidden), TEXT_MORE_HREF, i, TEXT_MORE))
        elif isinstance(block, ThinkingBlock):
            key = f"think:{i}"
            opened = key in node.open_folds
            label = THINKING_LIVE if live else THINKING_DONE
            out.append(Spec(self._fold_line(key, opened, "thinking", label, ""), "fold", key))
            if opened:
                specs, hidden = self.text_specs(node.key, i, block.thinking, body=True,
                                                live=live)
                out.extend(specs)
                if hidden:
                    note = self._muted(html.escape(folded_note(hidden)))
                    out.append(Spec(self.cache.line(("folded", hidden), note), "mark"))
        elif isinstance(block, ToolUseBlock):
            self._tool_specs(out, node, block, tr.result_for(block.id), last)
        elif isinstance(block, ToolResultBlock):
            if tr.owns(block.tool_use_id):
                return  # shown in the fold of its tool_use
            key = f"result:{block.tool_use_id}"
            opened = key in node.open_folds
            word = "Tool error" if block.is_error else "Tool result"
            out.append(Spec(self._fold_line(key, opened, "tool", word, ""), "fold", key))
            if opened:
                self._result_specs(out, block)
        elif isinstance(block, ImageBlock):
            out.append(Spec(cache.thumbnail(block), "media"))
        elif isinstance(block, DocumentBlock):
            out.append(Spec(cache.document_block(block), "media"))
        elif isinstance(block, UnknownBlock):
            text = self._muted(f"[content of type '{block.type}' is not shown]")
            out.append(Spec(cache.line(("unknown", block.type), text), "caption"))

    def _part_note(self, words: str, href: str, i: int, link: str) -> Spec:
        """A muted line over or under a part of a huge text, with its link."""
        text = f'{self._muted(html.escape(words) + " · ")}<a href="{href}{i}">{link}</a>'
        return Spec(self.cache.line(("part", text), text), "mark")

    def _tool_specs(
        self,
        out: list[Spec],
        node: Node,
        block: ToolUseBlock,
        result: ToolResultBlock | None,
        last: bool,
    ) -> None:
        key = f"tool:{block.id}"
        opened = key in node.open_folds
        symbol, _ = result_status(result, running=last and not node.turn.aborted)
        args = html.escape(tool_args_summary(block.input))
        label = f"<b>{html.escape(self.tool_label(block.name))}</b>({args})"
        out.append(Spec(self._fold_line(key, opened, "tool", label, symbol, raw=True), "fold", key))
        if not opened:
            return
        self._code_specs(out, CodeBlock("json", tool_input_text(block)), "input", body=True)
        if result is not None:
            self._result_specs(out, result)

    def tool_label(self, name: str) -> str:
        """A tool call's name for its fold line: ``server › tool`` with the names as
        configured and their invisible characters written out (``<U+202E>``, as the
        approval dialog shows them: ``parley.core.visible``), else the wire name's
        ``parley.core.mcp.names.display_name``."""
        names = self.tool_names(name)
        if names is None:
            return escape_invisible(display_name(name))
        server, tool = names
        return f"{escape_invisible(server)} › {escape_invisible(tool)}"

    def _result_specs(self, out: list[Spec], result: ToolResultBlock) -> None:
        text = result_text(result.content)
        if text or not result.content:
            label = "error" if result.is_error else "output"
            self._code_specs(out, CodeBlock("text", text), label, body=True)
        for part in result.content:
            if isinstance(part, ImageBlock):
                out.append(Spec(self.cache.thumbnail(part), "body", bar=True))

    def _chunk_specs(self, chunk: str, body: bool) -> tuple[Spec, ...]:
        """The pieces of one markdown chunk, remembered: a streaming reply's finished
        chunks (a code block's lines, cut and highlighted) are not gone over again on
        each update, only its last one."""
        memo_key = (chunk, body)
        specs = self._chunk_memo.get(memo_key)
        if specs is not None:
            self._chunk_memo.move_to_end(memo_key)
            return specs
        out: list[Spec] = []
        fence = parse_fence(chunk)
        if fence is not None:
            self._code_specs(out, fence, fence.language or "code", body=body)
        elif body:
            out.append(Spec(self.cache.markdown(chunk), "body", muted=True, bar=True))
        else:
            out.append(Spec(self.cache.markdown(chunk), "text", copy=True))
        specs = self._chunk_memo[memo_key] = tuple(out)
        if len(self._chunk_memo) > CHUNK_MEMO:
            self._chunk_memo.popitem(last=False)
        return specs

    def _code_specs(self, out: list[Spec], block: CodeBlock, label: str, body: bool) -> None:
        """A code block as a label bar (language, Copy) and parts of CODE_GROUP lines."""
        cache = self.cache
        out.append(Spec(cache.code_head(label, block), "codehead", bar=body))
        lines = block.code.splitlines(keepends=True) or [""]
        for start in range(0, len(lines), CODE_GROUP):
            part = breakable("".join(lines[start : start + CODE_GROUP]))
            out.append(Spec(cache.code_lines(part, block.language), "code", bar=body,
                             copy=not body))

    def _card_specs(self, node: Node) -> list[Spec]:
        block = summary_block(node.turn)
        opened = node.expanded
        count = card_count(node)
        model = (node.turn.model or "").split(":", 1)[-1]
        # messages, as a person counts them (and as the toast and the export say)
        label = f"Summarized {count:,} message{'s' if count != 1 else ''}"
        if model:
            label += f" · {html.escape(model)}"
        if block is not None and block.legacy:
            label += self._muted(" · earlier messages not kept")  # a v3 app deleted them
        elif opened and node.missing:
            # its oldest entries (turns, or the summary it folded in), not read yet: "Show
            # more" reads them
            n = node.missing
            more = ((f"{n:,} older entr{'y' if n == 1 else 'ies'} not shown yet")
                    if node.paged else "older entries not shown yet")
            label += self._muted(f" · originals kept · {more} · ")
            label += f'<a href="{CARD_MORE_HREF}">{CARD_MORE}</a>'
        else:
            label += self._muted(" · originals kept")
        out = [Spec(self._fold_line(CARD_FOLD, opened, "summary", label, "", raw=True), "fold",
                     CARD_FOLD)]
        if opened and block is not None:
            for chunk in split_blocks(block.summary):
                if chunk.strip():
                    out.extend(self._chunk_specs(chunk, False))
        return out

    def _unseen_specs(self, unseen: Unseen | None) -> list[Spec]:
        """The note before the first turn the model still sees: how many earlier turns it
        no longer sees, why (one line), and "Try compacting again"."""
        if unseen is None:
            return []
        muted = self.cache.colors.muted.name()
        head = (f'<span style="color:{muted}">{icon_html("summary", muted)}&nbsp;</span>'
                f'{html.escape(unseen_line(unseen))}')
        why = html.escape(unseen_why(unseen))
        tail = (f'<span style="color:{muted}">{why}&nbsp;&nbsp;·&nbsp;&nbsp;</span>'
                f'<a href="{COMPACT_AGAIN_HREF}">{COMPACT_AGAIN}</a>')
        return [Spec(self.cache.line(("unseen", head), head, small=False), "mark"),
                Spec(self.cache.line(("unseen-why", tail), tail), "mark")]

    def _file_specs(self, out: list[Spec], node: Node, i: int, block: TextBlock) -> bool:
        """A text file the person attached: a chip that unfolds to its text. False when
        the block is not an attached file (``parley.core.attachments.files.text_file_block``)."""
        parsed = parse_text_file(block)
        if parsed is None:
            return False
        name, text = parsed
        key = f"file:{i}"
        opened = key in node.open_folds
        lines = text.count("\n")
        size = size_text(len(text.encode("utf-8")))
        detail = f"{lines:,} line{'s' if lines != 1 else ''} · {size}" if text.strip() \
            else "empty"  # sent before empty files were refused (trial 16): not "1 line · 1 B"
        label = f"<b>{html.escape(name)}</b>" + self._muted(f" · {detail}")
        out.append(Spec(self._fold_line(key, opened, "file", label, "", raw=True), "fold", key))
        if opened:
            fence = parse_fence(block.text.split("\n", 1)[1])
            language = fence.language if fence is not None else ""
            self._code_specs(out, CodeBlock(language, text), name, body=True)
        return True

    def _continued_specs(self, node: Node, sent: str) -> list[Spec]:
        """Continue's message as a quiet fold line; unfolded, the words the model read."""
        opened = CONTINUED_FOLD in node.open_folds
        out = [Spec(self._fold_line(CONTINUED_FOLD, opened, "continue", CONTINUED_LINE, ""),
                    "fold", CONTINUED_FOLD, muted=True)]
        if opened:
            out.append(Spec(self.cache.line(("continued-sent",), self._muted(CONTINUED_SENT)),
                            "mark"))
            out.append(Spec(self.cache.plain(sent), "body", muted=True, bar=True, copy=True))
        return out

    def action_buttons(self, node: Node, is_last: bool) -> int:
        """How many of the message's buttons (``actions_row.BUTTONS``) may show on
        ``node``'s row at most, for the room the layout keeps for them: the note of turns
        not seen has one; every message copy and fork, ‹ › with siblings; a person's
        message Edit; the last reply Regenerate and Continue."""
        if node.kind == "unseen":
            return 1
        count = 2 + (2 if node.kind == "turn" and node.key in self.branches else 0)
        if node.kind != "turn":
            return count
        if node.turn.role == "user":
            return count + 1
        return count + (2 if is_last else 0)

    def _regenerate_spec(self, buttons: int = 3) -> Spec:
        """Regenerate's links under the last reply; the message's ``buttons`` (copy,
        regenerate, fork; ‹ ›, continue) float at their right: the links wrap before
        them in a narrow window (trial 16: they covered "with several models…")."""
        muted = self.cache.colors.muted.name()
        text = (f'<a href="{REGENERATE_HREF}">↻ Regenerate</a>'
                f'<span style="color:{muted}">&nbsp;&nbsp;·&nbsp;&nbsp;</span>'
                f'<a href="{REGENERATE_WITH_HREF}">with another model…</a>'
                f'<span style="color:{muted}">&nbsp;&nbsp;·&nbsp;&nbsp;</span>'
                f'<a href="{REGENERATE_SEVERAL_HREF}">with several models…</a>')
        clear = (buttons * ACTION_BUTTON_PX + ACTIONS_EDGE_PX, ACTIONS_HEIGHT_PX)
        return Spec(self.cache.line("regenerate", text), "mark", clear=clear)

    def _aborted_spec(self, turn: Turn, resumable: bool, continued: bool = False) -> Spec:
        """The mark under a stopped reply: Continue under the last one; a reply that
        Continue took up says so (its continuation is the reply below)."""
        if continued:
            text = self._muted(f"■ {aborted_mark(turn, continued=True)}")
            return Spec(self.cache.line(("aborted-continued", text), text), "mark")
        if turn.writing_elsewhere:  # in progress there: no Continue here, no warning
            text = self._muted(ELSEWHERE_MARK)
            return Spec(self.cache.line(("aborted-elsewhere",), text), "mark")
        warn = self.cache.colors.warn_fg.name()
        what = html.escape(aborted_mark(turn))
        text = f'<span style="color:{warn}">■ {what}</span>'
        if resumable:
            text += f'&nbsp;&nbsp;·&nbsp;&nbsp;<a href="{RESUME_HREF}"><b>Continue</b></a>'
        return Spec(self.cache.line(("aborted", resumable, what), text), "mark")

    def _length_spec(self, continuable: bool) -> Spec:
        """The mark under a reply cut at the output limit; Continue under the last one."""
        warn = self.cache.colors.warn_fg.name()
        text = f'<span style="color:{warn}">■ {LENGTH_MARK}</span>'
        if continuable:
            text += f'&nbsp;&nbsp;·&nbsp;&nbsp;<a href="{CONTINUE_HREF}"><b>Continue</b></a>'
        return Spec(self.cache.line(("length", continuable), text), "mark")

    def _fold_line(
        self, key: str, opened: bool, icon: str, label: str, status: str, raw: bool = False
    ) -> Piece:
        """A fold's line: its arrow, ``icon`` (a name in ``resources/icons``, drawn by the
        app: no font needs an emoji for it), ``label`` and ``status`` (``check`` /
        ``cross`` icons, else text)."""
        muted = self.cache.colors.muted.name()
        arrow = "▾" if opened else "▸"
        text = label if raw else html.escape(label)
        tail = ""
        if status:
            color = self._status_color(status)
            shown = icon_html(status, color) if status in STATUS_ICONS else status
            tail = f'&nbsp;&nbsp;<span style="color:{color}">{shown}</span>'
        body = (f'<span style="color:{muted}">{arrow}&nbsp;{icon_html(icon, muted)}&nbsp;</span>'
                f'{text}{tail}')
        return self.cache.line(("fold", key, opened, label, status), body)

    def _status_color(self, status: str) -> str:
        colors = self.cache.colors
        if status == "cross":
            return colors.error_fg.name()
        if status == "check":
            return "#3fb950" if colors.dark else "#1a7f37"
        return colors.muted.name()

    def _origin(self, block: TextBlock) -> str:
        o = block.origin
        assert o is not None
        bits = [o.kind if not o.source else f"via {o.source}"]
        if o.sender:
            bits.append(o.sender)
        return self._muted(" · ".join(bits))

    def _muted(self, text: str) -> str:
        return f'<span style="color:{self.cache.colors.muted.name()}">{html.escape(text)}</span>'


def aborted_mark(turn: Turn, *, continued: bool = False) -> str:
    """The words under an aborted reply (``continued``: Continue took it up): stopped with
    Esc (:data:`STOPPED_MARK`), cut off by Parley's end (:data:`CUT_OFF_MARK`) or by a
    failure, with its cause as kept with the reply (:data:`FAILED_MARK`, ``Turn.failure``:
    so it reads the same after a restart)."""
    why = failure_why(turn)
    if why is not None:
        return (FAILED_CONTINUED_MARK if continued else FAILED_MARK).format(why=why)
    if turn.cut_off:
        return CUT_OFF_CONTINUED_MARK if continued else CUT_OFF_MARK
    return CONTINUED_MARK if continued else STOPPED_MARK


def _continued(turn: Turn, transcript: Transcript) -> bool:
    """True when the turn after ``turn`` is Continue's message (:data:`CONTINUE_MESSAGE`)."""
    nxt = transcript.after(turn.id)
    return nxt is not None and nxt.role == "user" and nxt.text() == CONTINUE_MESSAGE


def is_continue_message(turn: Turn, before: Turn | None) -> bool:
    """True when ``turn`` is Continue's message (:data:`CONTINUE_MESSAGE`, sent by Parley
    after ``before``, a reply stopped or cut at the output limit): not the person's words,
    so it is never offered for editing."""
    return (turn.role == "user" and len(turn.blocks) == 1 and turn.text() == CONTINUE_MESSAGE
            and before is not None and before.role == "assistant"
            and (before.aborted or before.stop_reason == "max_tokens"))


def continue_request(turn: Turn, transcript: Transcript) -> str | None:
    """The words the model was sent for Continue's message, or None for any other turn.

    Continue's message (:data:`CONTINUE_MESSAGE`) right after a reply stopped or cut
    at the output limit is shown as a fold line, not as a message of the person's:
    the reply and its continuation read as one. After a stopped reply the model
    also read the note ``parley.core.wire`` puts before it (rule 1); that is part
    of what is shown unfolded.
    """
    if turn.role != "user" or len(turn.blocks) != 1 or turn.text() != CONTINUE_MESSAGE:
        return None
    before: Turn | None = None
    for t in transcript.turns:
        if t.id == turn.id:
            break
        before = t
    else:
        return None
    if before is None or before.role != "assistant":
        return None
    if before.aborted:
        return f"{STOPPED_NOTE}\n\n{CONTINUE_MESSAGE}" if before.blocks else CONTINUE_MESSAGE
    return CONTINUE_MESSAGE if before.stop_reason == "max_tokens" else None


def unseen_line(unseen: Unseen) -> str:
    """"The model no longer sees the N earlier turns above"."""
    n = unseen.hidden_turns
    return UNSEEN_LINE_ONE if n == 1 else UNSEEN_LINE.format(n=f"{n:,}")


def unseen_why(unseen: Unseen) -> str:
    """Why, in one line: the record's ``detail``, else the reason in words."""
    detail = " ".join(unseen.detail.split())
    if detail:
        return detail if detail.endswith((".", "!", "?")) else detail + "."
    return UNSEEN_WHY.get(unseen.reason, "")


def unseen_text(unseen: Unseen) -> str:
    """The note in words, for screen readers and copying."""
    return f"{unseen_line(unseen)}. {unseen_why(unseen)}".strip()
