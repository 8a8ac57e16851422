"""The chats appear before the provider SDKs are imported (they take seconds cold).

parley.gui.startup.phases lists the sessions after importing only what
``parley.gui.startup.opening.import_store`` and ``import_chat`` import; the SDKs come
later, with the providers. A module on that path that imports
``parley.core.providers.registry`` (or an adapter) pulls both SDKs in and holds the
sidebar back by ~3 s — this test fails if one does; nor may it import SQLAlchemy's
PostgreSQL dialect (~40 ms, needed only for a store on PostgreSQL: imported when such a
store is opened). Loading the providers' hub, the run loop and MCP
(``Workspace.open_providers``) imports no SDK either: the SDKs live in the provider
process (``parley.core.providers.process``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
from parley.core.workspace.parts import import_providers
from parley.gui.startup.opening import import_chat, import_store
from parley.gui.window.layout import import_window_parts
import_window_parts()  # the sidebar, the header's tools, the commands (right after the paint)
import_store()
import_chat()  # once the store is open: the controller, the transcript
heavy = sorted(m for m in ("anthropic", "openai", "parley.core.providers.registry",
                           "sqlalchemy.dialects.postgresql") if m in sys.modules)
print("imported:", heavy)
import_providers()  # the hub, the run loop, MCP: still no SDK (the provider process has them)
print("then:", sorted(m for m in ("anthropic", "openai") if m in sys.modules))
"""


def test_listing_the_chats_does_not_import_the_provider_sdks() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert "imported: []" in out.stdout, out.stdout
    assert "then: []" in out.stdout, out.stdout
