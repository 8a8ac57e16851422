"""The session store on a PostgreSQL server: the same API as the SQLite :class:`Store`.

:class:`PgStore` is :class:`parley.core.store.store.Store` — the same repositories,
the same one-transaction-per-call methods, the same results and errors — on a
database given by a URL (``postgresql://user[:password]@host[:port]/database``)
through SQLAlchemy and psycopg 3. Only the lifecycle differs from a file:

* opening sets the schema up in an empty database (the shared declarations of
  :mod:`parley.core.store.schema` plus :mod:`parley.core.store.postgres.sql`), under an advisory
  lock so two Parleys starting at once do not both create it; a database with
  other tables, or a newer schema, is refused without a change;
* each call takes a connection from a small pool, checked first (a server
  restarted meanwhile costs one reconnect, not an error); a write that meets
  another Parley's concurrent write on the same rows (a unique ``seq``, a
  deadlock, a serialization failure) is run again, so neither turn is lost;
* server errors a person can act on become :mod:`parley.core.store.postgres.errors`
  (server unreachable, authentication failed, disk full on the server…).

File-only features are not there: no ``backup_to`` (the server's own backups
apply), no WAL checkpoint or search-index merging (``maintain`` does nothing).
The password comes from the URL, else from the keyring (:func:`password_for`).
"""

from __future__ import annotations

import logging
import random
import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, Self, TypeVar

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from parley.core.content import Turn, now_ms
from parley.core.store import fork_index, path_count, spaces, turns
from parley.core.store.errors import (
    DriverMissing,
    InvalidDatabaseUrl,
    NewerFormat,
    NotAParleyDatabase,
    StoreError,
)
from parley.core.store.lifecycle import StoreClosed
from parley.core.store.postgres import errors as pg_errors
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.postgres.changes import Change, ChangeFeed, conninfo_of
from parley.core.store.postgres.options import STATEMENT_TIMEOUT_MS, connect_args
from parley.core.store.postgres.urls import ambiguous_password, hide_password, normalized
from parley.core.store.schema import (
    DEFAULT_SPACE_ID,
    DEFAULT_SPACE_NAME,
    create_compaction_index,
    create_queue_schema,
    create_space_document_schema,
    metadata,
    queued_files,
)
from parley.core.store.schema import spaces as spaces_table
from parley.core.store.store import Store

T = TypeVar("T")
log = logging.getLogger(__name__)

WRITE_ATTEMPTS = 8
_SCHEMA_LOCK = 0x5041524C  # pg_advisory_xact_lock key: "PARL"


def is_database_url(target: str | Path) -> bool:
    """True when ``target`` is a PostgreSQL URL (``postgresql://…``, ``postgres://…``)."""
    return isinstance(target, str) and target.split("://", 1)[0].split("+", 1)[0] in (
        "postgresql", "postgres")


#: A scheme at the start (two letters or more, so ``C:\\…`` is not one) followed by
#: ``:`` or ``//``: ``postgressql://``, ``postgresql:/``, ``postgresql//``, ``mysql:``.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+(:|//)")
#: ``user:password@host``: a password before a host.
_CREDENTIALS = re.compile(r"[^:/@\s]*:[^@/\s]*@[^@/\s]+")


def looks_like_address(target: str | Path) -> bool:
    """True when ``target`` reads as a network address rather than a file name: a
    scheme (``something:`` or ``something//``), ``://`` anywhere, or ``user:password@host``.

    Such a target that is not a PostgreSQL URL is a mistyped address: it is refused
    (:func:`parse_url` says why), never taken as a file to create.
    """
    if not isinstance(target, str):
        return False
    return bool("://" in target or _SCHEME.match(target) or _CREDENTIALS.search(target))


