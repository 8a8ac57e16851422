"""The chats appear before the provider SDKs are imported (they take seconds cold).

gui.main_window lists the sessions after importing only what ``_import_store``
imports; the SDKs come later, with the providers. A module on that path that
imports ``core.providers.registry`` (or an adapter) pulls both SDKs in and
holds the sidebar back by ~3 s — this test fails if one does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from gui.main_window import _import_store
_import_store()
heavy = sorted(m for m in ("anthropic", "openai", "core.providers.registry") if m in sys.modules)
print("imported:", heavy)
"""


def test_listing_the_chats_does_not_import_the_provider_sdks() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert "imported: []" in out.stdout, out.stdout
