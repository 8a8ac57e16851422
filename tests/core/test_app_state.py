"""The app_state keys are declared once (``parley.core.app_state``) and read through it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from parley.core.app_state import APP_STATE, DRAFT, LAST_SESSION, RUN_MARKER
from parley.core.machine import this_machine
from parley.core.store import AsyncStore

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "core" / "app_state.py"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings or bare string statements."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _spelled(path: Path) -> list[str]:
    """The app_state keys (or key prefixes) a module spells as string literals."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in skip):
            for key in APP_STATE:
                text = node.value
                if text == key.name or (key.per and text.startswith(key.name)):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text!r}")
    return found


def test_no_module_spells_an_app_state_key_outside_the_table() -> None:
    modules = [p for d in ("core", "gui") for p in (ROOT / d).rglob("*.py") if p != TABLE]
    assert len(modules) > 100
    spelled = [hit for p in modules for hit in _spelled(p)]
    assert spelled == [], "spell these through parley.core.app_state:\n" + "\n".join(spelled)


def test_the_table_declares_each_key_once_with_its_owner() -> None:
    names = [k.name for k in APP_STATE]
    assert len(names) == len(set(names))
    for key in APP_STATE:
        assert key.shape and key.value and key.meaning
        assert key.owner.startswith("parley."), key
        assert (ROOT / (key.owner.removeprefix("parley.").replace(".", "/") + ".py")).exists()
        assert key.name.endswith(":") == bool(key.per), key


def test_a_family_needs_its_id_and_a_single_key_takes_none() -> None:
    assert DRAFT.key("s1") == "draft:s1"
    with pytest.raises(ValueError):
        DRAFT.key()
    with pytest.raises(ValueError):
        LAST_SESSION.key("s1")


async def test_per_machine_rows(tmp_path: Path) -> None:
    """A sessions.db file keeps the run marker shared; this machine's own keys fall back
    to the shared row an older Parley wrote until this machine writes its own."""
    store = await AsyncStore.open(tmp_path / "s.db")
    try:
        assert RUN_MARKER.row(store) == RUN_MARKER.name
        await RUN_MARKER.set(store, {"pid": 1, "started_at": 2})
        assert await store.get_state("recovery.run") == {"pid": 1, "started_at": 2}
        await store.set_state(LAST_SESSION.name, "old")
        assert await LAST_SESSION.get(store) == "old"
        await LAST_SESSION.set(store, "new")
        assert await store.get_state(this_machine(LAST_SESSION.name)) == "new"
        assert await store.get_state(LAST_SESSION.name) == "old"
        assert await LAST_SESSION.get(store) == "new"
    finally:
        await store.close()
