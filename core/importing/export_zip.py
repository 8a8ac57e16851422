"""A data export as it comes: ChatGPT's and Claude.ai's are one ``.zip``.

Parley reads the zip itself, so nothing is unpacked to disk: no entry can become a
link (``unzip`` makes a symbolic link of an entry marked as one, which is how a
hostile export reached ``/proc/self/environ``), and no name can land anywhere.
:func:`open_export` finds the export's ``conversations.json`` (at the top, or in one
folder) and gives its text and an :class:`ExportZip` finding the export's files
beside it, by the same rules as an unpacked folder
(``parley.core.importing.export_folder``):

* only regular entries: one marked as a symbolic link (its Unix mode in the high half
  of ``external_attr``) or as any other special file is not read; nor is an encrypted
  entry, or one whose name is absolute or holds ``..``;
* at most :data:`~parley.core.importing.export_folder.MAX_EXPORT_FILE_BYTES` an entry
  and :data:`~parley.core.importing.export_folder.MAX_EXPORT_FILES_BYTES` for all of
  them; sizes are what the zip declares, and ``zipfile`` never gives more bytes than
  declared (a mismatch, as in a zip bomb, fails its CRC check);
* each file's kind decided by its bytes.

A zip's directory is read whole when it is opened, so its entry count is read first
from its end record and a zip of more than :data:`MAX_ZIP_ENTRIES` is refused.
"""

from __future__ import annotations

import posixpath
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

from parley.core.convert.chatgpt import FileRefused
from parley.core.convert.errors import NotAConversation
from parley.core.importing.conversation import ImportTooLarge
from parley.core.importing.export_folder import DEPTH, LINK, MAX_FOLDER_FILES, ExportFiles, asset_id

__all__ = ["MAX_ZIP_ENTRIES", "ZIP_MAGIC", "ExportZip", "open_export"]

#: The first bytes of a zip (a local file header; an empty zip starts with its end record).
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
#: The most entries a zip may list (as many as the files looked at in an export's folder).
MAX_ZIP_ENTRIES = MAX_FOLDER_FILES
CONVERSATIONS = "conversations.json"
_DRIVE = re.compile(r"^[A-Za-z]:")
_END = b"PK\x05\x06"  # end of central directory record (APPNOTE 4.3.16)
_END64_LOCATOR = b"PK\x06\x07"  # zip64 end of central directory locator (4.3.15)
_END64 = b"PK\x06\x06"  # zip64 end of central directory record (4.3.14)
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, EOFError,
                ValueError)


