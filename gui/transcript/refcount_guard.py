"""Keep ``None``, ``True`` and ``False`` alive under PySide6 6.12 on CPython 3.11.

PySide6 6.12.0's abi3 wheels hand out these singletons without taking a
reference — as CPython ≥ 3.12 allows, where they are immortal. On 3.11 every
void C++ method call (``QPainter.save()``, ``QWidget.update()``,
``QTextDocument.setTextWidth()``…) lowers ``None``'s reference count by one,
and every emit of a signal with arguments (``model.dataChanged.emit(a, b)``)
lowers ``True``'s. After a few thousand calls — seconds of painting or
streaming — the interpreter aborts with "Fatal Python error: none_dealloc"
(or ``bool_dealloc``). Measured in this venv: 500 calls of ``QWidget.update()``
lower ``sys.getrefcount(None)`` by exactly 500.

:func:`guard_singletons` does what 3.12 does: it gives these objects a
reference count no run can bring to zero. It is a no-op on 3.12+ and on other
interpreters. It belongs at GUI start-up (gui/__init__.py or gui/app.py); the
transcript package calls it on import so its painting is safe either way.
"""

from __future__ import annotations

import ctypes
import sys

_RESERVE = 1 << 48  # references added: ~2.8e14 calls before a count could reach zero
_SINGLETONS = (None, True, False, NotImplemented, Ellipsis)


def guard_singletons() -> bool:
    """Raise the reference counts of None, True, False (…) out of reach on CPython < 3.12.

    Returns:
        True if counts were raised now, False if not needed (3.12+, another
        interpreter, or already done).
    """
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return False
    raised = False
    for obj in _SINGLETONS:
        refcount = ctypes.c_ssize_t.from_address(id(obj))
        if refcount.value < _RESERVE // 2:
            refcount.value += _RESERVE
            raised = True
    return raised
