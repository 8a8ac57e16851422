"""``parley --self-test`` (gui/startup/self_test.py) from the source tree, and its report."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from parley.gui.startup.self_test import SelfTest
from tests.packaging.support import ROOT

CHECKS = ("qt", "image formats", "resources", "store", "providers", "window")


@pytest.mark.slow  # ~5-10 s: a real app start, SDK imports included
def test_self_test_passes_and_leaves_nothing_behind(_isolated_home: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "parley_entry.py"), "--self-test"],
        cwd=ROOT, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for check in CHECKS:
        assert re.search(rf"^self-test: ok   {check} - .* \(\d+ ms\)$", result.stdout,
                         re.MULTILINE), check
    assert re.search(r"^self-test: passed \(7 checks\) in [\d.]+ s$", result.stdout, re.MULTILINE)
    home = re.search(r"temporary home (\S+)", result.stdout)
    assert home and not Path(home.group(1)).exists()  # the temporary folder is gone
    assert list(_isolated_home.iterdir()) == []  # the caller's PARLEY_HOME was not touched


def test_report_names_failed_checks_and_exits_1() -> None:
    out = io.StringIO()
    test = SelfTest(out)
    assert test.check("good", lambda: "fine")
    assert not test.check("bad", lambda: 1 / 0)
    assert test.finish(0.0) == 1
    text = out.getvalue()
    assert re.search(r"^self-test: ok   good - fine \(\d+ ms\)$", text, re.MULTILINE)
    assert re.search(r"^self-test: FAIL bad - ZeroDivisionError: division by zero", text,
                     re.MULTILINE)
    assert "Traceback" in text  # the details are kept for the bug report
    assert "self-test: failed (1 of 2 checks: bad)" in text


def test_report_passes_when_every_check_passed() -> None:
    out = io.StringIO()
    test = SelfTest(out)
    test.check("one", lambda: "a")
    test.check("two", lambda: "b")
    assert test.finish(0.0) == 0
    assert "self-test: passed (2 checks)" in out.getvalue()
