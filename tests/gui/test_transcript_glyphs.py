"""The transcript shows no emoji: a machine without an emoji or symbol font would draw
them as boxes ("▸ □ Summarized 396 turns"). Fold lines, the compaction card, file chips
and marks carry icons the app draws instead (real window, store and fake provider)."""

from __future__ import annotations

import base64
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

from parley.core.attachments.files import text_file_block
from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.gui.transcript.pieces import ICON_SCHEME
from parley.gui.transcript.specs import CARD_FOLD
from tests.gui.helpers import emoji_in


def every_kind() -> list[Turn]:
    pdf = base64.b64encode(b"%PDF-1.4 tiny").decode()
    return [
        Turn("user", [TextBlock("old question")]),
        Turn("assistant", [TextBlock("old answer")]),
        Turn("user", [TextBlock("Read these"), text_file_block("notes.txt", "a\nb\n"),
                      DocumentBlock("application/pdf", pdf, "report.pdf")]),
        Turn("assistant", [ThinkingBlock("hmm", "sig"), TextBlock("Reading."),
                           ToolUseBlock("t1", "read_file", {"path": "notes.txt"}),
                           ToolUseBlock("t2", "read_file", {"path": "gone.txt"})]),
        Turn("user", [ToolResultBlock("t1", (TextBlock("a b"),)),
                      ToolResultBlock("t2", (TextBlock("no such file"),), is_error=True)]),
        Turn("user", [ToolResultBlock("elsewhere", (TextBlock("orphan"),))]),
        Turn("assistant", [TextBlock("Done.")], aborted=True),
    ]


def test_no_row_of_the_transcript_shows_an_emoji(driver: Any) -> None:
    w = driver.configured()
    s = driver.run(w.store.create_session(title="Glyphs", model=w.chat.current_model()))
    turns = every_kind()

    async def fill() -> None:
        for t in turns:
            await w.store.append_turn(s.id, t)
        await w.store.record_compaction(
            s.id, Turn("user", [CompactSummaryBlock("<summary>Asked, answered.</summary>", 2)]),
            first_turn_id=turns[0].id, last_turn_id=turns[1].id, replaced_count=2)

    driver.run(fill())
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and w.transcript.model.rows)
    w.transcript.set_save_mark(turns[-1].id, "unsaved")
    model, lv = w.transcript.model, w.transcript.list_view
    model.set_expanded(0, True)
    driver.until(lambda: model.rowCount() == 7, timeout=10)  # the card's two turns read
    for row in range(model.rowCount()):
        model.set_folds(row, set(lv.layout_of(row, fresh=True).fold_keys()) - {CARD_FOLD})

    icons: list[str] = []
    for row in range(model.rowCount()):
        layout = lv.layout_of(row, fresh=True)
        text = layout.plain_text()
        assert emoji_in(text) == [], f"row {row}: {text!r}"
        icons += layout.icons()
        for placed in layout.pieces:  # every icon is drawn: its image is in the document
            doc = placed.piece.doc
            html = doc.toHtml()
            for part in html.split(f'src="{ICON_SCHEME}:')[1:]:
                name = f"{ICON_SCHEME}:{part.split(chr(34), 1)[0]}"
                image = doc.resource(QTextDocument.ResourceType.ImageResource, QUrl(name))
                assert image is not None and not image.isNull(), name
    assert {"summary", "file", "thinking", "tool", "check", "cross", "warning"} <= set(icons)
    assert "Summarized 2 messages" in lv.layout_of(0, fresh=True).plain_text()
