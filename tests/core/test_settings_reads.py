"""Every settings read and write goes through its declaration (``parley.core.settings``)."""

from __future__ import annotations

import ast
from pathlib import Path

from parley.core.settings import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
#: The store's raw key/value calls; only the declarations' reader and the store use them.
RAW = {"get_setting", "set_setting", "all_settings"}
ALLOWED = (ROOT / "core" / "settings.py", ROOT / "core" / "store")


def _modules() -> list[Path]:
    return [p for d in ("core", "gui") for p in (ROOT / d).rglob("*.py")
            if p != ALLOWED[0] and ALLOWED[1] not in p.parents]


def test_no_module_reads_a_setting_past_its_declaration() -> None:
    found = []
    modules = _modules()
    assert len(modules) > 100
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in RAW):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.func.attr}")
    assert found == [], "read settings through parley.core.settings.Settings:\n" + "\n".join(found)


def test_keys_named_to_settings_are_declared() -> None:
    """``Settings.of(store).get("key")`` and its kin name declared keys (caught here, not
    when the code runs)."""
    declared = {s.key for s in SETTINGS}
    unknown = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "set", "reset")
                    and isinstance(node.func.value, ast.Call)
                    and isinstance(node.func.value.func, ast.Attribute)
                    and node.func.value.func.attr == "of"
                    and isinstance(node.func.value.func.value, ast.Name)
                    and node.func.value.func.value.id == "Settings"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value not in declared):
                unknown.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.args[0].value}")
    assert unknown == []
