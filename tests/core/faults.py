"""Storage faults for tests: the store's raw connection, a nearly full disk, a held write lock."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from parley.core.store import AsyncStore, Store
from parley.core.store.postgres.store import PgStore
from parley.core.store.schema import dbapi_connection
from tests.core.rawdb import raw_rows


def raw(store: Store) -> sqlite3.Connection:
    assert store._con is not None  # noqa: SLF001
    return dbapi_connection(store._con)  # noqa: SLF001


async def on_store_thread(store: AsyncStore, sql: str) -> None:
    """Run one statement on the store's own connection, on its own thread."""
    await store._call(lambda: raw(store.sync).execute(sql).fetchall())  # noqa: SLF001


MODEL = "anthropic:claude-sonnet-4-6"
#: Pages are filled only by a reply too big for the free room left in them.
BIG = "Every word of this long reply must be kept. " * 1000  # 44 kB


async def page_limit(store: AsyncStore, extra: int | None) -> None:
    """Leave room for ``extra`` more pages in the file (None: no limit: space freed)."""
    if extra is None:
        await on_store_thread(store, "PRAGMA max_page_count = 1073741823")
        return
    pages = (await store._call(lambda: raw(store.sync).execute(  # noqa: SLF001
        "PRAGMA page_count").fetchone()))[0]
    await on_store_thread(store, f"PRAGMA max_page_count = {pages + extra}")


#: A trigger function raising the server's own "disk full" (SQLSTATE 53100).
PG_FULL_DISK = ("CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$ "
                "BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; "
                "END $$")


async def disk_nearly_full(store: AsyncStore) -> None:
    """Leave room for small turns only: a long reply's writes meet a full disk."""
    if not isinstance(store.sync, PgStore):
        await page_limit(store, 2)
        return
    await store._call(lambda: raw_rows(store.sync, PG_FULL_DISK))  # noqa: SLF001
    await store._call(lambda: raw_rows(  # noqa: SLF001
        store.sync, "CREATE TRIGGER disk_is_full BEFORE INSERT OR UPDATE ON turns FOR EACH ROW "
                    "WHEN (length(NEW.blocks) > 8000) EXECUTE FUNCTION full_disk()"))


LOCKER = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
con.execute("COMMIT")
"""


class Locker:
    """Another process holding sessions.db's write lock until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(path)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait(10)
