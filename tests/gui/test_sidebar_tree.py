"""The sidebar's tree model on its own: forks nest under their parent, wait at their
space's level until it is loaded, stay when it goes, and leave it with another space."""

from __future__ import annotations

from parley.gui.sidebar.model import ID, PARENT_GONE, SESSION_MIME, SPACE_MIME, SessionTreeModel
from tests.gui.helpers import SessionRow, SpaceRow, forks_of

_Space, _Session = SpaceRow, SessionRow


def _model() -> SessionTreeModel:
    m = SessionTreeModel()
    m.set_spaces([_Space("g", "General"), _Space("w", "Work")])
    return m


def _children(m: SessionTreeModel, sid: str) -> list[str]:
    return forks_of(m, sid)


def test_forks_nest_under_their_parent_newest_first():
    m = _model()
    m.add_sessions("g", [_Session("f2", "g", "F2", 30, "p"), _Session("p", "g", "P", 20),
                         _Session("f1", "g", "F1", 10, "p"), _Session("q", "g", "Q", 5)],
                   has_more=False)
    assert _children(m, "p") == ["f2", "f1"]
    assert m.session_ids() == ["p", "f2", "f1", "q"]
    assert m.loaded_count("g") == 4
    # A fork of a fork nests one level deeper.
    m.upsert(_Session("ff", "g", "FF", 40, "f1"))
    assert _children(m, "f1") == ["ff"]
    assert m.index_of("ff").parent().parent() == m.index_of("p")


def test_a_fork_waits_for_its_parent_and_is_adopted():
    m = _model()
    m.add_sessions("g", [_Session("f", "g", "F", 30, "p")], has_more=True)
    assert m.index_of("f").parent().data() == "General"
    m.add_sessions("g", [_Session("p", "g", "P", 5)], has_more=False)
    assert _children(m, "p") == ["f"]


def test_removing_a_parent_keeps_its_forks_at_the_space_level():
    m = _model()
    m.add_sessions("g", [_Session("p", "g", "P", 20), _Session("f", "g", "F", 10, "p")],
                   has_more=False)
    m.remove("p")
    assert m.session_ids() == ["f"] and m.index_of("f").parent().data() == "General"
    m.set_parent_gone("p")
    assert m.index_of("f").data(PARENT_GONE) is True
    m.upsert(_Session("p", "g", "P", 20))  # undo: the fork goes back under it
    assert _children(m, "p") == ["f"]


def test_moving_a_parent_leaves_its_forks_in_their_space():
    m = _model()
    m.add_sessions("g", [_Session("p", "g", "P", 20), _Session("f", "g", "F", 10, "p")],
                   has_more=False)
    m.upsert(_Session("p", "w", "P", 20))
    assert m.space_of("p") == "w" and m.index_of("f").parent().data() == "General"
    assert m.session_ids() == ["f", "p"]


def test_spaces_reorder_rename_and_go_with_their_rows():
    m = _model()
    m.add_sessions("w", [_Session("a", "w", "A", 1)], has_more=False)
    m.order_spaces(["w", "g"])
    assert m.space_ids() == ["w", "g"] and m.space_of("a") == "w"
    m.rename_space("w", "Office")
    assert m.space_index("w").data() == "Office"
    m.set_spaces([_Space("g", "General")])  # a space removed: the list is read again
    assert m.space_ids() == ["g"] and not m.has("a") and m.session_ids() == []


def test_drags_carry_the_row_id():
    m = _model()
    m.add_sessions("g", [_Session("a", "g", "A", 1)], has_more=False)
    data = m.mimeData([m.index_of("a")])
    assert bytes(data.data(SESSION_MIME)).decode() == "a"
    data = m.mimeData([m.space_index("w")])
    assert bytes(data.data(SPACE_MIME)).decode() == "w"
    assert m.space_index("w").data(ID) == "w"
