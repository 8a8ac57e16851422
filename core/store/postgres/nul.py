"""Text PostgreSQL cannot hold: the NUL character (U+0000).

SQLite keeps a NUL in any text; PostgreSQL refuses it in a ``text`` value
(``DataError``: the save fails). Messages are stored as JSON, where a NUL is
written ``\\u0000``, so they keep it on both backends. Text saved in a plain
column — a chat's title and system prompt, a space's name, a model's name —
goes to PostgreSQL without its NUL characters (invisible, never meaningful
there) rather than failing the save: :func:`register` installs psycopg dumpers
that leave them out, on each connection of the store's engine.
"""

from __future__ import annotations

from typing import Any

from psycopg.types.string import StrBinaryDumper, StrDumperUnknown

NUL = "\x00"


class _TextWithoutNul(StrDumperUnknown):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace(NUL, "") if NUL in obj else obj)


class _BinaryWithoutNul(StrBinaryDumper):
    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace(NUL, "") if NUL in obj else obj)


def register(dbapi_connection: Any) -> None:
    """Make ``dbapi_connection`` (a psycopg connection) send ``str`` values without NUL."""
    dbapi_connection.adapters.register_dumper(str, _TextWithoutNul)
    dbapi_connection.adapters.register_dumper(str, _BinaryWithoutNul)
