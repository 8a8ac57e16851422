"""Errors of the PostgreSQL store, and the one place where server errors are mapped to them.

Like :mod:`parley.core.store.errors` for SQLite: a server error a person can act on
(the server cannot be reached, the password is refused, the server's disk is
full, the database does not exist, it is read-only) becomes a typed
:class:`parley.core.store.errors.StoreError` whose message says what happened, what
was kept and what to do. Any other error is a bug and propagates unchanged.
Messages name the server as ``user@host:port/database``: never the password.
"""

from __future__ import annotations

from parley.core.store.errors import StoreError

_KEPT = "Nothing already saved was lost, and what you typed is kept."

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
#: A write that met another Parley's concurrent write: run it again.
RETRYABLE = frozenset({"40001", "40P01", "23505"})


class ServerUnreachable(StoreError):
    """The PostgreSQL server cannot be reached (down, wrong address, network away)."""

    def __init__(self, where: str, why: str = "") -> None:
        detail = f" ({why})" if why else ""
        super().__init__(
            f"Parley cannot reach the PostgreSQL server of {where}{detail}. {_KEPT} "
            "Check that the server is running and that this computer can reach it, then "
            "try again."
        )
        self.where = where


class AuthenticationFailed(StoreError):
    """The server refused the user name or password."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The PostgreSQL server refused to let Parley in as {where}: wrong user name or "
            "password. Nothing was changed. Check the database address and password "
            "(Settings → Storage, or --database / PARLEY_DATABASE_URL), then try again."
        )
        self.where = where


class ServerDiskFull(StoreError):
    """The server could not write: its disk is full."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Parley could not save: the disk of the PostgreSQL server of {where} is full. "
            f"{_KEPT} Ask whoever runs the server to free some space, then try again."
        )
        self.where = where


class DatabaseNotFound(StoreError):
    """The server has no database of the name given."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The PostgreSQL server has no database {where}. Nothing was changed. Create it "
            "(for example with createdb), or check the name in the database address."
        )
        self.where = where


class ServerReadOnly(StoreError):
    """The database may only be read (a standby server, or no write permission)."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Parley cannot write to the PostgreSQL database {where}: the server allows "
            f"only reading there (a standby, or missing permissions). {_KEPT} Connect to the "
            "primary server, or ask for write permission, then try again."
        )
        self.where = where


class NotAParleyDatabase(StoreError):
    """The database holds tables of another program (or of a newer Parley)."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(
            f"The PostgreSQL database {where} is not a Parley database ({why}). Parley did "
            "not change it. Give Parley a database of its own (an empty one is set up on "
            "first use)."
        )
        self.where = where


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
