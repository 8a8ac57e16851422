"""No import cycle between Parley's modules, counting every import (issues 22 and 33).

Every import is an edge: at module level, under ``if TYPE_CHECKING:``, and inside
functions. A deferred import (start-up time, the window made before asyncio) still ties
the modules together: none can be read, moved or tested without the others. Only a
module's import of its own parent package, which Python makes anyway, is no edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """{module: the modules of ``package`` it imports anywhere in it} for ``folder``."""
    modules: dict[str, Path] = {}
    for path in folder.rglob("*.py"):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package, *parts])] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name
                       and not name.startswith(m + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_type_checking_and_deferred_cycles(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import pkg.b\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\n")
    (tmp_path / "c.py").write_text("from pkg import a\ndef f():\n    import pkg.b\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph == {"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.c"}, "pkg.c": {"pkg.a", "pkg.b"}}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
    (tmp_path / "c.py").write_text("def f():\n    from pkg import a\n")  # deferred: an edge too
    assert cycles(import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.b", "pkg.c"]]
    (tmp_path / "c.py").write_text("X = 1\n")
    assert cycles(import_graph(tmp_path, "pkg")) == []


@pytest.mark.parametrize("folder", ["core", "gui"])
def test_no_import_cycle(folder: str) -> None:
    graph = import_graph(ROOT / folder, f"parley.{folder}")
    assert len(graph) > 30
    assert cycles(graph) == []
