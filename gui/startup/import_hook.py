"""Python's own ``__import__`` back once PySide6 is imported (every later import is faster).

This module must be imported before PySide6 is: it takes ``builtins.__import__``
as it is imported (``parley.gui.app`` imports it first thing).
"""

from __future__ import annotations

import builtins
import sys

#: Python's own ``__import__``, taken before PySide6 is imported (see
#: :func:`drop_pyside_import_hook`).
_PLAIN_IMPORT = builtins.__import__


def drop_pyside_import_hook() -> bool:
    """Give Python back its own ``__import__`` once PySide6 is imported.

    PySide6 replaces ``builtins.__import__`` with a hook for its ``__feature__``
    switches (``from __feature__ import snake_case``), which Parley does not use:
    for every module imported afterwards it reads the module's source to see if
    it mentions PySide6. That made each later import slower — about 0.2 s of
    CPU on the ``anthropic`` SDK alone, 0.4–0.6 s of start-up in all (the chats
    listed, then the provider ready). Without the hook PySide6 treats every
    module as using no feature, which is what Parley's code expects.

    Measured again (issue 33): importing anthropic, openai, SQLAlchemy's ORM and
    Pygments' lexers after PySide6 took 6.1-6.2 s of CPU with the hook dropped and
    7.6-9.4 s with it kept (three runs each, load average 8-10); ``bench_startup``
    (offscreen, load 6-7) had the providers ready at 11.2x / 14.0x the bare window's
    first paint with it dropped, 20.3x / 17.5x with it kept (empty / 1 GB store). Under
    Xvfb (``--runs 3``, load 1.4-2.4) the key typed at the first paint was kept at 2.00x /
    1.83x the bare window with it dropped, 2.41x / 2.14x with it kept; the message reached
    the provider at 3.99 / 3.61 s and 3.87 / 3.94 s (within the machine's noise). It is
    kept.

    Measured again (issue 33, session 15): the same code with the hook kept, launched
    in turn with this one as ``bench_startup`` launches it (Xvfb, 5 rounds, load
    1.6-2.5, medians, empty / 1 GB store): the chats listed at 1.35 / 1.68 s and the
    message typed at the first paint at the provider at 3.91 / 3.92 s with the hook
    kept; 1.05 / 1.11 s and 2.89 / 3.63 s with it dropped. It still pays.

    Measured again (issue 33, session 19) with the SDKs in the provider process, no
    longer imported here: two passes in opposite orders, ``bench_startup --runs 4``,
    Xvfb, load 0.9-1.7, medians, empty / 1 GB store: the chats listed at 1.34-1.36 /
    1.39-1.53 s and the message at the provider at 2.05-2.10 / 2.22-2.26 s with the hook
    kept; 1.06-1.14 / 1.12-1.15 s and 1.81-1.85 / 1.80-1.82 s with it dropped (the 2.0 s
    budget is met only with it dropped). It still pays.

    Returns:
        True when the hook was found and removed.
    """
    if builtins.__import__ is _PLAIN_IMPORT or "__feature__" not in sys.modules:
        return False
    builtins.__import__ = _PLAIN_IMPORT
    return True
