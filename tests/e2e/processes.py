"""Starting the app as a separate process: its command line and environment, for the e2e tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def app_env(probe: str | None = "quit") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(QT_QPA_PLATFORM="offscreen", PARLEY_KEYRING="file")
    env.pop("PARLEY_HOME", None)
    env.pop("PARLEY_PROBE", None)
    if probe:
        env["PARLEY_PROBE"] = probe
    return env


def parley_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "parley.gui.app", *args]
