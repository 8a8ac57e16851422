"""PostgreSQL connections have TCP keepalives, a connect timeout and a statement timeout
(parley.core.store.postgres.options), on a real server; a copy of every chat lifts the
statement timeout; a statement the server cancels is a typed error."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from parley.core.store.errors import ServerUnreachable
from parley.core.store.postgres import options
from parley.core.store.postgres.options import STATEMENT_TIMEOUT_MS, no_statement_timeout
from parley.core.store.postgres.store import PgStore


def _params(con) -> dict[str, str]:
    return con.connection.driver_connection.info.get_parameters()


def test_every_connection_has_keepalives_timeouts_and_a_statement_timeout(postgres_url):
    store = PgStore.open_url(postgres_url)
    try:
        def look(con):
            return _params(con), con.exec_driver_sql("SHOW statement_timeout").scalar()

        params, timeout = store._r(look)
        assert params["keepalives"] == "1"
        assert params["keepalives_idle"] == "10"
        assert params["keepalives_interval"] == "5"
        assert params["keepalives_count"] == "3"
        assert params["tcp_user_timeout"] == "25000"
        assert params["connect_timeout"] == str(options.CONNECT_TIMEOUT_S)
        assert timeout == f"{STATEMENT_TIMEOUT_MS // 60_000}min"

        def lifted(con):
            no_statement_timeout(con)
            return con.exec_driver_sql("SHOW statement_timeout").scalar()

        assert store._w(lifted) == "0"
        # only for that transaction: the next call has the bound again
        assert store._r(look)[1] == f"{STATEMENT_TIMEOUT_MS // 60_000}min"
    finally:
        store.close()


def test_a_statement_the_server_cancels_is_server_unreachable(postgres_url):
    store = PgStore.open_url(postgres_url)
    try:
        def slow(con):
            con.exec_driver_sql("SET LOCAL statement_timeout = 100")
            con.execute(text("SELECT pg_sleep(2)"))

        with pytest.raises(ServerUnreachable, match="did not finish a statement in time"):
            store._r(slow)
        assert store._r(lambda c: c.execute(text("SELECT 1")).scalar()) == 1
    finally:
        store.close()
