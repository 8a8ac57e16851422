"""API keys: keyring, fallbacks, sources, and never showing a key."""

from __future__ import annotations

import json
import logging
import stat
import threading
import time

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest

from parley.core.keys import (
    ApiKey,
    FileBackend,
    KeyringBackend,
    KeyStore,
    KeyStoreError,
    detect_backend,
)

SECRET = "sk-ant-fake.TOPSECRET-0123456789abcdef"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A working keyring kept in memory (stands in for the OS keyring)."""

    priority = 10  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


class StuckKeyring(MemoryKeyring):
    """A keyring that never answers (a locked Secret Service)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def get_password(self, service, username):
        self.release.wait(10)
        return None

    def set_password(self, service, username, password):
        self.release.wait(10)


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service, username):
        raise keyring.errors.NoKeyringError("no backend")


@pytest.fixture
def use_keyring(monkeypatch):
    """Install a keyring backend for one test and let detection use it."""
    before = keyring.get_keyring()
    monkeypatch.delenv("PARLEY_KEYRING", raising=False)

    def install(backend):
        keyring.set_keyring(backend)
        return backend

    yield install
    current = keyring.get_keyring()
    if isinstance(current, StuckKeyring):
        current.release.set()
    keyring.set_keyring(before)


def test_forced_file_backend_lives_in_the_data_dir(_isolated_home):
    backend = detect_backend()
    assert isinstance(backend, FileBackend)
    store = KeyStore(backend)
    assert store.set("anthropic", f"  {SECRET}\n") == "file"
    path = _isolated_home / "keys.json"
    assert backend.path == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["keys"] == {"anthropic": SECRET}
    assert store.get("anthropic") == ApiKey(SECRET, "file")
    store.delete("anthropic")
    assert store.get("anthropic") is None
    store.delete("anthropic")  # deleting nothing is fine
    assert "only you can read" in store.backend_description and str(path) in (
        store.backend_description
    )


def test_environment_is_used_when_nothing_is_saved(tmp_path):
    env = {"OPENAI_API_KEY": " sk-env-key-1234567890 "}
    store = KeyStore(FileBackend(tmp_path / "k.json"), environ=env)
    key = store.get("openai")
    assert key is not None and key.source == "environment" and key.value == "sk-env-key-1234567890"
    assert store.get("ollama") is None  # no variable for other providers
    assert store.get("ollama", env_var="OPENAI_API_KEY").source == "environment"
    store.set("openai", "sk-saved-abcdefghijkl")
    assert store.get("openai") == ApiKey("sk-saved-abcdefghijkl", "file")


def test_keyring_is_used_when_it_works(use_keyring, tmp_path):
    memory = use_keyring(MemoryKeyring())
    store = KeyStore()
    assert store.backend_name == "keyring"
    assert store.set("anthropic", SECRET) == "keyring"
    assert memory.store[("parley", "anthropic")] == SECRET
    assert store.get("anthropic") == ApiKey(SECRET, "keyring")
    assert "system keyring" in store.backend_description
    store.delete("anthropic")
    store.delete("anthropic")
    assert store.get("anthropic") is None


def test_no_keyring_backend_falls_back_to_the_file(use_keyring):
    use_keyring(keyring.backends.fail.Keyring())  # what this machine has
    backend = detect_backend()
    assert isinstance(backend, FileBackend) and "no system keyring" in backend.describe()
    use_keyring(BrokenKeyring())  # NoKeyringError on use
    assert isinstance(detect_backend(), FileBackend)


def test_a_stuck_keyring_falls_back_within_the_timeout(use_keyring):
    use_keyring(StuckKeyring())
    start = time.monotonic()
    store = KeyStore(timeout_s=0.2)
    assert store.backend_name == "file"
    assert time.monotonic() - start < 2
    assert "did not answer" in store.backend_description


def test_a_keyring_that_stops_answering_later(use_keyring, caplog):
    use_keyring(StuckKeyring())
    store = KeyStore(KeyringBackend(timeout_s=0.1))
    with caplog.at_level(logging.DEBUG):
        assert store.set("anthropic", SECRET) == "file"
        assert store.get("anthropic") == ApiKey(SECRET, "file")
    assert store.backend_name == "file"
    assert SECRET not in caplog.text


def test_keys_never_show_in_reprs_or_errors(tmp_path):
    key = ApiKey(SECRET, "keyring")
    for text in (repr(key), str(key), f"{key}", repr([key]), repr({"k": key})):
        assert SECRET not in text
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    store = KeyStore(FileBackend(blocked / "keys.json"))  # its folder is a file
    with pytest.raises(KeyStoreError) as info:
        store.set("anthropic", SECRET)
    assert SECRET not in str(info.value) and "could not" in str(info.value)
    assert SECRET not in repr(store)
    with pytest.raises(KeyStoreError):
        store.set("anthropic", "   ")


def test_a_corrupt_key_file_is_ignored_not_fatal(tmp_path):
    path = tmp_path / "keys.json"
    path.write_text("{not json")
    store = KeyStore(FileBackend(path), environ={})
    assert store.get("anthropic") is None
    store.set("anthropic", SECRET)
    assert store.get("anthropic").value == SECRET


def test_a_key_file_left_readable_by_others_is_narrowed_when_read(tmp_path):
    # keys.json restored from a copy, or written by hand, with 0644 in a 0755 folder.
    folder = tmp_path / "parley"
    folder.mkdir()
    path = folder / "keys.json"
    path.write_text(json.dumps({"version": 1, "keys": {"anthropic": SECRET}}))
    folder.chmod(0o755)
    path.chmod(0o644)

    assert KeyStore(FileBackend(path)).get("anthropic") == ApiKey(SECRET, "file")

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_saving_a_key_narrows_a_loose_folder_and_file(tmp_path):
    folder = tmp_path / "parley"
    folder.mkdir()
    folder.chmod(0o777)
    path = folder / "keys.json"
    path.write_text(json.dumps({"version": 1, "keys": {}}))
    path.chmod(0o666)

    KeyStore(FileBackend(path)).set("openai", SECRET)

    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["keys"] == {"openai": SECRET}
