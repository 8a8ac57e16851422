"""A Parley JSON export of a chat with branches (format version 2,
parley.core.convert.parley) imports as that tree: each message once below its parent,
the path it showed, the same branch points; a chat without branches is still written
as version 1. On a sessions.db file and on PostgreSQL (``store`` below)."""

from __future__ import annotations

import json

import pytest

from parley.core.convert import NotAConversation, export_parley
from parley.core.importing.conversation import import_conversation
from parley.core.store.async_store import AsyncStore
from parley.core.store.store import Store
from tests.core.tree_rows import branched, say


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    return any_store


def export_tree(db: Store, sid: str) -> dict:
    """The export as it is written from the store's tree (``Store.get_tree``)."""
    tree = db.get_tree(sid, hydrate=True)
    return export_parley([t.turn for t in tree], session={"title": "Bread"},
                         parents={t.turn.id: t.parent_id for t in tree},
                         path=[t.turn.id for t in tree if t.on_path])


def shape(tree, points) -> tuple[object, ...]:
    """The tree by texts: (each text's parent's text, the path's texts, the branch points
    as (text, n, m)), ids left out (an import gives new ones)."""
    text = {t.turn.id: t.turn.text() for t in tree}
    parents = {text[t.turn.id]: text.get(t.parent_id) for t in tree}
    path = [text[t.turn.id] for t in tree if t.on_path]
    return parents, path, sorted((text[k], p.index, p.total) for k, p in points.items())


async def test_a_chat_with_branches_round_trips_through_the_parley_export(store, tmp_path):
    with Store.open(tmp_path / "there.db") as there:
        sid = branched(there)
        doc = export_tree(there, sid)
        want = shape(there.get_tree(sid), there.branches(sid).points)
    assert doc["version"] == 2 and len(doc["turns"]) == 7 and len(doc["path"]) == 3

    result = await import_conversation(store, json.dumps(doc))

    new = result.session.id
    got = shape(await store.get_tree(new), (await store.branches(new)).points)
    assert got == want
    assert result.session.title == "Bread" and result.turns_imported == 7
    tree = await store.get_tree(new)
    assert not {t.turn.id for t in tree} & {t["id"] for t in doc["turns"]}  # new ids


def test_a_chat_without_branches_is_still_written_as_version_1(tmp_path):
    with Store.open(tmp_path / "there.db") as there:
        sid = there.create_session(title="Line").id
        say(there, sid, "user", "Hi")
        say(there, sid, "assistant", "Hello")
        doc = export_tree(there, sid)
    assert doc["version"] == 1 and "path" not in doc
    assert all("parent_id" not in t for t in doc["turns"])


@pytest.mark.parametrize(("change", "why"), [
    (lambda d: d.update(path=list(reversed(d["path"]))), "is not a line of its turns"),
    (lambda d: d["turns"][0].update(parent_id="nowhere"), "parent is not a turn before it"),
    (lambda d: d.pop("path"), 'its "path" is not a list'),
])
async def test_a_damaged_tree_is_refused_and_nothing_is_written(store, tmp_path, change, why):
    with Store.open(tmp_path / "there.db") as there:
        doc = export_tree(there, branched(there))
    change(doc)
    with pytest.raises(NotAConversation, match=why):
        await import_conversation(store, json.dumps(doc))
    assert await store.list_sessions() == []
