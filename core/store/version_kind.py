"""Is this fork a version? The SQL, declared once for both backends.

The rule (:mod:`parley.core.store.versions`): the kind kept in the session's
``meta`` (``"fork_kind"``: ``"version"`` or ``"fork"``) decides; without one (a
fork written before the kind existed), a fork titled as Edit and Regenerate
titled theirs is a version: "<title> (edited)", "<title> (previous answer)",
"Answer <digit>…".

:func:`is_version` is that rule as one SQLAlchemy expression. Statements built
with SQLAlchemy use it as it is; the recursive statements written as text take
its spelling for their dialect from :func:`is_version_sql`. Only reading
``meta``'s key differs between the backends (:class:`fork_kind`: SQLite's JSON1,
PostgreSQL's ``parley_meta``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Integer, String, and_, case, cast, column, exists, func, not_, or_, table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql import ColumnElement
from sqlalchemy.sql.functions import FunctionElement

#: Titles Edit gave its forks ("<title> (edited)") and Regenerate its old answers.
EDITED_SUFFIX = "% (edited)"
PREVIOUS_SUFFIX = "% (previous answer)"
ANSWER_PREFIX = "Answer "
_DIGITS = tuple("0123456789")


class fork_kind(FunctionElement[str]):  # noqa: N801 - named as the SQL function it stands for
    """``meta``'s ``"fork_kind"`` (NULL when ``meta`` is no JSON object or has none)."""

    type = String()
    inherit_cache = True
    name = "fork_kind"


@compiles(fork_kind)
def _fork_kind_sqlite(element: fork_kind, compiler: Any, **kw: Any) -> str:
    meta = compiler.process(element.clauses, **kw)
    return f"json_extract(CASE WHEN json_valid({meta}) THEN {meta} ELSE '{{}}' END, '$.fork_kind')"


@compiles(fork_kind, "postgresql")
def _fork_kind_pg(element: fork_kind, compiler: Any, **kw: Any) -> str:
    return f"(parley_meta({compiler.process(element.clauses, **kw)}) ->> 'fork_kind')"


def is_version(s: Any) -> ColumnElement[int]:
    """1 when the row of ``s`` (``sessions`` or an alias of it) is a version, else 0.

    Never NULL: an untitled fork is no version.
    """
    title = func.coalesce(s.c.title, "")
    titled_as_one = and_(
        s.c.parent_session_id.is_not(None),
        or_(
            # Either letter case, as SQLite's LIKE (ASCII) has always taken them.
            title.ilike(EDITED_SUFFIX),
            title.ilike(PREVIOUS_SUFFIX),
            and_(func.substr(title, 1, len(ANSWER_PREFIX)) == ANSWER_PREFIX,
                 func.substr(title, len(ANSWER_PREFIX) + 1, 1).in_(_DIGITS)),
        ),
    )
    return case({"version": 1, "fork": 0}, value=fork_kind(s.c.meta),
                else_=cast(titled_as_one, Integer))


def listed(s: Any) -> ColumnElement[bool]:
    """True for a session of ``s`` listed as a chat: not a version of a stored chat."""
    parent = _sessions("vp")
    return not_(and_(is_version(s) == 1,
                     exists().where(parent.c.id == s.c.parent_session_id)))


def _sessions(alias: str) -> Any:
    return table("sessions", column("id"), column("meta"), column("title"),
                 column("parent_session_id")).alias(alias)


@cache
def is_version_sql(alias: str, dialect: str) -> str:
    """:func:`is_version` as SQL text for the session table or alias ``alias``.

    Args:
        alias: how the statement names the sessions row (``s``).
        dialect: ``"sqlite"`` or ``"postgresql"``.
    """
    # "named" parameters: no %-doubling here; text() does that once for psycopg.
    target = sqlite.dialect() if dialect == "sqlite" else postgresql.dialect(paramstyle="named")
    compiled = is_version(_sessions(alias)).compile(
        dialect=target, compile_kwargs={"literal_binds": True})
    return str(compiled)
