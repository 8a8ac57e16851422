"""What the version sessions of ``tests/fixtures/versions_e73c920.db`` showed, checked on its tree.

``versions_e73c920.json`` (made at commit e73c920 by
``tests/fixtures/make_versions_fixture.py``) records, for every chat listed, the
path shown and each message with versions: its n/m, the alternatives' texts, and
what choosing each showed. :func:`check_store` walks the same on a store
converted to the tree (``Store.branches`` / ``show_branch`` / ``get_tree``),
on either backend.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from parley.core.content import CompactSummaryBlock, DocumentBlock, ImageBlock, TextBlock, Turn

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DB = FIXTURES / "versions_e73c920.db"
RECORD: dict[str, Any] = json.loads((FIXTURES / "versions_e73c920.json").read_text())
WORD = re.compile(r"\bw\d+\b")


def text_of(turn: Turn) -> str:
    """A turn as the record shows it (the fixture script's own rule)."""
    parts: list[str] = []
    for b in turn.blocks:
        if isinstance(b, TextBlock):
            parts.append(b.text)
        elif isinstance(b, CompactSummaryBlock):
            parts.append(f"[summary] {b.summary}")
        elif isinstance(b, ImageBlock):
            parts.append(f"[image {b.name}]")
        elif isinstance(b, DocumentBlock):
            parts.append(f"[document {b.name}]")
    return " | ".join(parts)


def path(store: Any, sid: str) -> list[Turn]:
    """The path shown: the tree's turns on it, in order (``seq`` grows along it)."""
    return [t.turn for t in store.get_tree(sid) if t.on_path]


def shown(store: Any, sid: str) -> list[list[str]]:
    return [[t.role, text_of(t)] for t in path(store, sid)]


def check_points(store: Any, sid: str, points: list[dict[str, Any]], depth: int) -> None:
    """The path's branch points are the recorded ones (place, n/m, alternatives), and
    (``depth`` > 0) choosing each alternative shows what it showed, and choosing the
    one shown again comes back to the same path."""
    here = path(store, sid)
    texts = {t.id: text_of(t) for t in (x.turn for x in store.get_tree(sid))}
    branches = store.branches(sid)
    got = {i: branches.points[t.id] for i, t in enumerate(here) if t.id in branches.points}
    assert sorted(got) == [p["pos"] for p in points], (sid, shown(store, sid))
    before = shown(store, sid)
    for p in points:
        bp = got[p["pos"]]
        assert (bp.index, bp.total) == (p["n"], p["m"]), p["text"]
        assert [texts[t] for t in bp.turn_ids] == [a["text"] for a in p["alternatives"]]
        if depth <= 0:
            continue
        for k, alt in enumerate(p["alternatives"]):
            store.show_branch(sid, bp.turn_ids[k], exact=bp.exact[k])
            assert shown(store, sid) == alt["view"]["path"], alt["text"]
            check_points(store, sid, alt["view"]["points"], depth - 1)
            store.show_branch(sid, bp.turn_ids[bp.index - 1], exact=bp.exact[bp.index - 1])
            assert shown(store, sid) == before, f"back from {alt['text']}"


def check_store(store: Any) -> None:
    """Every chat of the record: listed, its path, its branch points, each alternative."""
    listed = {s.id for s in store.list_sessions(limit=1000)}
    assert listed == {c["session_id"] for c in RECORD["chats"]}
    for chat in RECORD["chats"]:
        sid = chat["session_id"]
        assert shown(store, sid) == chat["path"], chat["title"]
        check_points(store, sid, chat["points"], 1)


def words_in(blocks: str) -> list[str]:
    return WORD.findall(blocks)
