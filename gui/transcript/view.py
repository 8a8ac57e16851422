"""The transcript: the middle of the window, showing one conversation.

:class:`TranscriptView` wraps the list (``.list_view``) with the public API
the main window uses: replace or stream turns, show an inline error with a
Retry button, scroll to a search result. It turns clicks into signals — links
are only *emitted* (``linkActivated``, safe schemes only); the window decides to
open them, e.g. with ``QDesktopServices.openUrl``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QPoint, QRect, Qt, QUrl, Signal
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from parley.core.content import TextBlock, ThinkingBlock, ToolUseBlock, Turn
from parley.gui.look.popup import popup
from parley.gui.look.theme import transcript_colors
from parley.gui.text.long_text import next_part, previous_part, unbreak
from parley.gui.text.markdown import COPY_PREFIX, IMAGE_PREFIX, is_safe_url
from parley.gui.transcript.actions_row import MessageActions
from parley.gui.transcript.jump import JumpButton
from parley.gui.transcript.layout import Hit, Placed, RowLayout, indexed_target
from parley.gui.transcript.listview import TranscriptListView
from parley.gui.transcript.menu import message_menu, models_menu
from parley.gui.transcript.model import TranscriptModel
from parley.gui.transcript.parts import more_of, parts_for
from parley.gui.transcript.pieces import MEDIA_PREFIX, result_text, tool_input_text
from parley.gui.transcript.rows import Node, summary_block
from parley.gui.transcript.source import TurnList, TurnSource
from parley.gui.transcript.specs import (
    BRANCH_NEXT_HREF,
    BRANCH_PREV_HREF,
    CARD_FOLD,
    CARD_MORE_HREF,
    COMPACT_AGAIN_HREF,
    CONTINUE_HREF,
    REGENERATE_HREF,
    REGENERATE_SEVERAL_HREF,
    REGENERATE_WITH_HREF,
    RESUME_HREF,
    TEXT_EARLIER_HREF,
    TEXT_MORE_HREF,
    is_continue_message,
)

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.gui.commands.registry import Commands


class ErrorBar(QFrame):
    """The inline error under the last message: what went wrong in one sentence, a
    "Details" link to the whole message when it says more, and a Retry button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TranscriptError")
        self.setAccessibleName("Error")
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.details_button = QPushButton("Details", self)
        self.details_button.setObjectName("ErrorDetails")
        self.details_button.setAccessibleName("Details of the error")
        self.details_button.setFlat(True)
        self.details_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.details_button.clicked.connect(self.open_details)
        self.details_button.hide()
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setAccessibleName("Retry")
        self.retry_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.message = ""  # the whole message (the label may show its first sentence)
        self.dialog: QWidget | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 10, 10, 10)
        row.addWidget(self.label, 1)
        row.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.retry_button, 0, Qt.AlignmentFlag.AlignVCenter)

    def set_message(self, message: str, *, whole: bool) -> None:
        """Show ``message``: whole (a neutral note), or its first sentence with "Details"
        for the rest (an error)."""
        self.message = message
        first, rest = (message, "") if whole else split_first_sentence(message)
        self.label.setText(first)
        self.label.setToolTip(message if rest else "")
        self.details_button.setVisible(bool(rest))

    def open_details(self) -> QWidget:
        """The whole message in a modal dialog ("Details")."""
        from parley.gui.dialogs.details import Details, open_details

        self.dialog = open_details(self.window(), Details("What went wrong",
                                                          tuple(self.message.split("\n\n"))))
        return self.dialog

    def restyle(self, fg: str, bg: str, border: str) -> None:
        self.setStyleSheet(
            f"#TranscriptError {{ background: {bg}; border: 1px solid {border};"
            f" border-radius: 10px; }} #TranscriptError QLabel {{ color: {fg}; }}"
            f" #ErrorDetails {{ color: {fg}; text-decoration: underline; border: none;"
            f" padding: 0 6px; }}"
        )


#: Words ending in "." that end no sentence ("e.g. a file").
_NOT_ENDS = ("e.g.", "i.e.", "etc.", "vs.")


