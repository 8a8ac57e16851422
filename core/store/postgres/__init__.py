"""The session store on a PostgreSQL server (used only when a database address is given).

:mod:`.store` (:class:`PgStore`: the same API as the SQLite store, on a server),
:mod:`.sql` (everything PostgreSQL-specific in the store's SQL), :mod:`.search`
(ranking search matches with tsvector columns), :mod:`.changes` (other Parleys' commits,
heard through ``LISTEN``/``NOTIFY``), :mod:`.errors` (the server's errors mapped to the
store's errors of :mod:`parley.core.store.errors`). The driver (psycopg) is the optional
``postgresql`` extra; nothing here imports it until a database is opened.
"""
