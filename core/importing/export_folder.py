"""The files of an unpacked export (ChatGPT's images and uploads), read safely.

An export comes from elsewhere, and unpacking a zip can make anything of it: a link
named like an image that points at ``~/.ssh/id_rsa`` or ``/proc/self/environ``, a
folder that is a link out of the export, a file of gigabytes, a text named ``.png``.
What is imported lands in the database and is sent to models when the chat goes on,
so :class:`ExportFolder` reads only what the export itself holds:

* regular files only: symbolic links (to files or folders) are not followed, and a
  file with other hard links (a name for a file that may live outside) is not read;
* inside the export's folder (its real path; two levels of subfolders, as ChatGPT
  makes them): a file whose real path lies elsewhere is not read. Asset ids come
  from the export's JSON but are only ever looked up among the listed names, never
  joined to a path, so ``..`` or an absolute path in the JSON reaches nothing;
* at most :data:`MAX_EXPORT_FILE_BYTES` a file (the most Parley attaches,
  ``parley.core.attachments.files.MAX_FILE_BYTES``) and
  :data:`MAX_EXPORT_FILES_BYTES` for all files of one import;
* each file's kind decided by its bytes (``parley.core.attachments.files.from_bytes``,
  which also decodes images whole), and refused when its name or the export says
  it is another kind (an image, a PDF or text).

A file not read is a :class:`~parley.core.convert.chatgpt.FileRefused` naming it and
why; the converter notes it and the import's summary names it. Nothing is written
meanwhile (the import writes everything in one transaction after reading).
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
import stat
from pathlib import Path
from typing import Generic, TypeVar

from parley.core.attachments.files import (
    MAX_FILE_BYTES,
    Attachment,
    AttachmentTooLarge,
    EmptyFile,
    UnsupportedFile,
    decode_text,
    from_bytes,
    size_text,
    what_bytes,
)
from parley.core.convert.chatgpt import Claim, ExportFile, FileRefused

__all__ = ["LINK", "MAX_EXPORT_FILES_BYTES", "MAX_EXPORT_FILE_BYTES", "MAX_FOLDER_FILES",
           "ExportFiles", "ExportFolder", "asset_id"]

#: The largest file of an export that is read (bytes): what Parley attaches, 64 MB.
MAX_EXPORT_FILE_BYTES = MAX_FILE_BYTES
#: All files read for one import together (bytes): 1 GB, as much as the largest history
#: file (``parley.core.importing.files.MAX_HISTORY_BYTES``); they are held in memory
#: until the one transaction writes them.
MAX_EXPORT_FILES_BYTES = 1024 * 1024 * 1024
#: How many files of an export's folder are looked at to find its images and files.
MAX_FOLDER_FILES = 50_000
#: An export's file name starts with its asset id: ``file-AbC123-cat.png``, ``file_00ab….png``.
_ASSET = re.compile(r"(file[-_][A-Za-z0-9]+)")
#: Levels of subfolders looked into (ChatGPT: ``dalle-generations/``, ``user-…/``).
DEPTH = 2
#: How each kind is named in a refusal (also ``parley.core.importing.inline_files``).
KIND_WORDS = {"image": "an image", "document": "a PDF", "text": "text"}
E = TypeVar("E")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


#: Why a link is not read (a folder's symbolic link or hard link, a zip's link entry).
LINK = "it is a link to another file; Parley imports only the files the export itself holds"


class ExportFiles(Generic[E]):
    """Finds an export's files by asset id (``file-abc`` → ``file-abc-cat.png``): the part
    shared by a folder (:class:`ExportFolder`) and a zip (``parley.core.importing.export_zip``).

    A :data:`~parley.core.convert.chatgpt.FileFinder`. The entries are listed once, on the
    first look-up; each is read at most once per claim (an image shown in many messages
    counts once against the total). Subclasses list entries (``_list``), name them
    (``_shown``) and read one (``_raw``, using :meth:`capped` before reading).
    """

    def __init__(self) -> None:
        self.by_id: dict[str, list[E]] | None = None
        self.read_bytes = 0
        self._seen: dict[tuple[str, Claim], ExportFile | FileRefused | None] = {}

    def __call__(self, asset: str, claim: Claim = "") -> ExportFile | FileRefused | None:
        """The file of ``asset``, a refusal naming it, or None when the export has none.

        Args:
            asset: the asset id the export's JSON names (``file-AbC123``).
            claim: what the export says the file is (``""``: it does not say).
        """
        if self.by_id is None:
            self.by_id = self._list()
        refused: FileRefused | None = None
        for entry in self.by_id.get(asset, []):
            shown = self._shown(entry)
            key = (shown, claim)
            if key not in self._seen:
                self._seen[key] = self._read(entry, shown, claim)
            found = self._seen[key]
            if isinstance(found, ExportFile):
                return found
            refused = refused or found
        return refused

    def capped(self, shown: str, size: int) -> FileRefused | None:
        """A refusal when a file of ``size`` bytes is over a cap, else None (then counted)."""
        if size > MAX_EXPORT_FILE_BYTES:
            return FileRefused(shown, f"it is {size_text(size)}; Parley imports files "
                                      f"of up to {size_text(MAX_EXPORT_FILE_BYTES)}")
        if self.read_bytes + size > MAX_EXPORT_FILES_BYTES:
            return FileRefused(shown, "the export's files read before it reach "
                                      f"{size_text(MAX_EXPORT_FILES_BYTES)}, the most one "
                                      "import takes; import the rest separately")
        self.read_bytes += size
        return None

    def _read(self, entry: E, shown: str, claim: Claim) -> ExportFile | FileRefused | None:
        """Read one listed entry if it is the export's own, of a kind it claims."""
        try:
            data = self._raw(entry, shown)
        except OSError as exc:
            return FileRefused(shown, f"it could not be read ({exc.strerror or exc})")
        if isinstance(data, FileRefused):
            return data
        return _recognise(data, shown, claim)

    def _list(self) -> dict[str, list[E]]:
        raise NotImplementedError

    def _shown(self, entry: E) -> str:
        raise NotImplementedError

    def _raw(self, entry: E, shown: str) -> bytes | FileRefused:
        raise NotImplementedError


