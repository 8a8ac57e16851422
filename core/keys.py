"""API keys: the OS keyring, with a clear fallback where there is none.

Keys are kept in the OS keyring (service ``parley``, username = provider id)
through the ``keyring`` library. Where no keyring backend exists
(``keyring.errors.NoKeyringError``, usual on Linux without a desktop session)
or it does not answer within ``timeout_s`` (a locked or stuck Secret Service),
they are kept instead in ``keys.json`` in Parley's data folder, a file only
the user can read (mode 0600). ``PARLEY_KEYRING=file`` forces the file
(tests set it); ``PARLEY_KEYRING=keyring`` forbids the fallback.

Reading a provider's key: the key saved in Parley (keyring or file) wins,
then the provider's environment variable (``ANTHROPIC_API_KEY``,
``OPENAI_API_KEY``), so a key chosen in Settings overrides the environment.
Each key comes back as an :class:`ApiKey` saying where it came from, and
:attr:`KeyStore.backend_description` says where saved keys go, for Settings.

A key never appears in a repr, a log line or an error message: :class:`ApiKey`
hides it and errors name only the provider. The calls block (keyring may talk
to D-Bus): the GUI runs them in a worker thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, TypeVar, cast

import keyring
import keyring.errors

from parley.core.errors import ParleyError
from parley.core.private import DIR_MODE, FILE_MODE, narrow

log = logging.getLogger(__name__)

SERVICE = "parley"
FILE_NAME = "keys.json"
BACKEND_ENV = "PARLEY_KEYRING"
#: The environment variable holding each built-in provider's key.
ENV_VARS: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}

KeySource: TypeAlias = Literal["keyring", "file", "environment"]
T = TypeVar("T")


class KeyStoreError(ParleyError):
    """A key could not be saved or removed (the message never holds the key)."""


class KeyringUnavailable(Exception):
    """The OS keyring is missing, failing or not answering (internal; triggers the fallback)."""


@dataclass(frozen=True)
class ApiKey:
    """An API key and where it came from.

    Attributes:
        value: the key itself; shown by no repr or str.
        source: ``keyring``, ``file`` or ``environment``.
    """

    value: str = field(repr=False)
    source: KeySource

    def __repr__(self) -> str:
        return f"ApiKey(source={self.source!r}, value=<hidden>)"

    __str__ = __repr__


class KeyBackend(Protocol):
    """Where saved keys live."""

    name: Literal["keyring", "file"]

    def get(self, provider_id: str) -> str | None: ...

    def set(self, provider_id: str, key: str) -> None: ...

    def delete(self, provider_id: str) -> None: ...

    def describe(self) -> str: ...


def _with_timeout(fn: Callable[..., T], timeout_s: float, *args: Any) -> T:
    """Run a blocking keyring call in a daemon thread; raise KeyringUnavailable past the timeout."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    thread = threading.Thread(target=run, name="parley-keyring", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise KeyringUnavailable(f"the keyring did not answer within {timeout_s:g} s")
    if "error" in box:
        err = box["error"]
        if isinstance(err, keyring.errors.KeyringError):
            raise KeyringUnavailable(type(err).__name__) from None
        raise err
    return cast(T, box.get("value"))


def _delete_password(service: str, username: str) -> None:
    with contextlib.suppress(keyring.errors.PasswordDeleteError):  # nothing saved: fine
        keyring.delete_password(service, username)


class KeyringBackend:
    """Keys in the OS keyring (service ``parley``, username = provider id)."""

    name: Literal["keyring", "file"] = "keyring"

    def __init__(self, timeout_s: float = 3.0) -> None:
        self.timeout_s = timeout_s

    def get(self, provider_id: str) -> str | None:
        return _with_timeout(keyring.get_password, self.timeout_s, SERVICE, provider_id)

    def set(self, provider_id: str, key: str) -> None:
        _with_timeout(keyring.set_password, self.timeout_s, SERVICE, provider_id, key)

    def delete(self, provider_id: str) -> None:
        _with_timeout(_delete_password, self.timeout_s, SERVICE, provider_id)

    def describe(self) -> str:
        backend = keyring.get_keyring()
        return f"the system keyring ({getattr(backend, 'name', type(backend).__name__)})"


