"""Render Parley's icon (``resources/icons/parley.svg``) into every size the platforms need.

Writes, from the one SVG source:

* ``resources/linux/icons/hicolor/<n>x<n>/apps/org.parley.Parley.png`` for the
  freedesktop icon theme (installed by ``resources/linux/install-desktop-entry.sh``);
* ``packaging/icons/parley.ico`` (Windows: PNG-compressed entries, 16-256 px);
* ``packaging/icons/parley.icns`` (macOS: PNG entries ``ic07``-``ic14``, 16-1024 px).

The outputs are committed; run this again after changing the SVG::

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py

Formats: ICO per Microsoft's "Icons" reference (ICONDIR + ICONDIRENTRY, PNG
payloads allowed since Windows Vista); ICNS per Apple's Icon Services types
(``icns`` header, then ``type, length, PNG`` entries).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "parley.svg"
APP_ID = "org.parley.Parley"
HICOLOR = ROOT / "resources" / "linux" / "icons" / "hicolor"
OUT = ROOT / "packaging" / "icons"

LINUX_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
#: ICNS entry types and their pixel sizes (``@2x`` types hold double-size images).
ICNS_TYPES = (("ic11", 32), ("ic12", 64), ("ic07", 128), ("ic13", 256),
              ("ic08", 256), ("ic14", 512), ("ic09", 512), ("ic10", 1024))


def render_png(svg: bytes, size: int) -> bytes:
    """Render ``svg`` to a ``size`` x ``size`` px PNG with a transparent background."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    QSvgRenderer(QByteArray(svg)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, b"PNG"):
        raise RuntimeError(f"could not encode the {size} px icon as PNG")
    return bytes(data.data())


def pack_ico(pngs: dict[int, bytes]) -> bytes:
    """Return an ICO file holding one PNG entry per size (sizes in px, at most 256)."""
    sizes = sorted(pngs)
    header = struct.pack("<HHH", 0, 1, len(sizes))  # reserved, type 1 = icon, count
    offset = len(header) + 16 * len(sizes)
    entries, payload = b"", b""
    for size in sizes:
        data = pngs[size]
        dim = 0 if size >= 256 else size  # 0 means 256
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
        payload += data
    return header + entries + payload


def pack_icns(entries: list[tuple[str, bytes]]) -> bytes:
    """Return an ICNS file from ``(type, png)`` entries (type: four ASCII characters)."""
    body = b"".join(kind.encode("ascii") + struct.pack(">I", 8 + len(data)) + data
                    for kind, data in entries)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    """Write every icon file; print each path. Returns 0."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([sys.argv[0]])
    svg = SVG.read_bytes()
    cache: dict[int, bytes] = {}

    def png(size: int) -> bytes:
        if size not in cache:
            cache[size] = render_png(svg, size)
        return cache[size]

    written: list[Path] = []
    for size in LINUX_SIZES:
        path = HICOLOR / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(png(size))
        written.append(path)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "parley.ico").write_bytes(pack_ico({s: png(s) for s in ICO_SIZES}))
    (OUT / "parley.icns").write_bytes(pack_icns([(t, png(s)) for t, s in ICNS_TYPES]))
    written += [OUT / "parley.ico", OUT / "parley.icns"]
    for path in written:
        print(f"{path.relative_to(ROOT)}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
