"""core/ never imports Qt: every import statement of every module is parsed with ast."""

from __future__ import annotations

import ast
from pathlib import Path

from parley import core

FORBIDDEN = {"PySide6", "qasync", "shiboken6", "PyQt5", "PyQt6"}
CORE = Path(core.__file__).parent


def qt_imports(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", ""))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        found += [n for n in names if n.split(".")[0] in FORBIDDEN]
    return found


def test_checker_sees_every_import_form():
    src = (
        "import PySide6.QtCore\nfrom qasync import QEventLoop\n"
        "def f():\n    import shiboken6\n"
        "importlib.import_module('PySide6.QtWidgets')\nimport os\n"
    )
    assert qt_imports(src) == ["PySide6.QtCore", "qasync", "shiboken6", "PySide6.QtWidgets"]


def test_no_core_module_imports_qt():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) > 10
    offenders = {
        str(p.relative_to(CORE.parent)): found
        for p in modules
        if (found := qt_imports(p.read_text(encoding="utf-8")))
    }
    assert offenders == {}
