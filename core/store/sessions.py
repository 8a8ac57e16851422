"""Sessions: rows of ``sessions``. Functions take a Connection inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import ColumnElement, Select

from parley.core.content import Usage, new_id, now_ms
from parley.core.store import settings_repo, spaces
from parley.core.store.dialect import dual_text
from parley.core.store.errors import SessionNotFound
from parley.core.store.models import Session, TitleSource
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import DEFAULT_SPACE_ID
from parley.core.store.schema import sessions as S
from parley.core.store.schema import turn_path as P

_parent = S.alias("parent")


def path_length(session_id: Any) -> Select[Any]:
    """``SELECT`` the number of turns on a session's path: its last position + 1 (0 for
    none). The positions are 0…n-1 (``parley.core.store.tree``; every writer keeps them
    so), so this is one step of ``turn_path``'s key, not a count of the whole path.

    Args:
        session_id: the session's id, or a column (a correlated subquery).
    """
    return select(func.coalesce(func.max(P.c.pos) + 1, 0)).where(P.c.session_id == session_id)


def _query(
    *where: ColumnElement[bool],
    order: Callable[[Any], list[Any]] = lambda t: [t.c.created_at, t.c.n],
    limit: int | None = None,
    offset: int = 0,
) -> Select[Any]:
    """Select sessions with ``parent_exists`` and ``turn_count``.

    The page (filter, order, limit) is chosen first, in a subquery that the
    list indexes serve; the two derived columns are then computed for the
    rows of that page only (counting every session's turns would cost as much
    as reading the whole turns index).
    """
    page = select(S).where(*where).order_by(*order(S))
    if limit is not None:
        page = page.limit(max(0, limit)).offset(max(0, offset))
    p = page.subquery("page")
    return select(
        *p.c,
        exists().where(_parent.c.id == p.c.parent_session_id).label("parent_exists"),
        path_length(p.c.id).scalar_subquery().label("turn_count"),
    ).order_by(*order(p))


def _meta(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _session(row: Row) -> Session:
    return Session(
        id=row.id,
        space_id=row.space_id,
        title=row.title,
        title_source=row.title_source,
        parent_session_id=row.parent_session_id,
        forked_from_turn_id=row.forked_from_turn_id,
        parent_exists=row.parent_session_id is None or bool(row.parent_exists),
        model=row.model,
        system_prompt=row.system_prompt,
        pinned=bool(row.pinned),
        archived=bool(row.archived),
        usage=Usage(
            row.input_tokens,
            row.output_tokens,
            row.cache_read_tokens,
            row.cache_write_tokens,
            row.cost_usd,
        ),
        created_at=row.created_at,
        updated_at=row.updated_at,
        end_reason=row.end_reason,
        meta=_meta(row.meta),
        turn_count=row.turn_count,
    )


def get(con: Connection, session_id: str) -> Session:
    """Return a session. Raises SessionNotFound."""
    row = con.execute(_query(S.c.id == session_id)).first()
    if row is None:
        raise SessionNotFound(session_id)
    return _session(row)


def require(con: Connection, session_id: str) -> None:
    """Raise SessionNotFound unless the session exists."""
    if con.execute(select(S.c.n).where(S.c.id == session_id)).first() is None:
        raise SessionNotFound(session_id)


_INSERT = S.insert()  # built once: its compiled form is cached (an import inserts thousands)


def insert(
    con: Connection,
    *,
    space_id: str,
    title: str | None,
    title_source: TitleSource | None,
    model: str | None,
    system_prompt: str | None,
    parent_session_id: str | None = None,
    forked_from_turn_id: str | None = None,
    meta: dict[str, Any] | None = None,
    created_at: int | None = None,
    updated_at: int | None = None,
) -> str:
    """Insert a session row and return its id (no checks).

    ``created_at`` / ``updated_at`` (epoch ms) default to :func:`activity_time`;
    an import gives the conversation's own times.
    """
    session_id = new_id()
    now = activity_time(con) if created_at is None or updated_at is None else 0
    con.execute(_INSERT, {
        "id": session_id,
        "space_id": space_id,
        "title": title,
        "title_source": title_source if title is not None else None,
        "model": model,
        "system_prompt": system_prompt,
        "parent_session_id": parent_session_id,
        "forked_from_turn_id": forked_from_turn_id,
        "created_at": now if created_at is None else created_at,
        "updated_at": now if updated_at is None else updated_at,
        "meta": json.dumps(meta or {}, ensure_ascii=False),
    })
    return session_id


def create(
    con: Connection,
    space_id: str | None,
    title: str | None,
    model: str | None,
    system_prompt: str | None,
) -> Session:
    space = spaces.get(con, space_id or DEFAULT_SPACE_ID)
    title = _clean_title(title)
    session_id = insert(
        con,
        space_id=space.id,
        title=title,
        title_source="user" if title is not None else None,
        model=model if model is not None else space.default_model,
        system_prompt=system_prompt if system_prompt is not None else space.system_prompt,
    )
    return get(con, session_id)


def list_page(
    con: Connection,
    space_id: str | None,
    include_archived: bool,
    limit: int,
    offset: int,
    pinned_first: bool,
) -> list[Session]:
    where = []
    if space_id is not None:
        where.append(S.c.space_id == space_id)
    if not include_archived:
        where.append(S.c.archived == 0)

    def order(t: Any) -> list[Any]:
        newest = [t.c.updated_at.desc(), t.c.n.desc()]
        return [t.c.pinned.desc(), *newest] if pinned_first else newest

    q = _query(*where, order=order, limit=limit, offset=offset)
    return [_session(r) for r in con.execute(q)]


def position(con: Connection, session_id: str, include_archived: bool) -> int | None:
    """Where a session is in its space's list (:func:`list_page`, pinned first): how many
    sessions come before it, 0 for the first. None when it is archived and
    ``include_archived`` is False (it is not listed). One count on the list's index.

    Raises SessionNotFound.
    """
    row = con.execute(select(S.c.space_id, S.c.pinned, S.c.updated_at, S.c.n, S.c.archived)
                      .where(S.c.id == session_id)).first()
    if row is None:
        raise SessionNotFound(session_id)
    if row.archived and not include_archived:
        return None
    where = [S.c.space_id == row.space_id]
    if not include_archived:
        where.append(S.c.archived == 0)
    newer = (S.c.updated_at > row.updated_at) | (
        (S.c.updated_at == row.updated_at) & (S.c.n > row.n))
    before = (S.c.pinned > row.pinned) | ((S.c.pinned == row.pinned) & newer)
    return int(con.execute(select(func.count()).select_from(S).where(*where, before))
               .scalar_one())


def list_forks(con: Connection, session_id: str) -> list[Session]:
    require(con, session_id)
    q = _query(S.c.parent_session_id == session_id)
    return [_session(r) for r in con.execute(q)]


def _clean_title(title: str | None) -> str | None:
    if title is None:
        return None
    title = " ".join(title.split())
    return title or None


def set_fields(con: Connection, session_id: str, **values: Any) -> Session:
    """Update columns of one session and return it. Raises SessionNotFound."""
    require(con, session_id)
    con.execute(update(S).where(S.c.id == session_id).values(**values))
    return get(con, session_id)


def rename(con: Connection, session_id: str, title: str | None, source: TitleSource) -> Session:
    title = _clean_title(title)
    return set_fields(
        con, session_id, title=title, title_source=source if title is not None else None
    )


def set_auto_title(con: Connection, session_id: str, title: str) -> bool:
    require(con, session_id)
    clean = _clean_title(title)
    if clean is None:
        return False
    done = con.execute(
        update(S)
        .where(S.c.id == session_id)
        .where((S.c.title_source.is_(None)) | (S.c.title_source != "user"))
        .values(title=clean, title_source="auto")
    )
    return done.rowcount > 0


def forks_beside(con: Connection, session_id: str) -> list[str]:
    """The ids of a chat's forks in its space, recursively (forks of forks; the ones
    nested under it in the sidebar), parents before their forks. A fork already moved to
    another space is left out, and so are its own forks. Raises SessionNotFound."""
    space_id = get(con, session_id).space_id
    found: list[str] = []
    level = [session_id]
    while level:
        level = [r.id for r in con.execute(
            select(S.c.id).where(S.c.parent_session_id.in_(level))
            .where(S.c.space_id == space_id).order_by(S.c.created_at, S.c.id)
        ) if r.id not in found and r.id != session_id]
        found.extend(level)
    return found


def move(con: Connection, session_id: str, space_id: str) -> list[Session]:
    """Move a chat (every branch of it: they are its turns) to a space, with its forks
    in its space (:func:`forks_beside`): they stay nested under it. Returns the chat,
    then the forks moved. Raises SpaceNotFound, SessionNotFound."""
    spaces.get(con, space_id)
    ids = [session_id, *forks_beside(con, session_id)]
    con.execute(update(S).where(S.c.id.in_(ids)).values(space_id=space_id))
    return [get(con, i) for i in ids]


def delete_session(con: Connection, session_id: str) -> None:
    """Delete a session with every turn of it, every branch (forks made from it are kept)."""
    require(con, session_id)
    settings_repo.forget_ids(con, [session_id])
    con.execute(delete(S).where(S.c.id == session_id))


_LATEST = select(func.max(S.c.updated_at))
_TOUCH = dual_text(
    "UPDATE sessions SET updated_at = max(:now, (SELECT coalesce(max(updated_at), 0) + 1 "
    "FROM sessions)) WHERE id = :sid",
    pg_sql.TOUCH,
)


def activity_time(con: Connection) -> int:
    """Return now (epoch ms), but later than any session's ``updated_at``.

    So the session with the latest activity is always first in "newest first"
    lists, even for two changes within one millisecond.
    """
    latest = con.execute(_LATEST).scalar()
    return max(now_ms(), (latest or 0) + 1)


def touch(con: Connection, session_id: str) -> None:
    """Mark activity: ``updated_at`` = :func:`activity_time`."""
    con.execute(_TOUCH, {"now": now_ms(), "sid": session_id})


def add_usage(con: Connection, session_id: str, usage: Usage) -> None:
    require(con, session_id)
    con.execute(
        update(S)
        .where(S.c.id == session_id)
        .values(
            input_tokens=S.c.input_tokens + usage.input_tokens,
            output_tokens=S.c.output_tokens + usage.output_tokens,
            cache_read_tokens=S.c.cache_read_tokens + usage.cache_read_tokens,
            cache_write_tokens=S.c.cache_write_tokens + usage.cache_write_tokens,
            cost_usd=S.c.cost_usd + usage.cost_usd,
        )
    )