def parse_url(url: str) -> URL:
    """Return the SQLAlchemy URL for psycopg 3 (``postgresql+psycopg``).

    Raises:
        InvalidDatabaseUrl: not a PostgreSQL URL (another scheme, a mistyped one), a port
            that is not a number, or no database name.
    """
    shown = hide_password(url)
    if not is_database_url(url):
        scheme = _SCHEME.match(url)
        given = f"it starts with {scheme.group(0)!r}" if scheme else "it has no scheme"
        raise InvalidDatabaseUrl(shown, f"{given}, not postgresql:// or postgres://")
    url = normalized(url)  # an "@" in the password: the host is after the last one
    port = _port_of(url)
    if port and not port.isdigit():
        if ambiguous_password(url):  # "user:pa/ss@host": the "port" is part of the password
            raise InvalidDatabaseUrl(shown, "the password holds “/”, “?” or “#”, which end "
                                            "the host part of an address; write them as "
                                            "%2F, %3F and %23, or leave the password out "
                                            "of the address and give it in Settings → "
                                            "Storage")
        raise InvalidDatabaseUrl(shown, f"the port {port!r} is not a number")
    try:
        parsed = make_url(url.replace("postgres://", "postgresql://", 1))
    except (ArgumentError, ValueError):  # its words quote the address, password included
        raise InvalidDatabaseUrl(shown, "it cannot be read") from None
    if not parsed.database:
        raise InvalidDatabaseUrl(shown, "the database name is missing (it goes after the "
                                        "last /, as in …:5432/parley)")
    return parsed.set(drivername="postgresql+psycopg")


def _port_of(url: str) -> str:
    """The port part of ``scheme://user:pw@host:port/db`` as written ('' when none)."""
    netloc = url.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    host = netloc.rsplit("@", 1)[-1]
    if host.startswith("["):  # [::1]:5432
        host = host.partition("]")[2]
    return host.rpartition(":")[2] if ":" in host else ""


def redact(url: URL) -> str:
    """``user@host:port/database`` — how messages name a database (never the password)."""
    user = f"{url.username}@" if url.username else ""
    port = f":{url.port}" if url.port else ""
    return f"{user}{url.host or 'localhost'}{port}/{url.database or ''}"


def keyring_user(url: URL) -> str:
    """The id a database's password is saved under, beside the API keys (:mod:`parley.core.keys`):
    ``database:user@host:port/db``."""
    return (f"database:{url.username or ''}@{url.host or 'localhost'}:{url.port or 5432}"
            f"/{url.database}")


def password_in_place(url: URL) -> URL:
    """``url`` with a ``?password=`` of its query moved to its password (where
    :func:`hide_password`, ``render_as_string`` and the keyring look); the user part's
    password wins when both are given."""
    given = url.query.get("password")
    if given is None:
        return url
    value = given if isinstance(given, str) else given[-1]
    url = url.difference_update_query(["password"])
    return url if url.password is not None else url.set(password=value)


def password_for(url: URL) -> URL:
    """``url`` with its password: the URL's own, else the one saved in Parley (else none).

    Saved passwords live where API keys do (the OS keyring, or Parley's key file
    where there is none: :func:`parley.core.keys.detect_backend`). A keyring that cannot
    be used counts as no password: the server then says whether it needs one
    (AuthenticationFailed).
    """
    url = password_in_place(url)
    if url.password is not None:
        return url
    from parley.core.keys import detect_backend

    try:
        secret = detect_backend().get(keyring_user(url))
    except Exception:  # noqa: BLE001 - any keyring failure means "no saved password"
        log.info("no saved password for %s", redact(url))
        return url
    return url.set(password=secret) if secret else url


def save_password(url: str, password: str) -> None:
    """Save a database's password where API keys go (Settings → Storage).

    Raises:
        InvalidDatabaseUrl: ``url`` is not a database URL.
        KeyStoreError: it could not be saved.
    """
    from parley.core.keys import detect_backend

    detect_backend().set(keyring_user(parse_url(url)), password)