class ExportZip(ExportFiles[zipfile.ZipInfo]):
    """The files of a zipped export beside its ``conversations.json``.

    Args:
        archive: the open zip (kept open by the caller while the import reads).
        prefix: the folder of ``conversations.json`` in the zip (``""`` or ``"name/"``).
    """

    def __init__(self, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__()
        self.archive = archive
        self.prefix = prefix

    def _list(self) -> dict[str, list[zipfile.ZipInfo]]:
        found: dict[str, list[zipfile.ZipInfo]] = {}
        for info in self.archive.infolist():
            name = _name(info)
            if info.is_dir() or not name.startswith(self.prefix):
                continue
            inner = name[len(self.prefix):]
            key = asset_id(posixpath.basename(inner))
            if key is not None and inner.count("/") <= DEPTH:
                found.setdefault(key, []).append(info)
        return found

    def _shown(self, entry: zipfile.ZipInfo) -> str:
        return _name(entry)

    def _raw(self, entry: zipfile.ZipInfo, shown: str) -> bytes | FileRefused:
        problem = entry_problem(entry)
        if problem is not None:
            return FileRefused(shown, problem)
        over = self.capped(shown, entry.file_size)
        if over is not None:
            return over
        try:
            with self.archive.open(entry) as fh:
                return fh.read(entry.file_size + 1)
        except _READ_ERRORS as exc:
            return FileRefused(shown, f"it could not be read from the zip ({exc})")


def entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip entry is not read (a link, a special file, encrypted, a name leading out
    of the export), or None for a regular file."""
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return LINK
    if kind not in (0, stat.S_IFREG):
        return "it is not a regular file"
    if info.flag_bits & 0x1:
        return "it is encrypted"
    name = _name(info)
    if name.startswith("/") or _DRIVE.match(name):
        return "its name is an absolute path, outside the export"
    if ".." in name.split("/"):
        return "its name leads out of the export (“..”)"
    return None


def _name(info: zipfile.ZipInfo) -> str:
    """An entry's name with ``/`` between folders (some Windows tools write ``\\``)."""
    return info.filename.replace("\\", "/")


def open_export(path: Path, max_bytes: int) -> tuple[zipfile.ZipFile, bytes, ExportZip]:
    """Open a zipped export: the zip (the caller closes it), its ``conversations.json``'s
    bytes and the finder of its files (worker thread).

    Args:
        path: the ``.zip``.
        max_bytes: the largest ``conversations.json`` read
            (``parley.core.importing.files.MAX_HISTORY_BYTES``).

    Raises:
        NotAConversation: not a readable zip, too many entries, or no
            ``conversations.json`` at its top or in one folder.
        ImportTooLarge: its ``conversations.json`` is over ``max_bytes``.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        entries = _entry_count(fh)
    if entries is not None and entries > MAX_ZIP_ENTRIES:
        raise NotAConversation(f"it is a ZIP archive of {entries:,} files, more than the "
                               f"{MAX_ZIP_ENTRIES:,} of any data export Parley reads")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, *_READ_ERRORS) as exc:
        raise NotAConversation(f"it is a damaged ZIP archive ({exc})") from exc
    try:
        info = _conversations(archive)
        data = _read_conversations(archive, info, max_bytes)
    except BaseException:
        archive.close()
        raise
    prefix = _name(info)[: -len(CONVERSATIONS)]
    return archive, data, ExportZip(archive, prefix)


def _conversations(archive: zipfile.ZipFile) -> zipfile.ZipInfo:
    """The ``conversations.json`` entry nearest the top (at most one folder down)."""
    found = [info for info in archive.infolist()
             if posixpath.basename(_name(info)) == CONVERSATIONS and _name(info).count("/") <= 1
             and entry_problem(info) is None]
    if not found:
        raise NotAConversation(
            "it is a ZIP archive holding no conversations.json; Parley reads ChatGPT's and "
            "Claude.ai's data exports (zipped or unzipped) and single conversation files")
    return min(found, key=lambda i: _name(i).count("/"))


def _read_conversations(archive: zipfile.ZipFile, info: zipfile.ZipInfo,
                        max_bytes: int) -> bytes:
    if info.file_size > max_bytes:
        raise ImportTooLarge(info.file_size, max_bytes)
    try:
        with archive.open(info) as fh:
            return fh.read(info.file_size + 1)
    except _READ_ERRORS as exc:
        raise NotAConversation(f"its {_name(info)} cannot be read from the zip ({exc})") from exc


def _entry_count(fh: BinaryIO) -> int | None:
    """The number of entries a zip's end record declares (zip64 too), None when there is
    no end record (``zipfile`` then says what is wrong)."""
    fh.seek(0, 2)
    size = fh.tell()
    tail_start = max(0, size - (22 + 65535))  # the record, then a comment of up to 64 KiB
    fh.seek(tail_start)
    tail = fh.read()
    at = tail.rfind(_END)
    if at < 0 or len(tail) - at < 22:
        return None
    (count,) = struct.unpack("<H", tail[at + 10:at + 12])
    locator = at - 20
    if count != 0xFFFF or locator < 0 or tail[locator:locator + 4] != _END64_LOCATOR:
        return int(count)
    (offset,) = struct.unpack("<Q", tail[locator + 8:locator + 16])
    fh.seek(offset)
    record = fh.read(56)
    if len(record) < 56 or record[:4] != _END64:
        return None
    (count64,) = struct.unpack("<Q", record[32:40])
    return int(count64)
