"""The bytes of the images a space gave its chats, kept as they were given.

A space's image documents (:mod:`parley.core.store.space_documents`) reach a chat as
images in its first message (:mod:`parley.core.tools.space_images`). A chat keeps the
set it was given (frozen with its prompt) even when a document is replaced later, so
when the prompt is frozen each image's bytes are copied (:func:`keep`) into the
``attachments`` table, keyed by their sha256 like a message's attached files, and
read from there (:func:`read`). Functions take a Connection inside the caller's
transaction.

A copied row is released like any attachment only when the last *turn* referencing the
same bytes goes (``schema.ATTACHMENT_DDL``); :func:`read` then falls back to a space
document with the same sha256 (same bytes) when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Connection

from parley.core.store import attachments
from parley.core.store.schema import attachments as A
from parley.core.store.schema import space_documents as D


@dataclass(frozen=True, slots=True)
class KeptImage:
    """One image as a chat was given it.

    Attributes:
        sha256: the sha256 of its bytes (lowercase hex): its attachment id.
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``.
        data: its bytes.
    """

    sha256: str
    media_type: str
    data: bytes


def keep(con: Connection, shas: Sequence[str]) -> None:
    """Copy the bytes of the space documents with these sha256s into ``attachments``
    (rows there already are kept as they are)."""
    if not shas:
        return
    rows = con.execute(select(D.c.data, D.c.media_type).where(D.c.sha256.in_(list(shas))))
    for data, media_type in rows:
        attachments.put(con, bytes(data), media_type)


def read(con: Connection, shas: Sequence[str]) -> list[KeptImage]:
    """Return the images with these sha256s, in the same order; one stored nowhere any
    more (see the module's note) is left out."""
    if not shas:
        return []
    found: dict[str, KeptImage] = {}
    for sha, media_type, data in con.execute(
            select(A.c.sha256, A.c.media_type, A.c.data).where(A.c.sha256.in_(list(shas)))):
        found[sha] = KeptImage(sha, media_type, bytes(data))
    missing = [s for s in shas if s not in found]
    if missing:
        for sha, media_type, data in con.execute(
                select(D.c.sha256, D.c.media_type, D.c.data).where(D.c.sha256.in_(missing))):
            found.setdefault(sha, KeptImage(sha, media_type, bytes(data)))
    return [found[s] for s in shas if s in found]
