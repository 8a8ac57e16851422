"""A real PostgreSQL server for the tests, started in a temporary folder.

Not a fake: Debian's ``postgresql`` server binaries (``initdb``, ``pg_ctl``),
run on 127.0.0.1 on a free port with a data folder of their own, password
authentication (scram-sha-256) for the role :data:`USER`, and stopped (the
folder removed) at the end of the test session. ``.ci/run`` installs the
package when it is missing.

PostgreSQL refuses to run as root, so under root the server runs as the
``postgres`` system user (created by the Debian package), or ``nobody``.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

USER = "parley"
PASSWORD = "parley-test-password"


def find_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (newest Debian version first), or None."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(str(Path(on_path).parent))
    for folder in candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> str | None:
    """The system user to run the server as (None: the current user, not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


class PostgresServer:
    """One PostgreSQL server: :meth:`start`, :meth:`new_database`, :meth:`pause` /
    :meth:`resume` (the server away and back), :meth:`stop`."""

    def __init__(self, bin_dir: Path, *, durable: bool = False, folder: Path | None = None) -> None:
        """``durable``: commits flushed to disk as on a real server (benchmarks); tests run
        without (``fsync=off``, ``synchronous_commit=off``: faster, nothing else changes).
        ``folder``: keep the cluster there (made if missing; a cluster already in it is
        started as it is, and :meth:`stop` leaves it); None: a temporary folder, removed."""
        self.bin_dir = bin_dir
        self.durable = durable
        self.port = 0
        self.kept = folder is not None
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="parley-pg-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.data = self.folder / "data"
        self.user = _run_as()
        self._tests_db = self.kept and (self.data / "PG_VERSION").exists()

    def _cmd(self, *args: str) -> list[str]:
        if self.user is None:
            return list(args)
        return ["runuser", "-u", self.user, "--", *args]

    def start(self) -> PostgresServer:
        """Create the cluster and start the server (about 1-3 s). Raises RuntimeError."""
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chmod(self.folder, 0o700)
            for p in (self.folder, pwfile):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        self.port = _free_port()
        if self.kept and (self.data / "PG_VERSION").exists():
            self.resume()
            return self
        self._run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", USER,
                   "-A", "scram-sha-256", "--pwfile", str(pwfile), "-E", "UTF8",
                   "--locale", "C.UTF-8", "--no-sync"])
        self.resume()
        return self

    def _run(self, step: list[str]) -> None:
        done = subprocess.run(self._cmd(*step), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.folder / "log"
            raise RuntimeError(
                f"{step[0]} failed: {done.stderr or done.stdout}"
                + (log.read_text() if log.exists() else "")
            )

    def resume(self) -> None:
        """Start the server (again) on its port."""
        self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60",
                   "-l", str(self.folder / "log"), "-o",
                   f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder}"
                   + ("" if self.durable else
                      " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"),
                   "start"])

    def pause(self) -> None:
        """Stop the server (fast shutdown: clients are disconnected); :meth:`resume` restarts it."""
        self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                   "stop"])

    def url(self, database: str = "postgres", *, password: str | None = PASSWORD) -> str:
        """A ``postgresql://`` URL of a database on this server."""
        auth = USER if password is None else f"{USER}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def new_database(self, name: str | None = None) -> str:
        """Set up an empty place for one test's store and return its URL.

        A new schema in the database ``parley_tests`` (made on first use), named as
        the URL's search path (``?options=-csearch_path=…``): to Parley an empty
        database, made in milliseconds (``CREATE DATABASE`` takes ~0.5 s).
        ``name``: the schema's name (default: a new random one).
        """
        import psycopg

        name = name or "t_" + uuid.uuid4().hex[:16]
        if not self._tests_db:
            with psycopg.connect(self.url(), autocommit=True) as con:
                con.execute('CREATE DATABASE "parley_tests"')
            self._tests_db = True
        with psycopg.connect(self.url("parley_tests"), autocommit=True) as con:
            con.execute(f'CREATE SCHEMA "{name}"')
        return self.schema_url(name)

    def schema_url(self, name: str) -> str:
        """The URL of the store :meth:`new_database` made as ``name``."""
        return self.url("parley_tests") + f"?options=-csearch_path%3D{name}"

    def stop(self) -> None:
        """Stop the server and remove its folder (a kept folder: stopped cleanly, left)."""
        if self.kept:
            self.pause()
            return
        with contextlib.suppress(Exception):
            subprocess.run(
                self._cmd(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate",
                          "-w", "stop"),
                capture_output=True, timeout=60,
            )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                shutil.rmtree(self.folder)
                return
            except OSError:
                time.sleep(0.1)
