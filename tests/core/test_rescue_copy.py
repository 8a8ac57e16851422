"""The copy saved when sessions.db vanished while open (parley.core.store.sqlite.faults), on real
files.

The data folder is deleted for real (``shutil.rmtree``) under an open store;
the store still reads the deleted file through its descriptor. Closing must
save the copy where ``DatabaseMissing`` promised (beside the old name, the
folder made again), never twice for the same content, and a copy that cannot
be written is a typed error saying why.

SQLite only: a file deleted under an open store.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.errors import DatabaseMissing, RescueFailed
from parley.core.store.schema import dbapi_connection
from parley.core.store.sqlite.faults import current_copy, rescue_name


def _chat(store: Store, *texts: str) -> str:
    sid = store.create_session(title="kept").id
    for text in texts:
        store.append_turn(sid, Turn("user", [TextBlock(text)]))
    return sid


def _rescued(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".rescued-" in p.name)


def _texts(path: Path, sid: str) -> list[str]:
    with Store.open(path) as store:
        return [t.text() for t in store.get_turns(sid)]


@pytest.mark.parametrize("depth", [1, 3])
def test_closing_after_the_data_folder_was_deleted_saves_the_copy_in_it_made_again(
    tmp_path: Path, depth: int
) -> None:
    top = tmp_path / "trial-home"
    folder = top.joinpath(*["sub"] * (depth - 1))
    path = folder / "sessions.db"
    with Store.open(path) as store:
        sid = _chat(store, "first question")
        shutil.rmtree(top)  # the whole data folder, as `rm -rf` does
        with pytest.raises(DatabaseMissing):
            store.append_turn(sid, Turn("user", [TextBlock("second question")]))
    [copy] = _rescued(folder)
    assert copy.name.startswith("sessions.db.rescued-")
    assert not path.exists()  # the copy is not put in its place: the person decides
    assert _texts(copy, sid) == ["first question"]
    assert not [p for p in folder.iterdir() if p.name.endswith((".partial", "-wal"))]


def test_a_copy_already_saved_is_not_saved_again_on_close(tmp_path: Path) -> None:
    path = tmp_path / "home" / "sessions.db"
    chosen = tmp_path / "chosen.db"
    with Store.open(path) as store:
        sid = _chat(store, "kept")
        shutil.rmtree(path.parent)
        assert store.backup_to(chosen) == chosen  # File ▸ Save a copy now…
        assert current_copy(dbapi_connection(store._con)) == chosen  # noqa: SLF001
    assert not path.parent.exists()  # nothing beside the old name: the copy was made
    assert _texts(chosen, sid) == ["kept"]


def test_a_copy_that_is_out_of_date_or_gone_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "home" / "sessions.db"
    early, gone = tmp_path / "early.db", tmp_path / "gone.db"
    with Store.open(path) as store:
        sid = _chat(store, "one")
        store.backup_to(early)  # a copy, then more is written: out of date
        store.append_turn(sid, Turn("user", [TextBlock("two")]))
        raw = dbapi_connection(store._con)  # noqa: SLF001
        assert current_copy(raw) is None
        store.backup_to(gone)
        assert current_copy(raw) == gone
        gone.unlink()  # the person deleted it again
        assert current_copy(raw) is None
        os.unlink(path)
    [copy] = _rescued(path.parent)
    assert _texts(copy, sid) == ["one", "two"]
    assert _texts(early, sid) == ["one"]


def test_a_copy_that_cannot_be_written_is_a_typed_error_saying_why(tmp_path: Path) -> None:
    path = tmp_path / "home" / "sessions.db"
    path.parent.parent.joinpath("home").write_text("a file where the folder was")
    with pytest.raises(OSError) as raised:
        rescue_name(path)
    error = RescueFailed.of(path.with_name("sessions.db.rescued"), raised.value)
    assert "could not save a copy" in error.message and "a file is in the way" in error.message
    assert "Choose another place" in error.message
    taken = RescueFailed.of(tmp_path / "x.db", FileExistsError(17, "File exists"))
    assert "already exists" in taken.message


def test_the_missing_file_message_names_the_menu_command(tmp_path: Path) -> None:
    message = DatabaseMissing(tmp_path / "sessions.db").message
    assert "File ▸ Save a copy now…" in message
    assert "will save a copy beside the old name when it closes" in message
