"""core/ and gui/ are type-checked and clean (issues 22 and 33).

Both are in mypy's ``files`` (pyproject.toml), so ``.venv/bin/mypy`` checks them; gui/
had a baseline of errors that only went down (56, then 42) until it reached 0. Any error
fails here. No parameter or attribute named ``window``, ``win`` or ``w`` is typed
``Any`` in gui/ (issue 33: each part is given typed things, or a Protocol naming what
it uses).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # ~15 s with mypy's cache, ~1 min without
def test_mypy_finds_no_error_in_core_or_gui() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "parley/gui" in Path(ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_no_window_in_gui_is_typed_any() -> None:
    pattern = re.compile(r"\b(window|win|w)\s*:\s*Any\b")
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "gui").rglob("*.py"))
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []
