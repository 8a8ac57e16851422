"""The one place where PostgreSQL server errors are mapped to the store's errors.

Like :mod:`parley.core.store.errors` for SQLite: a server error a person can act on
(the server cannot be reached, the password is refused, the server's disk is
full, the database does not exist, it is read-only) becomes a typed
:class:`parley.core.store.errors.StoreError` (declared with the others in
:mod:`parley.core.store.errors`) whose message says what happened, what
was kept and what to do. Any other error is a bug and propagates unchanged.
Messages name the server as ``user@host:port/database``: never the password.
"""

from __future__ import annotations

from parley.core.store.errors import (
    AuthenticationFailed,
    DatabaseNotFound,
    ServerDiskFull,
    ServerReadOnly,
    ServerUnreachable,
    StoreError,
)

# SQLSTATE codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
INVALID_PASSWORD = "28P01"
INVALID_AUTHORIZATION = "28000"
DISK_FULL = "53100"
OUT_OF_MEMORY = "53200"
TOO_MANY_CONNECTIONS = "53300"
INVALID_CATALOG = "3D000"
READ_ONLY_TRANSACTION = "25006"
INSUFFICIENT_PRIVILEGE = "42501"
ADMIN_SHUTDOWN = "57P01"
CANNOT_CONNECT_NOW = "57P03"
#: The server cancelled a statement (its ``statement_timeout``:
#: ``parley.core.store.postgres.options.STATEMENT_TIMEOUT_MS``).
QUERY_CANCELED = "57014"
#: A write that met another Parley's concurrent write: run it again.
RETRYABLE = frozenset({"40001", "40P01", "23505"})


def sqlstate_of(exc: BaseException) -> str | None:
    """The SQLSTATE behind ``exc`` (a psycopg error or SQLAlchemy's wrapper), or None."""
    orig = getattr(exc, "orig", None) or exc
    state = getattr(orig, "sqlstate", None)
    return str(state) if state else None


def translate(exc: BaseException, where: str) -> StoreError | None:
    """Map a PostgreSQL error to the user-facing error it stands for.

    Args:
        exc: raised by psycopg, or SQLAlchemy wrapping it.
        where: ``user@host:port/database`` (no password), named in the message.

    Returns:
        The :class:`StoreError` to raise (``raise err from exc``), or None when
        ``exc`` is not a condition a user can act on.
    """
    import psycopg

    orig = getattr(exc, "orig", None) or exc
    state = sqlstate_of(exc)
    text = str(orig).lower()
    if state in (INVALID_PASSWORD, INVALID_AUTHORIZATION) or "authentication failed" in text \
            or "no password supplied" in text:
        return AuthenticationFailed(where)
    if state == DISK_FULL or "no space left on device" in text:
        return ServerDiskFull(where)
    if state == INVALID_CATALOG or ("database" in text and "does not exist" in text):
        return DatabaseNotFound(where)
    if state == READ_ONLY_TRANSACTION:
        return ServerReadOnly(where)
    if state == TOO_MANY_CONNECTIONS:
        return ServerUnreachable(where, "it has too many connections open")
    if state == QUERY_CANCELED:
        return ServerUnreachable(where, "it did not finish a statement in time")
    if state in (ADMIN_SHUTDOWN, CANNOT_CONNECT_NOW):
        return ServerUnreachable(where, "it is shutting down or starting up")
    if isinstance(orig, psycopg.OperationalError) and state is None:
        return ServerUnreachable(where, _reason(text))
    if getattr(exc, "connection_invalidated", False):
        return ServerUnreachable(where, "the connection was lost")
    return None


def _reason(text: str) -> str:
    if "connection refused" in text:
        return "the connection was refused"
    if "timeout" in text or "timed out" in text:
        return "it did not answer in time"
    if "could not translate host name" in text or "name or service not known" in text:
        return "the server's name is unknown"
    if "closed" in text or "terminat" in text or "lost" in text:
        return "the connection was lost"
    return ""
