"""The fast paths of the v3 upgrade give what the plain v4 schema would have given.

The upgrade bulk-loads turns without the per-row triggers (search index,
attachment links), builds the index on a second thread from search text cut
out of the v3 JSON, and hands that text over as one JSON object per batch
keyed by ``"<n> <session id>"``. These tests pin that down: the file ends with
exactly the schema a new v4 file has, any session id survives the hand-over,
and the search text equals what ``parley_turn_text`` indexes.

SQLite only: the v3 upgrade works on files only.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from parley.core.content import ImageBlock, Turn
from parley.core.store import Store
from parley.core.store.textindex import index_turn_text
from parley.core.store.upgrade.convert import convert_turn_indexed, convert_turn_indexed_json
from parley.core.store.upgrade.v3 import upgrade_file
from tests.core.upgrades import convert_turn
from tests.v3gen import PNG_1PX, check_everything, generate, read_v3


def schema_of(path: Path) -> set[tuple[str, str, str | None]]:
    con = sqlite3.connect(path)
    try:
        return set(con.execute("SELECT type, name, sql FROM sqlite_master"))
    finally:
        con.close()


def test_upgraded_file_has_exactly_the_schema_of_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "v3").mkdir()
    gen = generate(tmp_path / "v3" / "sessions.db", seed=3, sessions=3, turns_per_session=10)
    upgrade_file(gen.path)
    with Store.open(tmp_path / "new.db"):
        pass
    assert schema_of(gen.path) == schema_of(tmp_path / "new.db")  # every trigger back
    with Store.open(gen.path) as store:  # the attachment trigger links new turns' files
        sid = next(iter(gen.expected.sessions))
        turn = store.append_turn(sid, Turn("user", [ImageBlock("image/png", data=PNG_1PX)]))
        stored = store.get_turns(sid)[-1]
        assert stored.id == turn.id and isinstance(stored.blocks[0], ImageBlock)
    con = sqlite3.connect(gen.path)
    assert con.execute("SELECT count(*) FROM turn_attachments").fetchone()[0] == 1
    con.close()


WEIRD_IDS = ["12 34", 'quote"and\\backslash', "ünï 東京 \U0001f99c", " leading space", "{}"]


def test_any_session_id_reaches_the_index_with_its_turns(tmp_path: Path) -> None:
    gen = generate(tmp_path / "sessions.db", seed=8, sessions=len(WEIRD_IDS),
                   turns_per_session=6)
    con = sqlite3.connect(gen.path)
    bulk = [r[0] for r in con.execute("SELECT id FROM sessions WHERE title LIKE 'Bulk %' "
                                      "ORDER BY title")]
    tags = {}
    for old, new in zip(bulk, WEIRD_IDS, strict=True):
        for sql in ("UPDATE sessions SET id = ? WHERE id = ?",
                    "UPDATE sessions SET parent_id = ? WHERE parent_id = ?",
                    "UPDATE turns SET session_id = ? WHERE session_id = ?"):
            con.execute(sql, (new, old))
        tags[new] = f"b{bulk.index(old)}t3"  # tests.v3gen tags turn 3 of bulk session s so
    con.commit()
    con.close()
    snap = read_v3(gen.path)
    upgrade_file(gen.path)
    with Store.open(gen.path) as store:
        check_everything(store, snap)
        for sid, tag in tags.items():
            hits = store.search(tag, session_id=sid)
            assert [h.session_id for h in hits if h.turn_id] == [sid], (sid, tag)
            assert store.search(tag + " ")  # found without the scope too


EDGE_CONTENTS = [
    '[{"type":"text","text":"plain ascii"}]',
    '[{"type":"text","text":""}]',
    '[{"type":"text","text":"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t end"}]',
    '[{"type":"text","text":"ünïcödé 東京 café ёлка"}]',
    '[{"type":"text","text":"esc\\u00e9 and \\ud83e\\udd9c"}]',
    '[{"type":"text","text":"lone \\ud83d surrogate"}]',
    '[{"type":"text","text":"ascii \\u0041 escape"}]',
    '[{"type":"text","text":"two"},{"type":"text","text":"blocks"}]',
    '[{"text":"key order","type":"text"}]',
    '[ {"type":"text","text":"spaced"} ]',
    '[{"type":"text","text":"raw\ncontrol char"}]',
    '[{"type":"text","text":"unterminated}]',
    '[{"type":"text","text":"x"}]trailing',
    '[{"type":"text","text":"a","extra":1}]',
    '[{"type":"tool-call","id":"c1","name":"grep","args":{"q":"needle","n":1.5}}]',
    '[{"type":"tool-result","callId":"c1","output":"found it","isError":true}]',
    '[{"type":"thinking","text":"hmm \\ud83d","signature":"s"}]',
    "not json at all",
    "",
]


@pytest.mark.parametrize("content", EDGE_CONTENTS)
@pytest.mark.parametrize("as_bytes", [False, True])
def test_search_text_json_is_the_indexed_text(content: str, as_bytes: bool) -> None:
    raw = content.encode("utf-8", "surrogatepass") if as_bytes else content
    role, blocks, recovered, text_json = convert_turn_indexed_json("user", raw)
    assert (role, blocks, recovered) == convert_turn("user", content)
    assert json.loads(text_json) == index_turn_text(blocks)
    assert convert_turn_indexed("user", raw)[3] == index_turn_text(blocks)
    con = sqlite3.connect(":memory:")  # SQLite reads the JSON the same way
    got = con.execute("SELECT value FROM json_each(?)", ("[" + text_json + "]",)).fetchone()
    con.close()
    assert got[0] == index_turn_text(blocks)


def test_search_text_json_over_a_generated_file(tmp_path: Path) -> None:
    gen = generate(tmp_path / "s.db", seed=9, sessions=15, turns_per_session=30)
    assert gen.expected is not None
    cut = 0
    for turns in gen.expected.turns.values():
        for t in turns:
            role, blocks, recovered, text_json = convert_turn_indexed_json(t.role, t.content)
            assert (role, blocks, recovered) == convert_turn(t.role, t.content)
            assert json.loads(text_json) == index_turn_text(blocks)
            cut += text_json[1:-1] in t.content  # taken from the content as it is
    assert cut > gen.expected.turn_count() // 2
