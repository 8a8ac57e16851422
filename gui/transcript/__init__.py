"""The transcript widget: the conversation in the middle of the window.

Public: :class:`TranscriptView` (see ``gui/transcript/view.py``).
"""

from gui.transcript.refcount_guard import guard_singletons

guard_singletons()  # PySide6 6.12 on CPython 3.11: see refcount_guard.py

from gui.transcript.view import TranscriptView  # noqa: E402

__all__ = ["TranscriptView"]
