"""How Parley's connections to a PostgreSQL server are set up, so a silent server is noticed.

Without these, a server that stops answering (a network partition, a frozen host)
keeps a save waiting for as long as the operating system keeps the connection
(two hours of TCP silence by default), and nothing says so. Every connection —
the store's pool (``parley.core.store.postgres.store.make_engine``) and the change
feed's (``parley.core.store.postgres.changes``) — gets:

* ``connect_timeout`` (:data:`CONNECT_TIMEOUT_S`): a connection not made by then fails;
* TCP keepalives and ``tcp_user_timeout`` (:data:`KEEPALIVE_ARGS`): a connection
  whose server went silent is found dead after about 25 s and fails with
  ``ServerUnreachable``; the next call connects again;
* ``statement_timeout`` (:data:`STATEMENT_TIMEOUT_MS`, the pool's connections): the
  server cancels a statement that runs longer; a copy of every chat lifts it
  (:func:`no_statement_timeout`).

The window does not wait for these to fire before telling the person:
``parley.core.store.answering`` says after a few seconds that the server is not answering.
The names are libpq's connection parameters
(https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

#: Seconds libpq waits for a connection to be made (its ``connect_timeout``).
CONNECT_TIMEOUT_S = 5
#: A statement the server runs longer than this (ms) is cancelled by the server
#: (``statement_timeout``): a save takes milliseconds, a search well under a second,
#: so only a stuck statement meets it. Copies lift it (:func:`no_statement_timeout`).
STATEMENT_TIMEOUT_MS = 60_000
#: TCP keepalives (libpq's ``keepalives*`` options, seconds): a connection whose
#: server went silent (a network partition, a frozen host) is found dead after
#: ``idle + interval * count`` = 25 s instead of the system's default of two hours.
#: ``tcp_user_timeout`` (ms) does the same for data sent but never acknowledged.
KEEPALIVE_ARGS: dict[str, int] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 25_000,
}


def connect_args(application_name: str) -> dict[str, Any]:
    """libpq options of every Parley connection: :data:`CONNECT_TIMEOUT_S`, the TCP
    keepalives (:data:`KEEPALIVE_ARGS`) and the server-side name ``application_name``.

    (libpq's parameter key words: https://www.postgresql.org/docs/current/libpq-connect.html)
    """
    return {"connect_timeout": CONNECT_TIMEOUT_S, **KEEPALIVE_ARGS,
            "application_name": application_name}


def no_statement_timeout(con: Connection) -> None:
    """Lift :data:`STATEMENT_TIMEOUT_MS` for the rest of ``con``'s transaction (a copy
    of every chat may run one long statement); nothing on a file's connection."""
    if con.dialect.name == "postgresql":
        con.exec_driver_sql("SET LOCAL statement_timeout = 0")
