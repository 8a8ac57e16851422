"""What a streaming reply's update changes on screen, so only that is painted again.

A reply streams into the last row of the transcript a few characters at a time; each
update lays the row out again (``parley.gui.transcript.delegate``), but its pieces are
cached by their text (``parley.gui.transcript.pieces``): the paragraphs and code lines
already shown come back as the same objects, at the same place, and only the piece
still growing (and the pieces after it) are new. Repainting the whole viewport for
each update drew every visible piece again (about ten ``QTextDocument`` draws per
update in a long reply: 40 % of the GUI thread's time while streaming, measured with
``tests.benchmarks.bench_streaming --profile-stream``).

:func:`picture` notes what a row's layout shows (its pieces by identity and place, its
code boxes, its frame) and where the row is on screen; :func:`damage` compares two
pictures of the row and returns the band of the viewport to paint again, or None when
the row moved on screen or its frame changed (then the caller repaints everything, as
before).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from PySide6.QtCore import QRect

from parley.gui.transcript.layout import RowLayout

#: px painted around a piece besides its rect (the rule of an unfolded body is drawn
#: 4 px above and below it; antialiased edges).
MARGIN = 6

_Box = tuple[int, int, int, int]


def _box(rect: QRect) -> _Box:
    return rect.x(), rect.y(), rect.width(), rect.height()


@dataclass(frozen=True)
class RowPicture:
    """What a row's layout paints, in row coordinates, and where the row is on screen.

    Attributes:
        top: the row's top in the viewport (px; negative when scrolled past).
        height: the row's height (px).
        layout: the layout painted (kept: its pieces' documents are compared by identity).
        pieces: per piece on screen ``(document, rect, muted, bar)``.
        boxes: the code boxes on screen and their label bars.
        frame: the bubble or card, the column and the nesting guides.
    """

    top: int
    height: int
    layout: RowLayout
    pieces: tuple[tuple[object, _Box, bool, bool], ...]
    boxes: frozenset[tuple[_Box, _Box]]
    frame: tuple[object, ...]


def picture(layout: RowLayout, top: int, view_height: int) -> RowPicture:
    """Note what ``layout`` paints in the viewport (``view_height`` px tall) with its
    row's top at ``top`` (viewport px): only the pieces and code boxes on screen (a long
    reply has a hundred pieces; a dozen are seen)."""
    low, high = -top - MARGIN, view_height - top + MARGIN  # the viewport, in row px
    pieces = layout.pieces
    first = bisect_left(pieces, low, key=lambda p: p.rect.bottom()) if low > 0 else 0
    seen: list[tuple[object, _Box, bool, bool]] = []
    for placed in pieces[first:]:
        rect = placed.rect
        if rect.top() > high:
            break
        seen.append((placed.piece.doc, _box(rect), placed.muted, placed.bar))
    boxes = frozenset((_box(box), _box(bar)) for box, bar in layout.code_boxes_in(low, high))
    column = layout.column  # its height follows the row's: the strip under it covers that
    frame = (None if layout.frame is None else _box(layout.frame), layout.frame_kind,
             (column.x(), column.y(), column.width()), tuple(layout.guides), layout.width)
    return RowPicture(top, layout.height, layout, tuple(seen), boxes, frame)


def damage(before: RowPicture, after: RowPicture, view_width: int, view_height: int
           ) -> QRect | None:
    """The band of the viewport (full width, viewport px) that differs between two
    pictures of one row once the viewport's pixels were moved by ``after.top -
    before.top`` (the caller scrolls them: the view follows the end of a growing reply),
    an empty rect when nothing does, or None when the row's frame changed (everything
    must be painted again).

    A piece counts as unchanged when the same document is at the same place in the row
    with the same colour and rule; every other piece of either picture is in the band
    (as far as it is on screen), and so is every code box that is not in both, and the
    strip between the two heights down to the viewport's bottom (the space under the
    row).
    """
    if before.frame != after.frame:
        return None
    kept_before = {(id(doc), box, muted, bar) for doc, box, muted, bar in before.pieces}
    kept_after = {(id(doc), box, muted, bar) for doc, box, muted, bar in after.pieces}
    spans: list[tuple[int, int]] = []
    for pieces, other in ((before.pieces, kept_after), (after.pieces, kept_before)):
        for doc, box, muted, bar in pieces:
            if (id(doc), box, muted, bar) not in other:
                spans.append((box[1], box[1] + box[3]))
    for code, label in before.boxes ^ after.boxes:
        spans.append((code[1], code[1] + code[3]))
        spans.append((label[1], label[1] + label[3]))
    if before.height != after.height:
        spans.append((min(before.height, after.height), view_height - after.top))
    # On screen (after the move): what scrolled out of view needs no paint.
    shown = [(max(a - MARGIN + after.top, 0), min(b + MARGIN + after.top, view_height))
             for a, b in spans]
    shown = [(a, b) for a, b in shown if a < b]
    if not shown:
        return QRect()
    top = min(a for a, _ in shown)
    return QRect(0, top, view_width, max(b for _, b in shown) - top)
