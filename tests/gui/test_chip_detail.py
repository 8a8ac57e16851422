"""An attachment chip's detail line is shortened by whole parts, never mid-word
(issue 35, item 6: "Text · 1,6…s · 0.1 MB" for "1,600 lines")."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from parley.gui.composer.attach_tray import DETAIL_SEP, fit_detail
from tests.gui.helpers import drop

pytestmark = pytest.mark.timeout(60)

DETAIL = "Text · 1,600 lines · 0.1 MB"


def _whole_parts(shown: str, detail: str) -> bool:
    """``shown`` is the first parts of ``detail``, each whole."""
    return detail.split(DETAIL_SEP)[: len(shown.split(DETAIL_SEP))] == shown.split(DETAIL_SEP)


def test_a_1600_line_file_shows_its_line_count_whole(driver, tmp_path, qtbot):
    w: Any = driver.configured()
    notes = tmp_path / "a-rather-long-file-name-of-notes.txt"
    notes.write_text("".join(f"line {i} of the notes, some words\n" for i in range(1600)),
                     encoding="utf-8")
    assert drop(w.composer, [notes])
    driver.until(lambda: w.composer_bar.tray.items()
                 and w.composer_bar.tray.items()[0].kind == "text")
    driver.until(lambda: len(_entries(w)) == 1)
    (entry,) = _entries(w)
    detail = entry.item.detail
    assert "1,600 lines" in detail
    shown = entry.detail_label.shown_text()
    assert _whole_parts(shown, detail), (shown, detail)
    assert "1,600 lines" in shown


def _entries(w: Any) -> list[Any]:
    from parley.gui.composer.attach_tray import TrayEntry

    return [e for e in w.composer_bar.tray.findChildren(TrayEntry) if e.item.kind == "text"]


def test_every_width_keeps_whole_parts(qapp):
    metrics = QFontMetrics(QFont())
    full = metrics.horizontalAdvance(DETAIL)
    for width in range(full + 5, 0, -3):
        shown = fit_detail(DETAIL, metrics, width)
        assert metrics.horizontalAdvance(shown) <= width or shown in ("", "…"), (width, shown)
        if width >= metrics.horizontalAdvance("Text"):
            assert _whole_parts(shown, DETAIL), (width, shown)
        else:
            assert shown.endswith("…") or shown == "", (width, shown)
    assert fit_detail(DETAIL, metrics, full) == DETAIL
