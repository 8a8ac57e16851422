"""The sidebar reading chats a page at a time (start-up, "Show more"): the open chat stays
highlighted and in view, whether it was listed before the page came or comes with it
(real Sidebar widget)."""

from __future__ import annotations

from typing import Any

from parley.gui.sidebar.model import ID
from parley.gui.sidebar.view import Sidebar
from tests.gui.helpers import SessionRow, SpaceRow

_Space, _Session = SpaceRow, SessionRow


def _page(space: str, first: int, count: int) -> list[_Session]:
    """``count`` chats of ``space`` in display order (newest first), numbered from ``first``."""
    return [_Session(f"{space}{n}", space, f"Chat {n}", 10_000 - n)
            for n in range(first, first + count)]


def _sidebar(qtbot: Any) -> Sidebar:
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 400)
    sidebar.show()
    sidebar.model.set_spaces([_Space("g", "General"), _Space("w", "Work")])
    return sidebar


def _highlighted(sidebar: Sidebar) -> list[str]:
    tree = sidebar.tree
    return [tree.currentIndex().data(ID),
            *[i.data(ID) for i in tree.selectionModel().selectedIndexes()]]


def test_the_open_chat_stays_highlighted_as_pages_come_above_and_after_it(qtbot: Any) -> None:
    sidebar = _sidebar(qtbot)
    sidebar.model.add_sessions("w", _page("w", 0, 50), has_more=True)
    sidebar.select("w3")
    sidebar.model.add_sessions("g", _page("g", 0, 50), has_more=True)  # a space above it
    sidebar.model.add_sessions("w", _page("w", 50, 50), has_more=False)  # "Show more"
    assert _highlighted(sidebar) == ["w3", "w3"]
    assert sidebar.model.session_ids()[:3] == ["g0", "g1", "g2"]
    assert sidebar.model.loaded_count("w") == 100


def test_a_chat_opened_before_it_is_listed_is_highlighted_and_shown_when_its_page_comes(
        qtbot: Any) -> None:
    sidebar = _sidebar(qtbot)
    sidebar.model.add_sessions("g", _page("g", 0, 50), has_more=False)
    sidebar.select("w42")  # e.g. opened from a search hit, its space not read yet
    assert _highlighted(sidebar) == [None]
    sidebar.model.add_sessions("w", _page("w", 0, 50), has_more=False)
    assert _highlighted(sidebar) == ["w42", "w42"]
    tree = sidebar.tree
    shown = tree.visualRect(tree.currentIndex())
    assert tree.viewport().rect().contains(shown)  # scrolled to it
