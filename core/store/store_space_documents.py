"""The store's API for space documents (:mod:`parley.core.store.space_documents`).

Part of :class:`parley.core.store.store.Store` (which see: one transaction per method,
errors, thread confinement). Adding and replacing read the file's text first
(:func:`~parley.core.attachments.document_text.read_document`, outside the
transaction: a long PDF takes a while), then write it in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.core.attachments.document_text import read_document
from parley.core.store import space_documents, space_images
from parley.core.store.lifecycle import StoreBase
from parley.core.store.space_documents import DocumentHit, SpaceDocument
from parley.core.store.space_images import KeptImage


class SpaceDocumentsStore(StoreBase):
    """A space's documents: listed, added, replaced, removed, read and searched."""

    def space_documents(self, space_id: str) -> list[SpaceDocument]:
        """Return a space's documents in the order they were added ([] for none)."""
        return self._r(lambda c: space_documents.list_for(c, space_id))

    def add_space_document(self, space_id: str, name: str, data: bytes) -> SpaceDocument:
        """Add a file to a space's documents, placed last.

        Args:
            space_id: the space.
            name: the file name shown (no folders).
            data: the file's bytes (a PDF, a text or code file, or a PNG, JPEG, GIF or
                WebP image).

        Raises:
            NotADocument: another kind of file, an unreadable PDF, or no text in it.
            SpaceNotFound: no such space.
        """
        doc = read_document(data, name)
        return self._w(lambda c: space_documents.add(c, space_id, name, data, doc))

    def replace_space_document(self, document_id: str, name: str, data: bytes) -> SpaceDocument:
        """Put another file in a document's place (same position, new text).

        Raises:
            NotADocument: as for :meth:`add_space_document`.
            DocumentNotFound: the document was removed meanwhile.
        """
        doc = read_document(data, name)
        return self._w(lambda c: space_documents.replace(c, document_id, name, data, doc))

    def remove_space_document(self, document_id: str) -> None:
        """Remove a document from its space. Raises DocumentNotFound."""
        self._w(lambda c: space_documents.remove(c, document_id))

    def space_document_pages(self, document_id: str) -> list[str]:
        """Return a document's text by page (index 0 is page 1; [] when removed)."""
        return self._r(lambda c: space_documents.page_texts(c, document_id))

    def search_space_documents(self, space_id: str, query: str, limit: int = 8,
                               document_ids: Sequence[str] | None = None) -> list[DocumentHit]:
        """Find pages of a space's documents holding every word of ``query``, best first.

        Args:
            document_ids: only these documents (None: all of the space's).

        Raises:
            InvalidSearchQuery: nothing searchable in the query, or it is too long.
        """
        return self._r(
            lambda c: space_documents.search(c, space_id, query, limit, document_ids))

    def keep_space_images(self, shas: Sequence[str]) -> None:
        """Keep the bytes of the space's images with these sha256s as they are now, for
        the chat whose prompt is being frozen (:func:`parley.core.store.space_images.keep`)."""
        self._w(lambda c: space_images.keep(c, shas))

    def kept_space_images(self, shas: Sequence[str]) -> list[KeptImage]:
        """Return the images a chat was given, by sha256, in order (one stored nowhere any
        more left out: :func:`parley.core.store.space_images.read`)."""
        return self._r(lambda c: space_images.read(c, shas))
