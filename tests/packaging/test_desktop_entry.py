"""The Linux desktop entry, its installer, and the generated icon files."""

from __future__ import annotations

import configparser
import shutil
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from parley.core import appinfo
from tests.packaging.support import ROOT, load

LINUX = ROOT / "resources" / "linux"
ENTRY = LINUX / f"{appinfo.APP_ID}.desktop"
INSTALL = LINUX / "install-desktop-entry.sh"
needs_sh = pytest.mark.skipif(sys.platform == "win32" or shutil.which("sh") is None,
                              reason="POSIX shell script")


def read_entry(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return dict(parser["Desktop Entry"])


def exec_argv(value: str) -> list[str]:
    """Split an ``Exec=`` value as a launcher does (Desktop Entry spec, "The Exec key")."""
    unescaped = value.replace("\\\\", "\x00").replace("\\s", " ").replace("\x00", "\\")
    args: list[str] = []
    current, quoted, i, started = "", False, 0, False
    while i < len(unescaped):
        ch = unescaped[i]
        if quoted and ch == "\\" and i + 1 < len(unescaped) and unescaped[i + 1] in '"`$\\':
            current += unescaped[i + 1]
            i += 2
            continue
        if ch == '"':
            quoted, started = not quoted, True
        elif ch == " " and not quoted:
            if started or current:
                args.append(current)
            current, started = "", False
        else:
            current += ch
        i += 1
    if started or current:
        args.append(current)
    return [a.replace("%%", "%") for a in args]


def run_install(tmp_path: Path, *args: str, script: Path = INSTALL,
                path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(tmp_path), "PATH": path, "XDG_DATA_HOME": str(tmp_path / "d")}
    return subprocess.run(["sh", str(script), *args], env=env, capture_output=True, text=True)


def fake_parley(path: Path, body: str = 'echo "Parley 0.1.0"', *,
                shebang: str = "/bin/sh") -> Path:
    """An executable script at ``path`` that answers ``--version`` as ``body`` does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{shebang}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_entry_matches_appinfo() -> None:
    entry = read_entry(ENTRY)
    assert entry["Type"] == "Application"
    assert entry["Name"] == appinfo.NAME
    assert entry["Comment"] == appinfo.COMMENT
    assert entry["Icon"] == appinfo.APP_ID  # themed icon name = app id = file name
    assert entry["Exec"] == entry["TryExec"] == appinfo.EXECUTABLE
    assert entry["StartupWMClass"] == appinfo.NAME  # Qt's WM_CLASS class is the app name
    assert entry["Terminal"] == "false"


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None,
                    reason="desktop-file-utils not installed")
def test_entry_is_valid() -> None:
    result = subprocess.run(["desktop-file-validate", str(ENTRY)], capture_output=True, text=True)
    assert result.returncode == 0 and "error" not in result.stdout, result.stdout


def test_exec_argv_parser() -> None:
    assert exec_argv('"/a b/\\\\$x \\\\"q\\\\" %%/p"') == ['/a b/$x "q" %/p']
    assert exec_argv("/usr/bin/parley") == ["/usr/bin/parley"]


@needs_sh
def test_install_and_uninstall_with_an_awkward_path(tmp_path: Path) -> None:
    app_dir = tmp_path / 'My Apps $HOME "x" 100%'
    app_dir.mkdir()
    exe = fake_parley(app_dir / "parley")

    result = run_install(tmp_path, "--exec", str(exe))
    assert result.returncode == 0, result.stderr
    data = tmp_path / "d"
    installed = data / "applications" / f"{appinfo.APP_ID}.desktop"
    entry = read_entry(installed)
    assert exec_argv(entry["Exec"]) == [str(exe)]
    assert entry["TryExec"] == str(exe)
    assert entry["Icon"] == appinfo.APP_ID
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(installed)], capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout
    icons = data / "icons" / "hicolor"
    for size in load("make_icons").LINUX_SIZES:
        assert (icons / f"{size}x{size}" / "apps" / f"{appinfo.APP_ID}.png").is_file()
    svg = icons / "scalable" / "apps" / f"{appinfo.APP_ID}.svg"
    assert svg.read_bytes() == (ROOT / "resources" / "icons" / "parley.svg").read_bytes()

    result = run_install(tmp_path, "--uninstall")
    assert result.returncode == 0, result.stderr
    leftovers = [p for p in data.rglob(f"{appinfo.APP_ID}*")]
    assert leftovers == []


@needs_sh
def test_install_refuses_a_missing_executable(tmp_path: Path) -> None:
    result = run_install(tmp_path, "--exec", str(tmp_path / "nope"))
    assert result.returncode == 1
    assert "is not an executable file" in result.stderr
    assert not (tmp_path / "d" / "applications").exists()


@needs_sh
def test_install_refuses_a_target_whose_interpreter_is_gone(tmp_path: Path) -> None:
    moved = tmp_path / "old-place" / ".venv" / "bin" / "python3.11"  # the folder moved
    exe = fake_parley(tmp_path / "new-place" / ".venv" / "bin" / "parley",
                      "import sys; from parley.gui.app import main; sys.exit(main())",
                      shebang=str(moved))
    result = run_install(tmp_path, "--exec", str(exe))
    assert result.returncode == 1 and result.stdout == ""
    assert "not writing a menu entry" in result.stderr
    assert f"its interpreter {moved} does not exist" in result.stderr
    assert not (tmp_path / "d" / "applications").exists()


@needs_sh
def test_install_refuses_a_target_that_does_not_run_as_parley(tmp_path: Path) -> None:
    exe = fake_parley(tmp_path / "bin" / "parley",
                      "echo \"ModuleNotFoundError: No module named 'gui'\" >&2; exit 1")
    result = run_install(tmp_path, "--exec", str(exe))
    assert result.returncode == 1
    assert f"{exe} does not run as Parley" in result.stderr
    assert "No module named 'gui'" in result.stderr
    assert not (tmp_path / "d" / "applications").exists()


@needs_sh
def test_a_source_tree_whose_venv_moved_is_skipped_for_a_parley_that_runs(tmp_path: Path) -> None:
    tree = tmp_path / "moved-checkout"
    shutil.copytree(LINUX, tree / "resources" / "linux")
    shutil.copytree(ROOT / "resources" / "icons", tree / "resources" / "icons")
    script = tree / "resources" / "linux" / INSTALL.name
    dead = fake_parley(tree / ".venv" / "bin" / "parley", "exit 0",
                       shebang=str(tmp_path / "checkout" / ".venv" / "bin" / "python"))

    alone = run_install(tmp_path, script=script)  # nothing else on PATH
    assert alone.returncode == 1 and "no Parley here runs" in alone.stderr
    assert f"{dead} does not run: its interpreter" in alone.stderr
    assert "--exec PATH" in alone.stderr
    assert not (tmp_path / "d" / "applications").exists()

    good = fake_parley(tmp_path / "pipx" / "bin" / "parley")
    found = run_install(tmp_path, script=script, path=f"{good.parent}:/usr/bin:/bin")
    assert found.returncode == 0, found.stderr
    entry = read_entry(tmp_path / "d" / "applications" / f"{appinfo.APP_ID}.desktop")
    assert exec_argv(entry["Exec"]) == [str(good)]


@needs_sh
def test_install_rejects_unknown_options(tmp_path: Path) -> None:
    assert run_install(tmp_path, "--frobnicate").returncode == 2


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_linux_png_icons_have_their_sizes() -> None:
    make_icons = load("make_icons")
    for size in make_icons.LINUX_SIZES:
        path = make_icons.HICOLOR / f"{size}x{size}" / "apps" / f"{appinfo.APP_ID}.png"
        assert png_size(path.read_bytes()) == (size, size), path


def test_windows_ico_holds_every_size() -> None:
    make_icons = load("make_icons")
    data = (make_icons.OUT / "parley.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind, count) == (0, 1, len(make_icons.ICO_SIZES))
    sizes = []
    for i in range(count):
        w, h, _c, _r, _planes, _bits, length, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * i: 22 + 16 * i])
        assert png_size(data[offset: offset + length]) == (w or 256, h or 256)
        sizes.append(w or 256)
    assert sizes == sorted(make_icons.ICO_SIZES)


def test_macos_icns_holds_every_type() -> None:
    make_icons = load("make_icons")
    data = (make_icons.OUT / "parley.icns").read_bytes()
    assert data[:4] == b"icns" and struct.unpack(">I", data[4:8])[0] == len(data)
    found, pos = {}, 8
    while pos < len(data):
        kind, length = data[pos: pos + 4].decode(), struct.unpack(">I", data[pos + 4: pos + 8])[0]
        found[kind] = png_size(data[pos + 8: pos + length])[0]
        pos += length
    assert found == dict(make_icons.ICNS_TYPES)


def test_pack_ico_round_trip() -> None:
    make_icons = load("make_icons")
    fake = {16: b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10",
            256: b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0"}
    data = make_icons.pack_ico(fake)
    assert struct.unpack("<HHH", data[:6]) == (0, 1, 2)
    first = struct.unpack("<BBBBHHII", data[6:22])
    second = struct.unpack("<BBBBHHII", data[22:38])
    assert first[0] == 16 and second[0] == 0  # 0 encodes 256 px
    assert data[first[7]: first[7] + first[6]] == fake[16]
    assert data[second[7]: second[7] + second[6]] == fake[256]
