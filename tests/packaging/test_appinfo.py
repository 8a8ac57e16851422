"""core/appinfo.py: one source of Parley's name, version and ids."""

from __future__ import annotations

import tomllib

import pytest

from parley.core import appinfo
from tests.packaging.support import ROOT


def test_metadata_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == appinfo.VERSION
    assert project["description"] == appinfo.DESCRIPTION
    assert appinfo.EXECUTABLE in project["gui-scripts"]


@pytest.mark.parametrize(("version", "expected"), [
    ("0.1.0", (0, 1, 0, 0)),
    ("2.10.3", (2, 10, 3, 0)),
    ("1.0.0rc1", (1, 0, 0, 0)),
    ("1.2", (1, 2, 0, 0)),
    ("dev", (0, 0, 0, 0)),
])
def test_version_tuple(monkeypatch: pytest.MonkeyPatch, version: str,
                       expected: tuple[int, int, int, int]) -> None:
    monkeypatch.setattr(appinfo, "VERSION", version)
    assert appinfo.version_tuple() == expected
