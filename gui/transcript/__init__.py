"""The transcript widget: the conversation in the middle of the window.

Public: :class:`TranscriptView` (see ``gui/transcript/view.py``).
"""

from parley.gui.transcript.view import TranscriptView

__all__ = ["TranscriptView"]
