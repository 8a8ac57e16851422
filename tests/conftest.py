"""Shared pytest set-up: offscreen Qt, an isolated Parley home per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from tests.disk import mount, umount  # noqa: E402

# CI runs the same examples every time (a failure found while developing is
# kept in .hypothesis/ and replayed locally); no deadline on a shared 2-core box.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Fixtures of the fake provider server live beside it.
pytest_plugins = ["tests.fakes.fixtures"]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own PARLEY_HOME and no provider keys from the machine."""
    home = tmp_path / "parley-home"
    home.mkdir()
    monkeypatch.setenv("PARLEY_HOME", str(home))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PARLEY_KEYRING", "file")
    return home


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A real 4 MB filesystem (tmpfs), so the disk can really be filled."""
    where = tmp_path / "disk"
    where.mkdir()
    if not mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)):
        pytest.skip("needs root and mount (a real small filesystem)")
    try:
        yield where
    finally:
        umount(where)
