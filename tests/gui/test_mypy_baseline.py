"""gui/ is type-checked: its mypy error count only goes down (issue 22).

core/ is mypy-clean (``.venv/bin/mypy``, the default ``files``); gui/ is checked with
the same settings against :data:`BASELINE`, the count when it was first checked. A change
that adds an error fails here; one that removes errors fails until the baseline is
lowered to the new count, so the count never creeps back up.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: mypy errors in gui/ (``mypy .namespace/parley/gui``); lower it when you fix some.
BASELINE = 0


@pytest.mark.slow  # ~15 s with mypy's cache, ~1 min without
def test_gui_mypy_errors_do_not_grow() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", ".namespace/parley/gui"], cwd=ROOT,
        capture_output=True, text=True, timeout=600,
    )
    errors = [line for line in result.stdout.splitlines() if re.search(r": error: ", line)]
    assert result.returncode in (0, 1), result.stdout + result.stderr  # 2: mypy itself failed
    assert len(errors) <= BASELINE, "new mypy errors in gui/:\n" + "\n".join(errors)
    assert len(errors) == BASELINE, (
        f"gui/ has {len(errors)} mypy errors, fewer than the baseline: set BASELINE = "
        f"{len(errors)} in {Path(__file__).name}")
