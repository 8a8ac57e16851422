"""What the message buttons and the message menu use of the transcript view.

``parley.gui.transcript.view.TranscriptView`` (a QWidget) builds the buttons over a
message (:mod:`parley.gui.transcript.actions_row`) and its context menu
(:mod:`parley.gui.transcript.menu`); they are given the view typed by
:class:`MessageView`, so they do not import the view that imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from parley.gui.transcript.rows import Node


class MessageView(Protocol):
    """The transcript view as its message buttons and menu see it."""

    @property
    def list_view(self) -> Any: ...  # TranscriptListView

    @property
    def model(self) -> Any: ...  # TranscriptModel

    @property
    def regenerateRequested(self) -> Any: ...  # noqa: N802  (a Qt signal)

    @property
    def answerWithRequested(self) -> Any: ...  # noqa: N802  (a Qt signal)

    @property
    def model_choices(self) -> Any: ...  # () -> [(model ref, label)]

    def message_action(self, name: str, row: int | None = None) -> bool: ...

    def can_regenerate(self) -> bool: ...

    def continuable(self, row: int) -> bool: ...

    def editable(self, node: Node) -> bool: ...

    def retry_kind(self, row: int) -> str | None: ...

    def branch_of(self, turn_id: str) -> tuple[int, int] | None: ...

    def isAncestorOf(self, child: QWidget) -> bool: ...  # noqa: N802  (QWidget's)
