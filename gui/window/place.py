"""The window's size, place and panes kept in a small file beside sessions.db, so the
window's first paint already has them.

The store keeps them too (``WINDOW_GEOMETRY``, ``WINDOW_SPLITTER``: this machine's rows
of ``app_state``), but the store opens after the first paint: a window painted at the
default size jumped to its saved one seconds later. This file, ``window.ini``
(``parley.core.paths.PLACE_NAME``) in the data folder, is Qt's ``QSettings`` in its INI
format: read in ``MainWindow.__init__`` before the window is shown (well under a
millisecond, no store opened), and written when the window closes, whole, to a
temporary file renamed over the old one (``QSaveFile``) under Qt's lock file. Its keys
are the store's rows for this machine (``WINDOW_GEOMETRY.row``), so a data folder carried
to another computer does not bring this one's window with it.

A missing, unreadable or damaged file, or a value of another kind, gives nothing: the
window keeps its default size (never a start-up failure). Qt's ``restoreGeometry`` keeps
a restored window on a screen that is there and no larger than that screen's available
area (a screen unplugged since: the primary), maximized or full screen as it was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from parley.core import private
from parley.core.app_state import WINDOW_GEOMETRY, WINDOW_SPLITTER
from parley.core.paths import PLACE_NAME, find_data_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Place:
    """The window's place as kept: Qt's ``saveGeometry()`` and the splitter's sizes
    ([sidebar px, chat px]); None for what the file does not hold (or holds damaged)."""

    geometry: QByteArray | None
    sizes: list[int] | None


def place_file(home: str | Path | None) -> Path:
    """The file of the data folder ``home`` (None: ``PARLEY_HOME`` or the platform's)."""
    return find_data_dir(home) / PLACE_NAME


def _settings(path: Path) -> QSettings:
    return QSettings(str(path), QSettings.Format.IniFormat)


def read_place(path: Path) -> Place:
    """This machine's place kept in ``path``; never raises (nothing usable: Nones)."""
    if not path.is_file():
        return Place(None, None)
    settings = _settings(path)
    if settings.status() != QSettings.Status.NoError:
        log.info("%s could not be read (%s): the default size", path, settings.status().name)
        return Place(None, None)
    geometry = settings.value(WINDOW_GEOMETRY.row(None))
    sizes = settings.value(WINDOW_SPLITTER.row(None))
    return Place(geometry if isinstance(geometry, QByteArray) and not geometry.isEmpty()
                 else None, _sizes(sizes))


def _sizes(value: object) -> list[int] | None:
    """Two sizes of 0 or more px (the INI file gives them back as strings), else None."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    try:
        sizes = [int(v) for v in value]
    except (TypeError, ValueError):
        return None
    return sizes if all(s >= 0 for s in sizes) and sum(sizes) > 0 else None


def write_place(path: Path, geometry: QByteArray, sizes: list[int]) -> bool:
    """Keep this machine's place in ``path`` (atomically: ``QSaveFile``; ``0600`` as every
    file of the data folder: ``parley.core.private``). Never raises; False (logged) when it
    could not be written (a read-only folder, a full disk)."""
    settings = _settings(path)
    settings.setValue(WINDOW_GEOMETRY.row(None), geometry)
    settings.setValue(WINDOW_SPLITTER.row(None), [int(s) for s in sizes])
    settings.sync()
    if settings.status() != QSettings.Status.NoError:
        log.warning("the window's place could not be kept in %s (%s)", path,
                    settings.status().name)
        return False
    private.narrow(path, private.FILE_MODE)  # QSaveFile makes it 0644 (the umask's)
    return True