def make_engine(url: URL, instance: str) -> Engine:
    """An engine on the server: a pool of 1 (+2) connections, checked before each use,
    sending text without NUL characters (:mod:`parley.core.store.postgres.nul`), with
    TCP keepalives and connect and statement timeouts (:func:`connect_args`,
    :data:`STATEMENT_TIMEOUT_MS`).

    Raises:
        DriverMissing: psycopg is not installed.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise DriverMissing() from exc
    engine = create_engine(
        url,
        pool_size=1,
        max_overflow=2,
        pool_pre_ping=True,
        connect_args=connect_args(f"parley:{instance}"),
    )
    event.listen(engine, "connect", _on_connect)
    return engine


def _on_connect(dbapi_con: Any, _record: Any) -> None:
    """A new connection: no NUL characters sent, statements bounded on the server."""
    from parley.core.store.postgres import nul

    nul.register(dbapi_con)
    # Not through the URL's ``options`` (a URL may carry its own, e.g. a search path).
    with dbapi_con.cursor() as cur:
        cur.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
    dbapi_con.commit()


class PgStore(Store):
    """Parley's store on a PostgreSQL database (see the module docstring).

    Attributes:
        url: the database's URL (with the password: never log or show it; use ``where``).
        where: ``user@host:port/database``, for messages.
        instance: a random id of this open store, in the server's ``application_name``
            (``parley:<instance>``) and in change notices
            (:mod:`parley.core.store.postgres.changes`).
    """

    def __init__(self, url: URL, engine: Engine, instance: str) -> None:
        """Use :meth:`open_url`."""
        self.url = url
        self.where = redact(url)
        self.instance = instance
        self.path = Path(self.where)  # for code that names the store; not a file
        self.migration_report = None
        self.damaged = False
        self.record_on_close = False
        self._engine: Engine | None = engine

    @classmethod
    def open(cls, path: Path | str, **_kw: Any) -> Self:
        """Open a database by URL (``path`` must be one); see :meth:`open_url`."""
        return cls.open_url(str(path))

    @classmethod
    def open_url(cls, url: str) -> Self:
        """Connect to the database, setting the schema up in an empty one.

        Args:
            url: ``postgresql://user[:password]@host[:port]/database``; without a
                password, the keyring's (:func:`password_for`).

        Raises:
            InvalidDatabaseUrl: not such a URL.
            ServerUnreachable, AuthenticationFailed, DatabaseNotFound, ServerReadOnly:
                see :mod:`parley.core.store.postgres.errors`.
            NotAParleyDatabase: the database holds other tables.
            NewerFormat: set up by a newer Parley.
        """
        parsed = password_for(parse_url(url))
        instance = uuid.uuid4().hex
        engine = make_engine(parsed, instance)
        store = cls(parsed, engine, instance)
        try:
            store._w(store._prepare)
        except BaseException:
            engine.dispose()
            raise
        return store

    def _prepare(self, con: Connection) -> None:
        con.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
        if con.execute(text("SELECT to_regclass('parley_schema')")).scalar() is None:
            if con.execute(text("SELECT to_regclass('sessions')")).scalar() is not None:
                raise NotAParleyDatabase(self.where, "it has a sessions table of "
                                                   "another program")
            encoding = con.exec_driver_sql("SHOW server_encoding").scalar()
            if str(encoding).upper() not in ("UTF8", "UTF-8"):
                raise NotAParleyDatabase(
                    self.where, f"its encoding is {encoding}; Parley needs a UTF8 database")
            create_schema(con)
            return
        version = int(con.execute(text("SELECT max(version) FROM parley_schema")).scalar() or 0)
        if version > pg_sql.SCHEMA_VERSION:
            raise NewerFormat(self.path, version, pg_sql.SCHEMA_VERSION)
        if con.execute(text("SELECT to_regclass('turn_links')")).scalar() is None:
            # Written before the conversation tree: converted in this transaction.
            from parley.core.store.upgrade.tree import convert

            convert(con)
        create_queue_schema(con)  # written before the queue of messages: added (idempotent)
        create_queued_files(con)  # written before queued messages kept files: added
        create_space_document_schema(con)  # written before space documents: added
        create_compaction_index(con)  # written before the summary-turn index: added
        fork_index.create(con)  # written before the forks' index: added, filled
        path_count.create(con)  # written before the paths' counts: added, filled
        spaces.ensure_default(con)

    # --- lifecycle (StoreBase's, for a server) -----------------------------------

    def close(self) -> None:
        """Close the pool's connections (idempotent)."""
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.dispose()

    def backup_to(self, dest: Path | str) -> Path:
        """Not for a server: its own backups apply. Raises StoreError."""
        raise StoreError(
            "Parley does not copy a PostgreSQL database to a file; use the server's own backups "
            "(pg_dump), or copy your chats to a sessions.db file."
        )

    def maintain(self, budget_ms: float = 20.0) -> bool:
        """Nothing to do on a server (its autovacuum keeps the indexes): returns False."""
        return False

    def change_feed(self, on_change: Callable[[Change], None]) -> ChangeFeed:
        """Start hearing other Parleys' changes to this database
        (:mod:`parley.core.store.postgres.changes`).

        Args:
            on_change: called with each :class:`Change`, on the feed's own thread.

        Returns:
            The running feed (listening, or still trying to connect after 10 s);
            ``close()`` it when done.
        """
        return ChangeFeed(conninfo_of(self.url), self.instance, on_change).start()

    def report_damage(self, why: str = "") -> None:
        """A file's concern; nothing to do for a server."""

    def upsert_turn(self, session_id: str, turn: Turn) -> Turn:
        """:meth:`Store.upsert_turn`; a reply journalled while it streams (``cut_off``) is
        saved with this Parley's :attr:`instance` as its writer, so other Parleys show it
        as in progress while this one is connected (``Turn.writing_elsewhere``,
        :mod:`parley.core.store.turns`). Raises SessionNotFound, TurnInOtherSession."""
        return self._w(lambda c: turns.upsert(c, session_id, turn, writer=self.instance))

    def _engine_or_closed(self) -> Engine:
        if self._engine is None:
            raise StoreClosed()
        return self._engine

    def _w(self, fn: Callable[[Connection], T]) -> T:
        engine = self._engine_or_closed()
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                with engine.connect() as con, con.begin():
                    return fn(con)
            except DBAPIError as exc:
                if pg_errors.sqlstate_of(exc) in pg_errors.RETRYABLE and attempt < WRITE_ATTEMPTS:
                    time.sleep(random.uniform(0.005, 0.02) * attempt)
                    continue
                self._raise(exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def _r(self, fn: Callable[[Connection], T]) -> T:
        engine = self._engine_or_closed()
        try:
            with engine.connect() as con, con.begin():
                con.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return fn(con)
        except DBAPIError as exc:
            self._raise(exc)

    def _raise(self, exc: DBAPIError) -> NoReturn:
        err = pg_errors.translate(exc, self.where)
        if err is not None:
            raise err from exc
        raise exc


def create_schema(con: Connection) -> None:
    """Create Parley's tables, functions, indexes and triggers in the caller's transaction.

    The tables are the shared declarations (:data:`parley.core.store.schema.metadata`);
    the rest is :mod:`parley.core.store.postgres.sql`. Adds the default space ("General").
    """
    for ddl in pg_sql.FUNCTIONS:
        con.exec_driver_sql(ddl)
    con.exec_driver_sql(pg_sql.CONFIG_DDL)
    _fold_diacritics(con)
    metadata.create_all(con, checkfirst=False)
    for ddl in pg_sql.SCHEMA_DDL:
        con.exec_driver_sql(ddl)
    create_queued_files(con)
    fork_index.create(con)
    path_count.create(con)
    con.execute(
        spaces_table.insert().values(
            id=DEFAULT_SPACE_ID, name=DEFAULT_SPACE_NAME, position=0, created_at=now_ms()
        )
    )


def create_queued_files(con: Connection) -> None:
    """Create the files of queued messages (``queued_files``, its functions and triggers)
    where missing (idempotent; in the caller's transaction). When all are there it only
    reads, so a server that allows only reading can still be opened."""
    missing = [(table, ddl) for name, table, ddl in pg_sql.QUEUED_FILES_TRIGGERS
               if con.execute(text("SELECT 1 FROM pg_trigger WHERE tgname = :n AND tgrelid "
                                   "= to_regclass(:t)"), {"n": name, "t": table}).first() is None]
    if not missing:  # the triggers exist only after the table and their functions
        return
    queued_files.create(con, checkfirst=True)
    for ddl in pg_sql.QUEUED_FILES_FUNCTIONS:
        con.exec_driver_sql(ddl)
    for _table, ddl in missing:  # on this schema's table
        con.exec_driver_sql(ddl)


def _fold_diacritics(con: Connection) -> None:
    """Add ``unaccent`` to the search configuration when the server has it (or lets us add it).

    Without it (no contrib package, no permission) search works without folding
    diacritics: ``cafe`` then does not find ``café``.
    """
    try:
        with con.begin_nested():
            con.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS unaccent")
            schema = con.execute(text(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                "ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'")).scalar_one()
            con.exec_driver_sql(pg_sql.unaccent_ddl(str(schema)))
    except DBAPIError as exc:
        log.warning("search on %s will not fold diacritics (no unaccent): %s",
                    con.engine.url.database, exc.orig)
