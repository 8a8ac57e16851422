"""Small real image files (made with Pillow) and their base64, for the attachment tests."""

from __future__ import annotations

import base64
import io

from PIL import Image


def png(color=(10, 120, 200), size=(24, 16)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
