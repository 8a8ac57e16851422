"""Statements spelled twice: for SQLite (the default) and for PostgreSQL.

The repositories are shared by both backends. Where a statement needs
SQLite-only SQL (JSON1's ``json_each``/``json_extract``, ``GLOB``, the scalar
``max(a, b)``), it is declared with :func:`dual_text` or :func:`dual_literal`:
SQLite compiles the SQLite spelling exactly as before, PostgreSQL compiles the
one from :mod:`parley.core.store.postgres.sql`. The choice is made by SQLAlchemy when the
statement is compiled for the connection's dialect, so call sites stay the same.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import literal_column, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import BindParameter, ColumnClause, TextClause
from sqlalchemy.sql.visitors import InternalTraversal

POSTGRESQL = "postgresql"


def is_postgresql(con: Connection) -> bool:
    """True when ``con`` is a connection to PostgreSQL (else SQLite)."""
    return bool(con.dialect.name == POSTGRESQL)


class DualText(TextClause):
    """A :func:`sqlalchemy.text` statement with a PostgreSQL spelling (``pg``)."""

    inherit_cache = True
    # Both spellings are part of the cache key (the compiled form depends on ``pg`` too).
    _traverse_internals = [
        *TextClause._traverse_internals,
        ("pg", InternalTraversal.dp_clauseelement),
    ]
    pg: TextClause


class DualLiteral(ColumnClause[Any]):
    """A literal SQL column expression with a PostgreSQL spelling (``pg``)."""

    inherit_cache = True
    _traverse_internals = [
        *ColumnClause._traverse_internals,
        ("pg", InternalTraversal.dp_clauseelement),
    ]
    pg: ColumnClause[Any]


def dual_text(sqlite: str, postgresql: str, *params: BindParameter[Any]) -> TextClause:
    """A statement compiled from ``sqlite`` on SQLite and from ``postgresql`` on PostgreSQL.

    Args:
        sqlite: the SQLite statement (what ``text()`` would have been given).
        postgresql: the same statement for PostgreSQL, with the same named parameters.
        params: bind parameters to declare on both (e.g. ``bindparam("ns", expanding=True)``).
    """
    out = DualText(sqlite)
    if params:
        out = out.bindparams(*params)
    pg = text(postgresql)
    out.pg = pg.bindparams(*params) if params else pg
    return out


def dual_literal(sqlite: str, postgresql: str, type_: Any = None) -> ColumnClause[Any]:
    """A literal column expression (like ``literal_column``) spelled per dialect."""
    out = DualLiteral(sqlite, type_=type_, is_literal=True)
    out.pg = literal_column(postgresql, type_)
    return out


@compiles(DualText, POSTGRESQL)
def _text_pg(element: DualText, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.pg, **kw))


@compiles(DualText)
def _text_default(element: DualText, compiler: Any, **kw: Any) -> str:
    return str(compiler.visit_textclause(element, **kw))


@compiles(DualLiteral, POSTGRESQL)
def _literal_pg(element: DualLiteral, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.pg, **kw))


@compiles(DualLiteral)
def _literal_default(element: DualLiteral, compiler: Any, **kw: Any) -> str:
    return str(compiler.visit_column(element, **kw))
