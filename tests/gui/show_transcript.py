"""Open the transcript with sample content, to look at it or take a screenshot.

    python -m tests.gui.show_transcript                 # a window to look at
    python -m tests.gui.show_transcript --dark          # with a dark palette
    QT_QPA_PLATFORM=offscreen python -m tests.gui.show_transcript --out /tmp/t.png [--dark]

The sample holds every kind of row: markdown with a table and code, a folded
tool call and thinking, a compaction card, an image, an aborted reply, an error.
"""

from __future__ import annotations

import argparse
import base64
import sys

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import QApplication

from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.gui.transcript import TranscriptView
from tests.gui.transcript_reading import show_turns

REPLY = """## Reading a CSV in Python

Use the standard library's `csv` module — no dependency needed:

```python
import csv

def read_rows(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))  # one dict per row
```

Things to keep in mind:

1. Pass `newline=""` so quoted line breaks survive.
2. Large files: iterate instead of building a list.
   - `for row in csv.DictReader(f): ...`

| Option | Default | Meaning |
|:-------|:-------:|--------:|
| `delimiter` | `,` | field separator |
| `quotechar` | `"` | quoting |

See the [csv docs](https://docs.python.org/3/library/csv.html). This
[link](javascript:alert(1)) is blocked, and so is ![a remote image](http://example.com/x.png).

> Tip: `pandas.read_csv` is faster for big numeric tables.
"""


def png_base64(color: str = "#4f8cff", size: tuple[int, int] = (480, 300)) -> str:
    """A generated PNG (a gradient card), base64-encoded."""
    image = QImage(size[0], size[1], QImage.Format.Format_ARGB32)
    image.fill(QColor(color))
    p = QPainter(image)
    p.setPen(QColor("white"))
    p.drawText(image.rect(), Qt.AlignmentFlag.AlignCenter, "chart.png")
    p.end()
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return base64.b64encode(bytes(data.data())).decode("ascii")


def sample_turns() -> list[Turn]:
    """A short conversation holding every kind of row."""
    old = [
        Turn("user", [TextBlock("What's a good name for a cat?")], id="old-u1"),
        Turn("assistant", [TextBlock("How about **Miso**?")], id="old-a1",
             model="anthropic:claude-sonnet-4-5"),
    ]
    summary = Turn(
        "user",
        [CompactSummaryBlock("The user asked for cat names; *Miso* was suggested.", 2,
                             "old-u1", "old-a1", "c1")],
        id="sum1",
        model="anthropic:claude-haiku-4-5",
    )
    return [
        *old,
        summary,
        Turn("user", [TextBlock("How do I read a CSV file in Python?")], id="u1"),
        Turn("assistant", [
            ThinkingBlock("The user wants the simplest way. The csv module is in the "
                          "standard library; mention DictReader and newline=''."),
            TextBlock(REPLY),
        ], id="a1", model="anthropic:claude-sonnet-4-5"),
        Turn("user", [TextBlock("Can you check what's in data.csv?"),
                      ImageBlock("image/png", data=png_base64())], id="u2"),
        Turn("assistant", [
            TextBlock("Let me look at the file."),
            ToolUseBlock("t1", "read_file", {"path": "data.csv", "limit": 3}),
        ], id="a2", model="anthropic:claude-sonnet-4-5"),
        Turn("user", [ToolResultBlock("t1", (TextBlock("name,age\nMiso,3\nTofu,5"),))], id="u3"),
        Turn("assistant", [TextBlock("It has two cats: **Miso** (3) and **Tofu** (5).")],
             id="a3", model="anthropic:claude-sonnet-4-5"),
        Turn("user", [TextBlock("Now write a long poem about them, please.")], id="u4"),
        Turn("assistant", [TextBlock("Miso naps in the sun,\nTofu chases the")], id="a4",
             aborted=True, model="anthropic:claude-sonnet-4-5"),
    ]


def dark_palette() -> QPalette:
    """A dark palette like a desktop's dark mode."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, c in {
        role.Window: "#1e1f22", role.WindowText: "#e6e6e6", role.Base: "#1e1f22",
        role.AlternateBase: "#25262a", role.Text: "#e6e6e6", role.Button: "#2b2d31",
        role.ButtonText: "#e6e6e6", role.Highlight: "#4f8cff", role.HighlightedText: "#ffffff",
        role.Link: "#6ea8ff", role.ToolTipBase: "#2b2d31", role.ToolTipText: "#e6e6e6",
    }.items():
        p.setColor(r, QColor(c))
    return p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dark", action="store_true", help="use a dark palette")
    parser.add_argument("--out", help="save a screenshot to this PNG file and quit")
    parser.add_argument("--size", default="900x1400", help="window size, WxH")
    parser.add_argument("--expand", action="store_true", help="open the folds and the card")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    if args.dark:
        app.setPalette(dark_palette())
    view = TranscriptView()
    w, h = (int(x) for x in args.size.split("x"))
    view.resize(w, h)
    show_turns(view, sample_turns())
    view.show_error("The server is overloaded (529). Nothing was lost; try again in a minute.")
    if args.expand:
        model = view.model
        for row in range(model.rowCount()):
            node = model.rows[row]
            if node.kind == "card":
                model.set_expanded(row, True)
                break
        for row in range(model.rowCount()):
            keys = set(view.list_view.layout_of(row).fold_keys()) - {"card"}
            if keys:
                model.set_folds(row, keys)
    view.show()
    if args.out:
        def grab() -> None:
            view.list_view.stick_to_bottom()
            app.processEvents()
            view.grab().save(args.out)
            app.quit()

        QTimer.singleShot(50, grab)
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
