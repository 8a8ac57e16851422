"""What the Parley bundle leaves out: Python modules, Qt plugins, Qt translations.

Used by ``packaging/parley.spec`` (PyInstaller runs the spec, which imports this
module from ``packaging/``). Parley's GUI imports only QtCore, QtGui, QtWidgets
and QtSvg, so every other Qt module is excluded, and of the plugins PyInstaller's
Qt hooks collect for QtGui only those Parley can use are kept. Plugins are
filtered *before* PyInstaller resolves their shared-library dependencies, so a
dropped plugin does not drag its libraries in (e.g. the GTK 3 platform theme
would add GTK, cairo and pango from the build machine).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

#: Python modules never bundled: other Qt modules and bindings, test and type
#: tools (pulled in by optional plugins of pydantic and anyio), GUI toolkits.
EXCLUDED_MODULES: list[str] = [
    # Qt modules Parley does not use (PySide6-Essentials ships these).
    *(f"PySide6.{m}" for m in (
        "QtDBus", "QtSql", "QtQml", "QtQuick", "QtQuickControls2",
        "QtQuickWidgets", "QtQuickTest", "QtOpenGL", "QtOpenGLWidgets", "QtPrintSupport",
        "QtTest", "QtXml", "QtConcurrent", "QtHelp", "QtDesigner", "QtUiTools",
        "QtSvgWidgets", "QtStateMachine", "QtWebEngineCore", "QtWebEngineWidgets",
        "QtWebEngineQuick", "QtWebChannel", "QtWebSockets", "QtMultimedia",
        "QtMultimediaWidgets", "QtSpatialAudio", "Qt3DCore", "Qt3DRender", "Qt3DInput",
        "Qt3DLogic", "Qt3DAnimation", "Qt3DExtras", "QtCharts", "QtDataVisualization",
        "QtGraphs", "QtGraphsWidgets", "QtPdf", "QtPdfWidgets", "QtBluetooth", "QtNfc",
        "QtPositioning", "QtLocation", "QtSensors", "QtSerialPort", "QtSerialBus",
        "QtRemoteObjects", "QtScxml", "QtTextToSpeech", "QtHttpServer", "QtNetworkAuth",
        "QtAxContainer", "QtQuick3D",
    )),
    "PyQt5", "PyQt6", "PySide2",
    # Development tools reachable only through optional plugins.
    "mypy", "pydantic.mypy", "pydantic.v1.mypy", "hypothesis",
    "pydantic.v1._hypothesis_plugin", "pytest", "_pytest", "ast_serialize", "librt",
    "numpy", "IPython", "setuptools", "pkg_resources", "pip",
    # httpx2's command-line client (needs click); the library works without it.
    "click",
    "tkinter", "_tkinter",
    # The PostgreSQL store's driver is the optional 'postgresql' extra (pyproject.toml), not a
    # dependency: the bundle opens sessions.db files and, given a database address, says
    # PostgreSQL support is not installed (parley.core.store.errors.DriverMissing).
    "psycopg", "psycopg_binary", "psycopg_c", "psycopg_pool",
]

#: Qt plugins kept, by plugin type: a set of plugin names (file name without
#: ``lib`` and extension), or None to keep every plugin of that type. A type
#: not listed here is kept whole (e.g. macOS and Windows styles, accessibility).
KEEP_PLUGINS: dict[str, set[str] | None] = {
    # offscreen (self-test, CI), xcb (X11), wayland; minimal as a last resort;
    # cocoa (macOS), windows / direct2d (Windows).
    "platforms": {"qoffscreen", "qxcb", "qwayland", "qminimal", "qcocoa", "qwindows",
                  "qdirect2d"},
    "platforms/darwin": None,
    "xcbglintegrations": None,
    "wayland-shell-integration": {"xdg-shell"},
    "wayland-decoration-client": None,
    "wayland-graphics-integration-client": {"qt-plugin-wayland-egl"},
    # The desktop portal theme follows the system's colour scheme; the GTK 3
    # theme would need GTK from the build machine.
    "platformthemes": {"qxdgdesktopportal"},
    "platforminputcontexts": None,
    # What people paste and providers return: PNG (built into Qt), JPEG, GIF,
    # WebP; SVG for Parley's own icons; ICO for Windows.
    "imageformats": {"qjpeg", "qgif", "qwebp", "qsvg", "qico"},
    "iconengines": {"qsvgicon"},
    # Only for eglfs / linuxfb / networking, which Parley does not use.
    "egldeviceintegrations": set(),
    "generic": set(),
    "networkinformation": set(),
    "tls": set(),
    "sqldrivers": set(),
    "printsupport": set(),
    "qmltooling": set(),
}


def plugin_name(filename: str) -> str:
    """Return a plugin's name from its file name: ``libqxcb.so`` → ``qxcb``,
    ``qwindows.dll`` → ``qwindows``, ``libqt-plugin-wayland-egl.so`` →
    ``qt-plugin-wayland-egl``."""
    base = os.path.basename(filename)
    if base.startswith("lib") and not base.endswith(".dll"):
        base = base[3:]
    return base.split(".", 1)[0]


def keep_plugin(plugin_type: str, filename: str) -> bool:
    """True when the plugin file of ``plugin_type`` belongs in the bundle (see KEEP_PLUGINS)."""
    wanted = KEEP_PLUGINS.get(plugin_type)
    return wanted is None or plugin_name(filename) in wanted


def keep_entry(dest: str) -> bool:
    """True when a collected file (its path inside the bundle) stays in the bundle.

    Drops Qt's translations (Parley is in English) and, as a safety net, any
    Qt plugin :func:`keep_plugin` rejects that reached the bundle another way.
    """
    parts = dest.replace("\\", "/").split("/")
    if "Qt" in parts and "translations" in parts:
        return False
    if "plugins" in parts:
        i = parts.index("plugins")
        if len(parts) > i + 2:
            return keep_plugin("/".join(parts[i + 1:-1]), parts[-1])
    return True


def install_qt_plugin_filter() -> None:
    """Make PyInstaller's Qt hooks collect only the plugins :func:`keep_plugin` accepts.

    Wraps ``QtLibraryInfo.collect_plugins`` (PyInstaller >= 6): the hooks of
    QtGui, QtWidgets and QtSvg call it per plugin type during Analysis.
    """
    from PyInstaller.utils.hooks.qt import QtLibraryInfo

    original: Callable[[Any, str], list[tuple[str, str]]] = QtLibraryInfo.collect_plugins
    if getattr(original, "parley_filtered", False):
        return

    def collect_plugins(self: Any, plugin_type: str) -> list[tuple[str, str]]:
        return [(src, dst) for src, dst in original(self, plugin_type)
                if keep_plugin(plugin_type, src)]

    collect_plugins.parley_filtered = True  # type: ignore[attr-defined]
    QtLibraryInfo.collect_plugins = collect_plugins