def split_first_sentence(text: str) -> tuple[str, str]:
    """``text``'s first sentence (with its full stop) and the rest ('' when it has one).

    A sentence ends at ".", "!" or "?" followed by a space and a capital letter or a
    digit, not after "e.g." and the like.
    """
    i = 0
    while True:
        j = min((k for k in (text.find(". ", i), text.find("! ", i), text.find("? ", i))
                 if k >= 0), default=-1)
        if j < 0:
            return text, ""
        after = text[j + 2:].lstrip()
        word = text[:j + 1].rsplit(None, 1)[-1] if text[:j + 1].strip() else ""
        if after and (after[0].isupper() or after[0].isdigit()) and word not in _NOT_ENDS:
            return text[:j + 1], after
        i = j + 1


class TranscriptView(QWidget):
    """The conversation: messages, folded tool calls, compaction cards, an inline error.

    Signals:
        continueRequested(str): Continue under the last reply, cut at the output
            limit (its turn id): ask the model to go on.
        resumeRequested(str): Resume on an aborted reply (its turn id): the
            link, the context menu, or r on it. The view goes to the end first
            and follows the continuation (until the person scrolls up).
        retryRequested(): Retry after an error: the button of the inline
            error, the context menu, or r.
        forkRequested(str): "Fork from here" on a message (its turn id), or f.
        editRequested(str): "Edit message" on a user message (its turn id), or e.
        linkActivated(QUrl): a safe (http, https, mailto) link was clicked.
        regenerateRequested(str): another answer to the last message, with
            that ``provider:model`` ("" for the chat's own model): the link under
            the last reply, the context menu, or Shift+R.
        answerWithRequested(): several models to answer the last message again (the
            link under the last reply, the context menu: ``parley.gui.chat.several``).
        mediaRequested(object): a thumbnail or a file chip was clicked (its
            ``ImageBlock`` / ``DocumentBlock``): open it full size.
        compactedTurnsWanted(str): a compaction card was opened whose replaced
            turns are not all read, or its "Show more" clicked (its summary turn id):
            read the next page of them from the store and show it (:meth:`show_grown`).
        startWanted(): Home while older turns are not read (``list_view.more_above``):
            read them all, show them (:meth:`show_grown`), then :meth:`go_first`.
        branchRequested(str, int): ‹ or › under a message with siblings (its turn
            id; -1 previous, +1 next), or Alt+Left / Alt+Right on it.
        compactRequested(): "Try compacting again" on the note of turns the model no
            longer sees (its link, its button, or r on it): compact the chat now.

    A "↓ Latest" button (``jump_button``) floats over the bottom-right corner
    while the view is scrolled up; it scrolls to the end. The buttons of the
    hovered or focused message (``actions_row``: copy, edit, regenerate, fork,
    continue, ‹ ›) float over its corner (``parley.gui.transcript.actions_row``).

    Keys on the focused message (j/k and the arrows, c, e, f, r, Space …)
    are the ``message.*`` actions of ``parley.gui.commands.actions``; they, the context menu
    and the window's Message menu all go through :meth:`message_action`.
    """

    resumeRequested = Signal(str)
    continueRequested = Signal(str)
    retryRequested = Signal()
    forkRequested = Signal(str)
    editRequested = Signal(str)
    linkActivated = Signal(QUrl)
    regenerateRequested = Signal(str)
    answerWithRequested = Signal()
    mediaRequested = Signal(object)
    compactedTurnsWanted = Signal(str)
    startWanted = Signal()
    branchRequested = Signal(str, int)
    compactRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Transcript")
        self.model = TranscriptModel(self)
        self.list_view = TranscriptListView(self)
        self.list_view.setAccessibleName("Messages")
        self.list_view.setModel(self.model)
        self.error_bar = ErrorBar()
        self.error_bar.hide()
        self.error_bar.retry_button.clicked.connect(self.retryRequested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list_view)
        self.setFocusProxy(self.list_view)
        lv = self.list_view
        lv.anchorClicked.connect(self._anchor_clicked)
        lv.foldClicked.connect(lambda index, key: self.toggle_fold(index.row(), key))
        lv.actionRequested.connect(lambda name, index: self.message_action(name, index.row()))
        lv.menuRequested.connect(self._show_menu)
        lv.startWanted.connect(self.startWanted)
        self.model.rangeWanted.connect(self.compactedTurnsWanted)
        self.jump_button = JumpButton(lv)
        self.jump_button.clicked.connect(self.jump_to_latest)
        #: copy / edit / regenerate / fork / continue / ‹ › over the hovered or focused message
        self.actions_row = MessageActions(self)
        self._error: tuple[str, bool] | None = None  # the bar's (message, with a button)
        self._notice = False  # the bar says a neutral note, not an error
        #: () -> [(label, provider:model)] offered by "Regenerate with"; set by the window.
        self.model_choices: Callable[[], list[tuple[str, str]]] = list

    # -- public API -------------------------------------------------------------
    def follow(self, source: TurnSource) -> None:
        """Show the turns ``source`` holds (the open chat's state) instead of turns given
        to this view; the source's owner then calls :meth:`show_reset`,
        :meth:`show_grown` and :meth:`show_changed` when they change."""
        self.model.source = source
        self.show_reset()

    def _own(self) -> TurnList:
        """The view's own turns (its model's :class:`TurnList`), when it follows no chat."""
        own = self.model.source
        if not isinstance(own, TurnList):
            raise TypeError("this transcript shows the open chat's turns (follow): "
                            "change them there, not here")
        return own

    def show_reset(self, again: bool = False) -> None:
        """Show the source's turns afresh and scroll to the end: folds and cards start
        closed (``again``: the same chat read again, e.g. another version shown: those
        open stay open), the inline error is cleared, keyboard focus goes to the newest
        message."""
        self.list_view.delegate.highlight = None
        self.clear_error()
        self.model.reset(keep=again)
        self.list_view.more_above = self.model.source.older
        if self.model.rows:  # keyboard focus starts on the newest message
            self.list_view.set_current_row(len(self.model.rows) - 1)
        self.list_view.stick_to_bottom()

    def show_grown(self, keep: str | None = None) -> None:
        """Show more of the source's turns (older ones, those of an opened card): open
        folds and cards stay open; what is on screen stays where it is.

        Args:
            keep: a row (turn id) to keep at the same place on screen, e.g. the
                card just opened (default: the row at the top of the view).
        """
        lv = self.list_view
        row = self.model.row_of(keep) if keep else None
        y = lv.visualRect(self.model.index(row)).top() if row is not None else None
        self.model.grow()
        lv.more_above = self.model.source.older
        row = self.model.row_of(keep) if keep else None
        if row is not None and y is not None:
            lv.place_row(row, y)

    def show_unseen(self) -> None:
        """Show the source's record of turns the model no longer sees as it is now (the
        note before the first turn it sees comes, moves or goes; nothing else moves)."""
        self.model.set_unseen()

    def set_unseen(self, unseen: Unseen | None) -> None:
        """Show the note of turns the model no longer sees (a view that follows no chat;
        see :meth:`show_unseen`)."""
        self._own().unseen = unseen
        self.show_unseen()

    def show_changed(self, turn: Turn) -> None:
        """Show a turn the source holds now, new or changed (:meth:`update_turn`)."""
        self.model.upsert(turn)

    def toggle_fold(self, row: int, key: str) -> None:
        """Open or close a fold of a row (a tool call, thinking, a card). A card's header
        stays where it is on screen: its summary and turns grow below it (the view
        would otherwise follow the end of a long summary when it was at the bottom)."""
        lv = self.list_view
        card = key == CARD_FOLD and self.model.rows[row].kind == "card"
        y = lv.visualRect(self.model.index(row)).top() if card else None
        self.model.toggle_fold(row, key)
        if y is not None:
            lv.place_row(row, y)

    def go_first(self) -> bool:
        """Focus the first message and show it (after :attr:`startWanted` was served)."""
        return self.list_view.move_to("first")

    def jump_to_latest(self) -> None:
        """Scroll to the end, focus the last message and follow new content again."""
        if self.model.rows:
            self.list_view.set_current_row(len(self.model.rows) - 1)
        self.scroll_to_end()

    def append_turn(self, turn: Turn) -> None:
        """Add a turn at the end (same as :meth:`update_turn` for a new id)."""
        self.update_turn(turn)

    def update_turn(self, turn: Turn) -> None:
        """Show the new content of the turn with that id (streaming); append if unknown
        (a view that follows no chat; see :meth:`show_changed`).

        Cheap enough for ~20 calls a second: only that row is rendered again,
        and only its last markdown chunk is new work. The view follows the end
        unless the user scrolled up.
        """
        self._own().upsert(turn)
        self.model.upsert(turn)

    upsert_turn = update_turn

    def set_save_mark(self, turn_id: str, mark: str | None) -> None:
        """Mark a message "saving" (waiting for the file's lock) or "unsaved" (kept in
        memory until sessions.db takes it); None: it is saved. The mark stays with the
        turn id while other chats are shown."""
        marks = self.list_view.delegate.builder.specs.save_marks
        if marks.get(turn_id) == mark:
            return
        if mark is None:
            marks.pop(turn_id, None)
        else:
            marks[turn_id] = mark
        node = self.model.transcript.nodes.get(turn_id)
        if node is not None:
            node.touch()
            self.model.refresh(node)

    def set_tool_names(self, namer: Callable[[str], tuple[str, str] | None]) -> None:
        """Name tool calls by ``namer`` (wire name → (server, tool) as configured:
        ``SpecBuilder.tool_names``) and redraw the rows holding one."""
        self.list_view.delegate.builder.specs.tool_names = namer
        self.tool_names_changed()

    def tool_names_changed(self) -> None:
        """Redraw the loaded rows holding a tool call (their tools' names became known)."""
        calls = [node for node in self.model.transcript.nodes.values()
                 if any(isinstance(b, ToolUseBlock) for b in node.turn.blocks)]
        for node in calls:
            node.touch()
        self.model.refresh_many(calls)

    def set_branches(self, shown: Mapping[str, tuple[int, int]], *,
                     refresh: bool = True) -> None:
        """Show ‹ n/m › under the messages with siblings: ``{turn id: (n, m)}``.
        ``refresh`` False: only held for the rows built next (every row is about to be
        built afresh, :meth:`show_reset`: the rows shown now are not laid out again)."""
        branches = self.list_view.delegate.builder.specs.branches
        if branches == shown:
            return
        changed = {k for k in set(branches) | set(shown) if branches.get(k) != shown.get(k)}
        branches.clear()
        branches.update(shown)
        nodes = [node for key in (changed if refresh else ())
                 if (node := self.model.transcript.nodes.get(key)) is not None]
        for node in nodes:
            node.touch()
        self.model.refresh_many(nodes)

    def branch_of(self, turn_id: str) -> tuple[int, int] | None:
        """``(n, m)`` shown under a message with siblings, else None."""
        return self.list_view.delegate.builder.specs.branches.get(turn_id)

    def set_busy(self, busy: bool) -> None:
        """Say whether a reply is being written in the shown chat: while it is, the
        last reply offers no Regenerate."""
        self.model.set_busy(busy)

    def can_regenerate(self) -> bool:
        """True when the last row is a finished reply (or an unanswered message) and no
        reply is being written."""
        if self.model.busy or not self.model.rows:
            return False
        node = self.model.rows[-1]
        return node.kind == "turn" and node.turn.role == "assistant" and node.depth == 0

    def show_error(self, message: str, *, retry: bool = True) -> None:
        """Show an inline error under the last message: its first sentence, "Details" for
        the rest (when there is more), and a Retry button if ``retry``."""
        self._show_bar(message, retry, "Retry", notice=False)

    def show_notice(self, message: str, button: str) -> None:
        """Show a neutral note under the last message (nothing went wrong), with a
        button named ``button`` that does what Retry does (sends the history as it is):
        e.g. a fork made at one's own message, ready to be asked again."""
        self._show_bar(message, True, button, notice=True)

    def _show_bar(self, message: str, retry: bool, button: str, *, notice: bool) -> None:
        self._error = (message, retry)
        self._notice = notice
        self.error_bar.setAccessibleName("Note" if notice else "Error")
        self.error_bar.set_message(message, whole=notice)
        self.error_bar.retry_button.setText(button)
        self.error_bar.retry_button.setAccessibleName(button)
        self.error_bar.retry_button.setVisible(retry)
        self._style_error()
        self.list_view.set_footer(self.error_bar)
        self.list_view.stick_to_bottom()

    def _style_error(self) -> None:
        colors = transcript_colors(self.palette())
        if self._notice:
            self.error_bar.restyle(colors.text.name(), colors.card_bg.name(),
                                   colors.card_border.name())
            return
        fg = colors.error_fg.name()
        self.error_bar.restyle(fg, colors.error_bg.name(), fg)

    def clear_error(self) -> None:
        """Remove the inline error (or note), if any."""
        self._error = None
        self._notice = False
        if self.list_view.footer() is not None:
            self.list_view.set_footer(None)

    def last_turn(self) -> Turn | None:
        """The conversation's last turn as shown (a compaction summary stands where its
        range began, though it is stored after the turns it kept); None when empty."""
        roots = self.model.transcript.roots
        return roots[-1].turn if roots else None

    def turn_ids(self) -> list[str]:
        """Ids of every turn the transcript holds, in order (folded or hidden ones too)."""
        return [t.id for t in self.model.transcript.turns]

    def scroll_to_turn(self, turn_id: str, highlight: str | None = None) -> None:
        """Show a turn (opening the card it is folded in) and focus it.

        Args:
            turn_id: the turn to show; a tool result turn shows its tool call.
            highlight: words to mark in the row, space-separated (each wherever it
                occurs, case-insensitive), e.g. a search query's; folds containing
                one are opened and the first fold or block holding one is scrolled
                into view.
        """
        node = self.model.transcript.row_node(turn_id)
        if node is None:
            return
        row = self.model.reveal(node)
        if row is None:
            return
        term = (highlight or "").strip()
        if term:
            self._open_folds_matching(row, node, term)
            self.model.set_parts(row, parts_for(node, term.split()))
        delegate = self.list_view.delegate
        delegate.highlight = (node.key, term) if term else None
        index = self.model.index(row)
        self.list_view.setCurrentIndex(index)
        y = self._first_match_y(row, term) if term else None
        self.list_view.scroll_to_row(row, QAbstractItemView.ScrollHint.PositionAtTop, y)
        self.list_view.viewport().update()

    def keep_clear_of(self, rect: QRect) -> None:
        """Keep the last message clear of a rect floating over the transcript (a toast,
        window coordinates; empty: none): see ``TranscriptListView.keep_clear_of``."""
        self.list_view.keep_clear_of(rect)

    def scroll_to_end(self) -> None:
        """Scroll to the last message and follow new content again (e.g. after sending)."""
        self.list_view.stick_to_bottom()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._style_error()

    def focused_turn_id(self) -> str | None:
        """The turn id of the focused (current) row, or None."""
        index = self.list_view.currentIndex()
        return self.model.rows[index.row()].key if index.isValid() else None

    def anchor_point(self, turn_id: str, href: str) -> QPoint | None:
        """Viewport position of an anchor of a row (href prefix, e.g. ``parley:resume``).

        For tests and automation: click ``list_view.viewport()`` there. The row
        is scrolled into view first. None if the row or the anchor is not shown.
        """
        return self._point(turn_id, lambda layout: layout.anchor_point(href))

    def fold_point(self, turn_id: str, key: str) -> QPoint | None:
        """Viewport position of a fold line (``tool:<id>``, ``think:<i>``, ``card``)."""
        return self._point(turn_id, lambda layout: layout.fold_point(key))

    def _point(self, turn_id: str, find: Callable[[RowLayout], QPoint | None]) -> QPoint | None:
        row = self.model.row_of(turn_id)
        if row is None:
            return None
        point = find(self.list_view.layout_of(row, fresh=True))
        if point is None:
            return None
        self.list_view.scroll_to_row(row, y_in_row=point.y())
        self.list_view.settle()
        rect = self.list_view.visualRect(self.model.index(row))
        return point + rect.topLeft()

    # -- copying ------------------------------------------------------------------
    def message_text(self, row: int) -> str:
        """A row's text as shown, without fold lines and marks ("Copy message")."""
        node = self.model.rows[row]
        if node.turn.role == "user" and node.kind == "turn":
            return "\n\n".join(b.text for b in node.turn.blocks if isinstance(b, TextBlock))
        return self.list_view.layout_of(row, fresh=True).plain_text(copy_only=True)

    def message_markdown(self, row: int) -> str:
        """A row's markdown source ("Copy as Markdown")."""
        node = self.model.rows[row]
        if node.kind == "card":
            block = summary_block(node.turn)
            return block.summary if block else ""
        return "\n\n".join(b.text for b in node.turn.blocks if isinstance(b, TextBlock))

    def copy_message(self, row: int, *, markdown: bool = False) -> None:
        text = self.message_markdown(row) if markdown else self.message_text(row)
        QGuiApplication.clipboard().setText(text)

    # -- clicks ------------------------------------------------------------------
    def _anchor_clicked(self, index: QModelIndex, href: str, placed: Placed) -> None:
        node = self.model.rows[index.row()]
        if href.startswith(COPY_PREFIX):
            try:
                code = unbreak(placed.piece.code[int(href[len(COPY_PREFIX) :])].code)
            except (ValueError, IndexError):
                return
            QGuiApplication.clipboard().setText(code)
            QToolTip.showText(self.list_view.cursor().pos(), "Copied", self.list_view)
            return
        if href == RESUME_HREF:
            if node.turn.aborted:
                self._resume(node.key)
            return
        if href == CONTINUE_HREF:
            self.continueRequested.emit(node.turn.id)
            return
        if href == CARD_MORE_HREF:
            self.compactedTurnsWanted.emit(node.key)
            return
        if href.startswith((TEXT_MORE_HREF, TEXT_EARLIER_HREF)):
            more = href.startswith(TEXT_MORE_HREF)
            digits = href.removeprefix(TEXT_MORE_HREF if more else TEXT_EARLIER_HREF)
            n = int(digits) if digits.isdigit() else -1
            text_block = node.turn.blocks[n] if 0 <= n < len(node.turn.blocks) else None
            if isinstance(text_block, TextBlock):
                start = (node.parts or {}).get(n, 0)
                self._show_part(index.row(), n, next_part(text_block.text, start) if more
                                else previous_part(text_block.text, start))
            return
        if href == COMPACT_AGAIN_HREF:
            self.compactRequested.emit()
            return
        if href.startswith(MEDIA_PREFIX):
            media = placed.piece.media
            i = href[len(MEDIA_PREFIX):]
            if i.isdigit() and int(i) < len(media):
                self.mediaRequested.emit(media[int(i)])
            return
        if href == REGENERATE_HREF:
            self.regenerateRequested.emit("")
            return
        if href == REGENERATE_WITH_HREF:
            self.show_model_menu(QCursor.pos())  # under the link just clicked
            return
        if href == REGENERATE_SEVERAL_HREF:
            self.answerWithRequested.emit()
            return
        if href in (BRANCH_PREV_HREF, BRANCH_NEXT_HREF):
            self.branchRequested.emit(node.key, -1 if href == BRANCH_PREV_HREF else 1)
            return
        if href.startswith(IMAGE_PREFIX):
            target = indexed_target(placed.piece, href)  # a remote image: open it on click
        elif href.startswith("parley:"):
            return  # a blocked link (javascript:, file:, relative…) or unknown anchor
        else:
            target = href
        if is_safe_url(target):
            self.linkActivated.emit(QUrl(target))

    def _show_part(self, row: int, block: int, start: int) -> None:
        """Show the part of a huge text block from ``start`` on, the row's top in view
        (where that part begins, under the line saying what comes before it)."""
        self.model.show_part(row, block, start)
        self.list_view.scroll_to_row(row, QAbstractItemView.ScrollHint.PositionAtTop)
        self.list_view.viewport().update()

    def _show_more(self, row: int) -> bool:
        """"Show more" of a row, as its link does: a huge text's next part, an open
        summary card's older entries. False when it has none."""
        node = self.model.rows[row]
        if node.kind == "card":
            if not (node.expanded and node.missing):
                return False
            self.compactedTurnsWanted.emit(node.key)
            return True
        more = more_of(node)
        if more is None:
            return False
        self._show_part(row, *more)
        return True

    def _toggle_current(self, index: QModelIndex) -> None:
        row = index.row()
        node = self.model.rows[row]
        if node.kind == "card":
            self.toggle_fold(row, CARD_FOLD)
            return
        all_keys = set(self.list_view.layout_of(row).fold_keys())
        if not all_keys:  # a huge text's "Show more", as Enter
            self._show_more(row)
            return
        if all_keys <= node.open_folds:
            self.model.set_folds(row, set())
        else:
            self.model.set_folds(row, all_keys)

    def _show_menu(self, index: QModelIndex, global_pos: QPoint, hit: Hit | None) -> None:
        if index.isValid():
            self._menu = message_menu(self, index.row(), hit)  # kept for tests
            # No hit: asked with the Menu key or Shift+F10 (its first entry highlighted).
            popup(self._menu, global_pos, highlight_first=hit is None)

    def show_model_menu(self, global_pos: QPoint) -> QMenu:
        """Pop up the models "Regenerate with" offers; picking one regenerates with it
        (the first one highlighted: a command opened it)."""
        menu = models_menu(self, self)
        popup(menu, global_pos)
        self._menu = menu
        return menu

    # -- message keys ----------------------------------------------------------------
    def register_commands(self, commands: Commands) -> None:
        """Register :meth:`message_action` as the handler of every ``message.*`` action
        (the keys, context menu and Message menu of the focused message)."""
        from parley.gui.commands.actions import ACTIONS

        for action in ACTIONS:
            if action.context == "transcript":
                name = action.id.removeprefix("message.")
                commands.handle(action.id, partial(self.message_action, name),
                                replace=True)  # a new view takes over

    def message_action(self, name: str, row: int | None = None) -> bool:
        """Act on a message, as its key or context-menu entry does.

        Args:
            name: ``copy``, ``copy_markdown``, ``edit`` (a user message with text:
                ``editRequested``), ``fork`` (``forkRequested``), ``regenerate``
                (the last reply: ``regenerateRequested("")``), ``retry``
                (``resumeRequested`` on an aborted last reply, ``retryRequested``
                after an error or an unanswered last message), ``toggle`` (open
                or close its folds / summary card), ``version_previous`` /
                ``version_next`` (a message with siblings: ``branchRequested``),
                ``continue`` (a reply cut at the output limit: ``continueRequested``),
                ``more`` ("Show more" of a huge text or an open summary card),
                ``compact`` (on the note of turns the model no longer sees, as is
                ``retry`` there: ``compactRequested``), or a move:
                ``previous``, ``next``, ``first``, ``last``.
            row: the row; None for the focused one.

        Returns:
            False when there is nothing to act on (no such row, or the action
            does not apply to it).
        """
        if name in ("previous", "next", "first", "last"):
            return self.list_view.move_to(name)
        if row is None:
            row = self.list_view.currentIndex().row()
        if not 0 <= row < len(self.model.rows):
            return False
        node = self.model.rows[row]
        if node.kind == "unseen":  # the note: its one action is "Try compacting again"
            if name not in ("retry", "compact"):
                return False
            self.compactRequested.emit()
            return True
        if name in ("copy", "copy_markdown"):
            self.copy_message(row, markdown=name == "copy_markdown")
        elif name == "edit" and self.editable(node):
            self.editRequested.emit(node.key)
        elif name == "fork":
            self.forkRequested.emit(node.key)
        elif name == "regenerate" and self.model.is_last(row) and self.can_regenerate():
            self.regenerateRequested.emit("")
        elif name == "retry" and self.retry_kind(row):
            if self.retry_kind(row) == "resume":
                self._resume(node.key)
            else:
                self.retryRequested.emit()
        elif name == "toggle":
            self._toggle_current(self.model.index(row))
        elif name == "more":
            return self._show_more(row)
        elif name in ("version_previous", "version_next") and self._can_step(node, name):
            self.branchRequested.emit(node.key, -1 if name == "version_previous" else 1)
        elif name == "continue" and self.continuable(row):
            self.continueRequested.emit(node.turn.id)
        else:
            return False
        return True

    def _resume(self, turn_id: str) -> None:
        """Resume: the view goes to the end and follows the continuation as it streams
        (until the person scrolls up), as for any reply being written."""
        self.scroll_to_end()
        self.resumeRequested.emit(turn_id)

    def _can_step(self, node: Node, name: str) -> bool:
        shown = self.branch_of(node.key)
        if shown is None:
            return False
        return shown[0] > 1 if name == "version_previous" else shown[0] < shown[1]

    def continuable(self, row: int) -> bool:
        """True for the last reply when it was cut at the output limit and no reply is
        being written (Continue asks the model to go on)."""
        node = self.model.rows[row]
        return (self.model.is_last(row) and not self.model.busy and node.kind == "turn"
                and node.turn.role == "assistant" and not node.turn.aborted
                and node.turn.stop_reason == "max_tokens")

    def editable(self, node: Node) -> bool:
        """True for a message the person wrote (not Continue's message, which Parley sent)."""
        if not (node.turn.role == "user" and node.kind == "turn" and node.turn.text()):
            return False
        row = self.model.row_of(node.key)
        before = self.model.rows[row - 1].turn if row else None
        return not is_continue_message(node.turn, before)

    def retry_kind(self, row: int) -> str | None:
        """"resume" (an aborted last reply), "retry" (an error is shown, or the last
        message has no reply) or None, for the row ``row``."""
        if not self.model.is_last(row):
            return None
        node = self.model.rows[row]
        if node.turn.writing_elsewhere:  # another computer's reply, still streaming
            return None
        if node.turn.aborted:
            return "resume"
        if self._error is not None or node.turn.role == "user":
            return "retry"
        return None

    # -- search helpers ------------------------------------------------------------
    def _open_folds_matching(self, row: int, node: Node, term: str) -> None:
        needles = term.casefold().split()
        keys = set(node.open_folds)
        tr = self.model.transcript
        for i, block in enumerate(node.turn.blocks):
            if isinstance(block, ThinkingBlock) and _holds(block.thinking, needles):
                keys.add(f"think:{i}")
            elif isinstance(block, ToolUseBlock):
                result = tr.result_for(block.id)
                text = tool_input_text(block) + (result_text(result.content) if result else "")
                if _holds(text, needles):
                    keys.add(f"tool:{block.id}")
        if node.kind == "card" and not node.expanded:
            self.model.set_expanded(row, True)
        self.model.set_folds(row, keys)

    def _first_match_y(self, row: int, term: str) -> int | None:
        layout = self.list_view.layout_of(row)
        words = term.split()
        for placed in layout.pieces:
            found = [c for c in (placed.piece.doc.find(w, 0) for w in words) if not c.isNull()]
            if found:
                cursor = min(found, key=lambda c: c.position())
                block = cursor.block()
                rect = placed.piece.doc.documentLayout().blockBoundingRect(block)
                return placed.rect.top() + int(rect.top())
        return None


def _holds(text: str, needles: list[str]) -> bool:
    """True when ``text`` holds one of ``needles`` (casefolded words), case-insensitive."""
    folded = text.casefold()
    return any(n in folded for n in needles)