class FileBackend:
    """Keys in ``keys.json`` (mode 0600) in the data folder: ``{"keys": {provider_id: key}}``."""

    name: Literal["keyring", "file"] = "file"

    def __init__(self, path: Path | None = None, reason: str = "") -> None:
        self._path = path
        self.reason = reason
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        if self._path is None:
            from parley.core.paths import data_dir

            self._path = data_dir() / FILE_NAME
        return self._path

    def _read(self) -> dict[str, str]:
        self._narrow()
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise KeyStoreError(
                f"Parley could not read its key file {self.path}: "
                f"{exc.strerror}. Check the file's permissions."
            ) from None
        try:
            keys = json.loads(text).get("keys", {})
        except (ValueError, AttributeError):
            log.warning("the key file %s is not valid JSON; ignoring it", self.path)
            return {}
        return {str(k): str(v) for k, v in keys.items() if isinstance(v, str)}

    def _narrow(self) -> None:
        """Make a key file left with looser modes (by an older Parley, a copy, a restore)
        ``0600`` and its folder ``0700``, as ``parley.core.private`` does for every file
        Parley keeps (best effort; nothing happens when the file is missing)."""
        if self.path.exists():
            narrow(self.path.parent, DIR_MODE)
            narrow(self.path, FILE_MODE)

    def _write(self, keys: Mapping[str, str]) -> None:
        path = self.path
        narrow(path.parent, DIR_MODE)
        tmp = path.with_name(path.name + ".tmp")
        data = json.dumps({"version": 1, "keys": dict(keys)}, indent=2).encode()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            try:
                if hasattr(os, "fchmod"):  # a file left by an older run keeps no wider mode
                    os.fchmod(fd, FILE_MODE)
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            raise KeyStoreError(
                f"Parley could not save the key to {path}: {exc.strerror}. "
                "Nothing was changed; check the folder's permissions."
            ) from None

    def get(self, provider_id: str) -> str | None:
        with self._lock:
            return self._read().get(provider_id)

    def set(self, provider_id: str, key: str) -> None:
        with self._lock:
            keys = self._read()
            keys[provider_id] = key
            self._write(keys)

    def delete(self, provider_id: str) -> None:
        with self._lock:
            keys = self._read()
            if keys.pop(provider_id, None) is not None:
                self._write(keys)

    def describe(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"a file only you can read: {self.path}{why}"


def detect_backend(timeout_s: float = 3.0) -> KeyBackend:
    """Pick where keys are saved: the OS keyring when it works, else the file.

    ``PARLEY_KEYRING=file`` forces the file; ``PARLEY_KEYRING=keyring`` returns
    the keyring without probing. Otherwise the keyring is probed with one read
    (bounded by ``timeout_s``); no backend, an error or a timeout selects the
    file, with the reason in its description.
    """
    forced = os.environ.get(BACKEND_ENV, "").strip().lower()
    if forced == "file":
        return FileBackend(reason=f"{BACKEND_ENV}=file")
    backend = KeyringBackend(timeout_s)
    if forced == "keyring":
        return backend
    try:
        current = _with_timeout(keyring.get_keyring, timeout_s)
        if getattr(current, "priority", 1) <= 0:
            return FileBackend(reason="no system keyring was found")
        backend.get("__parley_probe__")
    except (KeyringUnavailable, keyring.errors.KeyringError) as exc:
        log.info("keyring unusable (%s); keys go to a file", exc)
        return FileBackend(reason="the system keyring did not answer")
    return backend


class KeyStore:
    """Reads and saves API keys, reporting where each came from.

    Args:
        backend: where saved keys live; detected on first use when None.
        environ: the environment to read ``*_API_KEY`` variables from.
        timeout_s: the longest wait for the keyring, seconds.
    """

    def __init__(
        self,
        backend: KeyBackend | None = None,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 3.0,
    ) -> None:
        self._backend = backend
        self._environ = environ
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        name = self._backend.name if self._backend else "undetected"
        return f"KeyStore(backend={name!r})"

    @property
    def backend(self) -> KeyBackend:
        """The backend in use (detected, and possibly probed, on first access)."""
        if self._backend is None:
            self._backend = detect_backend(self.timeout_s)
        return self._backend

    @property
    def backend_name(self) -> Literal["keyring", "file"]:
        """``keyring`` or ``file``."""
        return self.backend.name

    @property
    def backend_description(self) -> str:
        """Where saved keys go, in words for Settings."""
        return self.backend.describe()

    def _fall_back(self, exc: Exception) -> KeyBackend:
        log.info("keyring failed (%s); keys go to a file from now on", exc)
        self._backend = FileBackend(reason="the system keyring stopped answering")
        return self._backend

    def _stored(self, provider_id: str) -> ApiKey | None:
        backend = self.backend
        try:
            value = backend.get(provider_id)
        except KeyringUnavailable as exc:
            backend = self._fall_back(exc)
            value = backend.get(provider_id)
        return ApiKey(value, backend.name) if value else None

    def get(self, provider_id: str, env_var: str | None = None) -> ApiKey | None:
        """Return a provider's key: the saved one, else its environment variable.

        Args:
            provider_id: e.g. ``anthropic``.
            env_var: the variable to read; defaults to :data:`ENV_VARS` for
                built-in providers (none for others).

        Raises:
            KeyStoreError: the key file exists but cannot be read.
        """
        stored = self._stored(provider_id)
        if stored is not None:
            return stored
        var = env_var or ENV_VARS.get(provider_id)
        environ = os.environ if self._environ is None else self._environ
        value = environ.get(var, "").strip() if var else ""
        return ApiKey(value, "environment") if value else None

    def set(self, provider_id: str, key: str) -> KeySource:
        """Save a provider's key; returns where it went (``keyring`` or ``file``).

        Raises:
            KeyStoreError: the key is empty, or it could not be saved anywhere.
        """
        key = key.strip()
        if not key:
            raise KeyStoreError("The API key is empty; paste the whole key and save again.")
        backend = self.backend
        try:
            backend.set(provider_id, key)
        except KeyringUnavailable as exc:
            backend = self._fall_back(exc)
            backend.set(provider_id, key)
        return backend.name

    def delete(self, provider_id: str) -> None:
        """Forget a provider's saved key (the environment variable is untouched).

        Raises:
            KeyStoreError: the key file could not be rewritten.
        """
        backend = self.backend
        try:
            backend.delete(provider_id)
        except KeyringUnavailable as exc:
            self._fall_back(exc).delete(provider_id)
