"""Parley as a process on a data folder it cannot (fully) use: it says why, never a traceback.

Root ignores permission bits, so folders are made unusable in ways that stop
root too: a regular file where the folder (or its ``logs``) should be, or a
read-only bind mount in a private mount namespace (``unshare -m``; skipped
where that is not allowed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.e2e.processes import ROOT, app_env, parley_command

pytestmark = pytest.mark.timeout(120)


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=app_env(), text=True, capture_output=True, timeout=90, cwd=ROOT)


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_file_as_the_data_folder_is_refused_with_a_box_and_exit_2(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    before = _listing(tmp_path)
    done = _run(parley_command("--home", str(afile)))
    assert done.returncode == 2, done.stderr
    assert f"Parley cannot keep its data in {afile}: it is a file, not a folder" in done.stderr
    assert "Nothing was changed" in done.stderr and "--home" in done.stderr
    assert "Traceback" not in done.stderr
    assert "parley-probe startup-error" in done.stdout  # the message box was shown
    assert "parley-probe first-paint" not in done.stdout  # and no main window
    assert _listing(tmp_path) == before and afile.read_text() == "not a folder"


def test_a_folder_that_cannot_be_created_is_refused_and_nothing_made(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    home = afile / "parley" / "data"
    done = _run(parley_command("--home", str(home)))
    assert done.returncode == 2, done.stderr
    assert f"Parley cannot keep its data in {home}: a file is in the way" in done.stderr
    assert "Traceback" not in done.stderr
    assert afile.read_text() == "not a folder"


@pytest.mark.slow  # one full start of the app (providers loaded): ~2-5 s
def test_a_file_named_logs_still_starts_and_logs_to_stderr(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "logs").write_text("in the way")
    done = _run(parley_command("--home", str(home)))
    assert done.returncode == 0, done.stderr
    assert "parley-probe ready" in done.stdout
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, done.stderr
    assert f"Parley cannot write its log in {home / 'logs'}" in warnings[0]
    assert "Parley 0" in done.stderr and "starting" in done.stderr  # the log goes to stderr
    assert (home / "logs").read_text() == "in the way"
    assert (home / "sessions.db").is_file()


def _read_only_mount_works(folder: Path) -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && ! touch "$0/x"',
         str(folder)], capture_output=True, timeout=30,
    )
    return probe.returncode == 0 and not (folder / "x").exists()


def _on_read_only(folder: Path, cmd: list[str]) -> list[str]:
    """``cmd`` run with ``folder`` mounted read-only (for that process only)."""
    return ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"',
            str(folder), *cmd]


@pytest.fixture
def read_only(tmp_path):
    if not _read_only_mount_works(tmp_path):
        pytest.skip("needs unshare -m and mount (root with CAP_SYS_ADMIN on Linux)")
    return tmp_path


def _stderr_until(cmd: list[str], wanted: str, timeout_s: float = 60) -> str:
    """Start ``cmd``, collect stderr until a line holds ``wanted`` (or it exits), stop it."""
    proc = subprocess.Popen(cmd, env=app_env("print"), cwd=ROOT, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    lines: list[str] = []
    stop = threading.Timer(timeout_s, proc.terminate)  # also if it goes quiet
    stop.start()
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if wanted in line:
                break
    finally:
        stop.cancel()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return "".join(lines)


@pytest.mark.parametrize("with_file", [True, False], ids=["with-sessions-db", "empty"])
def test_a_read_only_data_folder_starts_and_the_store_says_so(read_only, with_file):
    home = read_only / "home"
    home.mkdir()
    if with_file:
        from parley.core.store.store import Store

        Store.open(home / "sessions.db").close()
    before = _listing(read_only)
    err = _stderr_until(_on_read_only(read_only, parley_command("--home", str(home))),
                        "Parley cannot write to")
    assert "Traceback" not in err
    assert f"Parley cannot write its log in {home / 'logs'}" in err
    assert "read-only" in err
    assert f"Parley cannot write to {home / 'sessions.db'}" in err  # the store's own check
    assert "Nothing already saved was lost" in err
    assert "already running" not in err
    assert _listing(read_only) == before


def test_a_data_folder_on_a_read_only_disk_is_refused_in_words(read_only):
    home = read_only / "new" / "home"
    done = subprocess.run(_on_read_only(read_only, parley_command("--home", str(home))),
                          env=app_env(), text=True, capture_output=True, timeout=90, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert f"Parley cannot keep its data in {home}: the disk it is on is read-only" in done.stderr
    assert "Traceback" not in done.stderr
    assert "parley-probe startup-error" in done.stdout
    assert not (read_only / "new").exists()
