"""Which store to open: a sessions.db file (SQLite, the default) or a PostgreSQL database.

A target that is a ``postgresql://`` URL (``--database``, ``PARLEY_DATABASE_URL``,
or the choice saved by Settings → Storage in the data folder) opens
:class:`parley.core.store.postgres.store.PgStore`; a file path opens
:class:`parley.core.store.store.Store` exactly as before.

``--database`` / ``PARLEY_DATABASE_URL`` take a PostgreSQL address only, never a file
path: the file store is the data folder's sessions.db (``--home`` chooses the folder),
and taking any other text as a file name is what turned a mistyped address
(``postgressql://me:pw@host/db``) into a new file named after it, password included.
Anything that looks like an address but is not a PostgreSQL one is refused everywhere
(``InvalidDatabaseUrl``), also where a file path is fine (``--copy-to``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from parley.core import paths
from parley.core.private import write_private_text
from parley.core.store.errors import SecretNotKept
from parley.core.store.postgres.store import (
    PgStore,
    hide_password,
    is_database_url,
    looks_like_address,
    parse_url,
    password_in_place,
    save_password,
)
from parley.core.store.store import Store

#: Environment variable naming the database to use instead of sessions.db (declared in
#: ``parley.core.paths``, read before the window's first paint).
DATABASE_URL_ENV = paths.DATABASE_URL_ENV


#: In the data folder: the database chosen in Settings → Storage (its URL, no password).
CHOICE_FILE = "database.txt"


def database_url(cli_value: str | None = None, folder: Path | None = None) -> str | None:
    """The database URL chosen: ``--database`` (or the window's environment) first, then
    ``PARLEY_DATABASE_URL``, then the choice saved in ``folder`` (Settings → Storage);
    None: the sessions.db file.

    Raises:
        InvalidDatabaseUrl: the address given is not a complete PostgreSQL address (a
            mistyped scheme, a file path, a port that is not a number, no database name):
            nothing is opened or created.
    """
    value = cli_value or os.environ.get(DATABASE_URL_ENV) or None
    if value is None and folder is not None:
        value = saved_database_url(folder)
    if not value or not value.strip():
        return None
    parse_url(value.strip())
    return value.strip()


def saved_database_url(folder: Path) -> str | None:
    """The database saved as the place of the chats in ``folder`` (None: none, or unreadable)."""
    try:
        value = (folder / CHOICE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return value if is_database_url(value) else None


def save_database_choice(folder: Path, url: str | None) -> None:
    """Keep the chats in the database ``url`` from the next start (None: in sessions.db).

    A password in ``url`` — in its user part or as ``?password=`` — is saved where API
    keys go (``postgres.store.save_password``), never in the file, which holds the URL
    without it (mode 0600); ``postgres.store.password_for`` puts it back when connecting.

    Raises:
        InvalidDatabaseUrl: ``url`` is not a PostgreSQL URL.
        OSError: the file could not be written (the choice is unchanged).
        KeyStoreError: the password could not be saved.
        SecretNotKept: the query holds another secret (``sslpassword``); nothing saved.
    """
    path = folder / CHOICE_FILE
    if url is None:
        path.unlink(missing_ok=True)
        return
    parsed = password_in_place(parse_url(url))  # "?password=" too
    # Another secret of the query (sslpassword…) is not written to the file either.
    secrets = [k for k in parsed.query if "password" in k.lower()]
    if secrets:
        raise SecretNotKept(hide_password(url), secrets[0])
    if parsed.password:
        save_password(url, parsed.password)
    plain = parsed.set(drivername="postgresql")._replace(password=None).render_as_string()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    write_private_text(tmp, plain + "\n")
    os.replace(tmp, path)


def open_store(target: Path | str, **kwargs: Any) -> Store:
    """Open the store at ``target``: a PostgreSQL URL, or a sessions.db path.

    Args:
        target: ``postgresql://…`` or a file path.
        kwargs: for a file, :meth:`parley.core.store.store.Store.open`'s keyword arguments
            (ignored for a database).

    Raises:
        InvalidDatabaseUrl: ``target`` looks like an address but is not a PostgreSQL one
            (nothing is created).
        StoreError: see :meth:`Store.open` and :meth:`PgStore.open_url`.
    """
    if is_database_url(target) or looks_like_address(target):
        return PgStore.open_url(str(target))  # a mistyped address: InvalidDatabaseUrl
    return Store.open(target, **kwargs)