def asset_id(name: str) -> str | None:
    """The asset id a file name starts with (``file-AbC123-cat.png`` → ``file-AbC123``)."""
    key = _ASSET.match(name)
    return None if key is None else key.group(1)


class ExportFolder(ExportFiles[Path]):
    """An unpacked export's files, in its folder and two levels of subfolders.

    Args:
        folder: the export's folder (where its ``conversations.json`` is).
    """

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.root = Path(os.path.realpath(folder))

    def _list(self) -> dict[str, list[Path]]:
        """Names starting with an asset id, in the folder and two levels below it; links
        to folders are not entered (``os.walk`` without ``followlinks``)."""
        found: dict[str, list[Path]] = {}
        count = 0
        base = len(self.root.parts)
        for root, dirs, files in os.walk(self.root):
            if len(Path(root).parts) - base >= DEPTH:
                dirs[:] = []
            for name in files:
                key = asset_id(name)
                if key is not None:
                    found.setdefault(key, []).append(Path(root) / name)
                count += 1
                if count >= MAX_FOLDER_FILES:
                    return found
        return found

    def _shown(self, entry: Path) -> str:
        return str(entry.relative_to(self.root))

    def _raw(self, entry: Path, shown: str) -> bytes | FileRefused:
        """The file's bytes when it is a regular file of the export within the caps."""
        st = os.lstat(entry)
        if stat.S_ISLNK(st.st_mode):
            return FileRefused(shown, LINK)
        if not stat.S_ISREG(st.st_mode):
            return FileRefused(shown, "it is not a regular file")
        if st.st_nlink > 1:
            return FileRefused(shown, "it is also linked elsewhere (a hard link); Parley "
                                      "imports only the files the export itself holds")
        if not Path(os.path.realpath(entry)).is_relative_to(self.root):
            return FileRefused(shown, "it lies outside the export's folder")
        over = self.capped(shown, st.st_size)
        if over is not None:
            return over
        data = _read_same(entry, st)
        return FileRefused(shown, "it changed while it was read") if data is None else data


def _read_same(path: Path, seen: os.stat_result) -> bytes | None:
    """Read ``path`` (not following a link) if it is still the file ``seen`` was
    (same device, inode, size); None when it was replaced meanwhile."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (seen.st_dev, seen.st_ino)
                or st.st_size != seen.st_size):
            return None
        chunks: list[bytes] = []
        left = st.st_size + 1  # one byte more: a file that grew is noticed
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if len(data) == seen.st_size else None


def _recognise(data: bytes, shown: str, claim: Claim) -> ExportFile | FileRefused | None:
    """The file as its bytes say, or a refusal when its name or the export says otherwise.

    A kind Parley does not attach (a spreadsheet), named as nothing else, is None:
    "not included", as before this check.
    """
    named = _named_kind(shown)
    try:
        att = from_bytes(data, Path(shown).name)
    except UnsupportedFile as exc:
        said = _said(claim, named)
        return FileRefused(shown, f"{said}, but its bytes are {exc.what}") if said else None
    except AttachmentTooLarge as exc:
        return FileRefused(shown, f"it is too large: {exc.problem}")
    except EmptyFile:  # refused when attached, but the chat held it: kept as it was
        text = decode_text(data) or ""
        att = Attachment(Path(shown).name, "text/plain", text.encode("utf-8"), text=text)
    said = _said(claim if claim and claim != att.kind else "",
                 named if named and named != att.kind else "")
    if said:
        return FileRefused(shown, f"{said}, but its bytes are {what_bytes(data)}")
    return ExportFile(att.media_type, base64.b64encode(att.data).decode("ascii"))


def _named_kind(name: str) -> Claim:
    """What a file's name says it is (its extension), "" when it says none of the three."""
    media, _ = mimetypes.guess_type(name)
    if media is None:
        return ""
    if media.startswith("image/"):
        return "image"
    if media == "application/pdf":
        return "document"
    return "text" if media.startswith("text/") else ""


def _said(claim: Claim, named: Claim) -> str:
    """"its name says it is an image" / "the export says it is a PDF" ("" for neither)."""
    if named:
        return f"its name says it is {KIND_WORDS[named]}"
    if claim:
        return f"the export says it is {KIND_WORDS[claim]}"
    return ""

