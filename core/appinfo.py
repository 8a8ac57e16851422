"""Parley's identity, declared once: name, version, description, ids.

The window (``gui/app.py``), the packaged bundle (``packaging/parley.spec``:
macOS ``Info.plist``, Windows version resource) and the Linux desktop entry
(``resources/linux/org.parley.Parley.desktop``, checked against these values by
``tests/packaging``) all read these values, so they cannot drift apart.
"""

from __future__ import annotations

from parley.core import __version__

NAME = "Parley"
"""The product name shown to people (window title, menus, bundle name)."""

VERSION = __version__
"""The release, ``MAJOR.MINOR.PATCH`` (from ``parley.core.__version__``)."""

DESCRIPTION = "A desktop chat application for large language models that never loses a word."
"""One sentence saying what Parley is (pyproject description, bundle metadata)."""

COMMENT = "Chat with Claude, GPT and local models"
"""The short tooltip of the desktop entry (freedesktop ``Comment=``)."""

APP_ID = "org.parley.Parley"
"""Reverse-DNS application id: the desktop entry's file name (without ``.desktop``),
the icon name, Qt's ``desktopFileName`` (Wayland app id) and the macOS bundle id."""

ORGANIZATION = "Parley"
"""Qt's organization name (settings paths on some platforms)."""

EXECUTABLE = "parley"
"""The command name (the gui-script and the bundled executable)."""

COPYRIGHT = "Copyright (c) the Parley authors. MIT licence."
"""The copyright line of the Windows version resource and macOS Info.plist."""


def version_tuple() -> tuple[int, int, int, int]:
    """Return :data:`VERSION` as four integers, as Windows version resources need.

    Returns:
        ``(major, minor, patch, 0)``; a non-numeric part (``"1.0.0rc1"``) keeps
        its leading digits (``0`` when it has none).
    """
    parts = [_leading_int(p) for p in VERSION.split(".")[:3]]
    parts += [0] * (4 - len(parts))
    return (parts[0], parts[1], parts[2], parts[3])


def _leading_int(text: str) -> int:
    digits = ""
    for ch in text:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0
