"""packaging/bundle_filter.py: which Qt plugins and files the bundle keeps."""

from __future__ import annotations

import pytest

from tests.packaging.support import load

bf = load("bundle_filter")


@pytest.mark.parametrize(("filename", "name"), [
    ("/x/plugins/platforms/libqxcb.so", "qxcb"),
    ("C:/Qt/plugins/platforms/qwindows.dll", "qwindows"),
    ("libqcocoa.dylib", "qcocoa"),
    ("libqt-plugin-wayland-egl.so", "qt-plugin-wayland-egl"),
    ("libxdg-shell.so", "xdg-shell"),
])
def test_plugin_name(filename: str, name: str) -> None:
    assert bf.plugin_name(filename) == name


@pytest.mark.parametrize(("plugin_type", "filename", "kept"), [
    ("platforms", "libqoffscreen.so", True),
    ("platforms", "libqxcb.so", True),
    ("platforms", "libqwayland.so", True),
    ("platforms", "qwindows.dll", True),
    ("platforms", "libqcocoa.dylib", True),
    ("platforms", "libqvnc.so", False),
    ("platforms", "libqeglfs.so", False),
    ("imageformats", "libqwebp.so", True),
    ("imageformats", "qjpeg.dll", True),
    ("imageformats", "libqtiff.so", False),
    ("iconengines", "libqsvgicon.so", True),
    ("platformthemes", "libqgtk3.so", False),
    ("platformthemes", "libqxdgdesktopportal.so", True),
    ("tls", "libqopensslbackend.so", False),
    ("styles", "qmodernwindowsstyle.dll", True),  # a type not listed is kept whole
])
def test_keep_plugin(plugin_type: str, filename: str, kept: bool) -> None:
    assert bf.keep_plugin(plugin_type, filename) is kept


@pytest.mark.parametrize(("dest", "kept"), [
    ("PySide6/Qt/translations/qtbase_de.qm", False),
    ("PySide6\\Qt\\translations\\qt_fr.qm", False),
    ("PySide6/Qt/plugins/platforms/libqvnc.so", False),
    ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
    ("PySide6/Qt/plugins/wayland-shell-integration/libivi-shell.so", False),
    ("PySide6/Qt/lib/libQt6Core.so.6", True),
    ("parley/resources/icons/parley.svg", True),
    ("pygments/lexers/python.py", True),
])
def test_keep_entry(dest: str, kept: bool) -> None:
    assert bf.keep_entry(dest) is kept


def test_only_the_qt_modules_parley_imports_are_left() -> None:
    excluded = set(bf.EXCLUDED_MODULES)
    for used in ("PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets", "PySide6.QtSvg",
                 "PySide6.QtNetwork"):  # QtNetwork: QLocalServer for the single instance
        assert used not in excluded
    assert "PIL" not in excluded  # Pillow checks and downscales attachments
    for unused in ("PySide6.QtQml", "PySide6.QtWebEngineCore",
                   "PySide6.QtMultimedia", "PySide6.Qt3DCore", "PySide6.QtPdf"):
        assert unused in excluded
