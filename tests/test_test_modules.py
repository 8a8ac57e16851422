"""No test module imports from another test module.

What several test modules share lives in a ``conftest.py`` (fixtures) or in a module not
named ``test_*`` (helpers: ``tests/core/tool_support.py``, ``tests/gui/helpers.py``,
``tests/gui/transcript_reading.py`` …). Importing from a test module runs its set-up
again under another name, and hides a fixture's origin behind ``noqa: F401/F811``.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_test_module(name: str) -> bool:
    return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def imports_of_test_modules(path: Path) -> list[str]:
    """``"line: module"`` for each import (anywhere in the file) of a ``tests.*.test_*``
    module in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and _is_test_module(node.module):
            found.append(f"{node.lineno}: {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: {a.name}" for a in node.names if _is_test_module(a.name)]
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_no_module_under_tests_imports_a_test_module() -> None:
    offenders = {str(p.relative_to(TESTS)): hits for p in sorted(TESTS.rglob("*.py"))
                 if (hits := imports_of_test_modules(p))}
    assert offenders == {}, "move what is shared to a conftest.py or a helper module"


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "test_x.py"
    module.write_text("def f():\n    from tests.gui.test_y import z\n"
                      "import tests.core.test_w as w\nfrom tests.gui.helpers import drop\n")
    assert imports_of_test_modules(module) == ["2: tests.gui.test_y", "3: tests.core.test_w"]
