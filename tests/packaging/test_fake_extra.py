"""The fake provider server runs with the ``fake`` extra alone (README: try Parley without
an account): every module it imports is the standard library's, its own, or in that extra."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(module: str) -> set[str]:
    """Top-level names imported by ``module`` (a ``tests.fakes`` module) and the
    ``tests.fakes`` modules it imports in turn."""
    seen: set[str] = set()
    found: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        tree = ast.parse((ROOT / (name.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = ([f"tests.fakes.{a.name}" for a in node.names]
                         if node.module == "tests.fakes" else [node.module])
            else:
                names = []
            for n in names:
                if n.startswith("tests.fakes."):
                    todo.append(n)
                elif n != "tests.fakes" and n != "__future__":
                    found.add(n.split(".")[0])
    return found


def test_the_fake_server_needs_only_the_fake_extra():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]["fake"]
    allowed = {req.split(">")[0].split("=")[0].split("[")[0].strip().lower() for req in extra}
    third_party = {n for n in _imports("tests.fakes.server") if n not in sys.stdlib_module_names}
    assert third_party == allowed == {"starlette", "uvicorn"}
