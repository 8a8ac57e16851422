"""Changes made by other Parleys on the same PostgreSQL database, as they commit.

Triggers of the schema (``parley_notify``, in
:data:`parley.core.store.postgres.sql.SCHEMA_DDL`) send a PostgreSQL ``NOTIFY`` on the
channel :data:`CHANNEL` for every row of
``turns``, ``sessions`` and ``spaces`` written or deleted, delivered when the
writing transaction commits (never for one rolled back; the same change
twice in one transaction is sent once). Its payload is JSON:
``{"table": "turns" | "sessions" | "spaces", "session": <session id or null>,
"by": <application_name of the writer>}``; each Parley's connections are named
``parley:<instance>`` (:class:`parley.core.store.postgres.store.PgStore`).

:class:`ChangeFeed` listens on a connection of its own, in a thread of its own,
and calls ``on_change`` with a :class:`Change` for each notice sent by *another*
Parley (its own writes are already known to it). When the server goes away it
reconnects every :data:`RETRY_S` seconds, and then reports one
``Change("reconnected")``: what changed meanwhile was not heard, so whoever
listens should read again what it shows.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from parley.core.log_repeats import RepeatLimiter

log = logging.getLogger(__name__)
#: "cut, retrying" once per interval during an outage, not every RETRY_S.
_cuts = RepeatLimiter(log)

CHANNEL = "parley_changes"
#: Seconds between attempts to reconnect to a server that went away.
RETRY_S = 2.0
#: Seconds a wait for notices lasts before checking whether to stop.
POLL_S = 0.5


@dataclass(frozen=True, slots=True)
class Change:
    """A change another Parley committed.

    Attributes:
        table: ``turns``, ``sessions``, ``spaces``, or ``reconnected`` (the feed was
            cut and is back: anything may have changed).
        session_id: the chat concerned (for turns and sessions), else None.
    """

    table: str
    session_id: str | None = None


def parse(payload: str, own: str) -> Change | None:
    """The :class:`Change` of a notice's payload; None for our own or a malformed one.

    Args:
        payload: the notice's JSON text.
        own: this Parley's ``application_name`` (``parley:<instance>``).
    """
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("by") == own:
        return None
    table = data.get("table")
    session = data.get("session")
    if not isinstance(table, str):
        return None
    return Change(table, session if isinstance(session, str) else None)


class ChangeFeed:
    """Listens for other Parleys' changes (module docstring). Start with :meth:`start`.

    Args:
        conninfo: libpq connection string or ``postgresql://`` URL (with its password).
        instance: this Parley's instance id (:attr:`PgStore.instance`): its own notices
            are left out.
        on_change: called with each :class:`Change`, on the feed's thread.
    """

    def __init__(self, conninfo: str, instance: str, on_change: Callable[[Change], None]) -> None:
        self.conninfo = conninfo
        self.own = f"parley:{instance}"
        self.on_change = on_change
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="parley-changes", daemon=True)

    def start(self, timeout_s: float = 10.0) -> ChangeFeed:
        """Start listening; returns once listening (or after ``timeout_s``, still trying)."""
        self._thread.start()
        self._listening.wait(timeout_s)
        return self

    @property
    def listening(self) -> bool:
        """True while connected and listening."""
        return self._listening.is_set()

    def close(self) -> None:
        """Stop listening (returns within about :data:`POLL_S` seconds)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=POLL_S + 5)

    def _run(self) -> None:
        cut = False
        while not self._stop.is_set():
            try:
                self._listen(announce=cut)
            except Exception as exc:  # noqa: BLE001 - the server away: try again later
                _cuts.info("change feed cut (%s); retrying every %s s", exc, RETRY_S)
            self._listening.clear()
            cut = True
            self._stop.wait(RETRY_S)

    def _listen(self, announce: bool) -> None:
        import psycopg

        from parley.core.store.postgres.options import connect_args

        with psycopg.connect(self.conninfo, autocommit=True,
                             **connect_args(self.own + ":listen")) as con:
            con.execute(f"LISTEN {CHANNEL}")
            self._listening.set()
            if announce:
                self._emit(Change("reconnected"))
            while not self._stop.is_set():
                for notice in con.notifies(timeout=POLL_S):
                    change = parse(notice.payload, self.own)
                    if change is not None:
                        self._emit(change)
                    if self._stop.is_set():
                        break

    def _emit(self, change: Change) -> None:
        try:
            self.on_change(change)
        except Exception:  # a bug in the listener: keep listening
            log.exception("a change listener failed")


def conninfo_of(url: Any) -> str:
    """A psycopg connection string of an SQLAlchemy URL (password included)."""
    return str(url.set(drivername="postgresql").render_as_string(hide_password=False))
