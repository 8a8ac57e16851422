"""Generate legacy v3 ``sessions.db`` files for tests and benchmarks.

The layout and every quirk are those of Parley v3's files (``parley.core.store.upgrade.v3``). A
file is
deterministic for a given seed (ids, texts, timestamps): the same call writes
the same rows, so a benchmark can cache a large file in /tmp.

Quirks produced when ``quirks=True`` (the default; see :data:`QUIRK_SESSIONS`
for the names under which tests find them in :attr:`GeneratedV3.named`):

* content still in the ``-wal`` file and not yet checkpointed (``journal_mode
  ="wal"``, ``wal_pending=True``): a plain copy of the main file alone lacks it;
  ``journal_mode="delete"`` writes a file of the first v3 builds instead;
* NULL and '' titles, emoji and right-to-left titles and text, NULL model;
* spaces 'Work' and 'work' (differ only in case), NULL and '' space;
* gaps in ``idx``; a session with no turns;
* a fork, a fork of that fork, a fork of a deleted session, a fork whose
  ``fork_idx`` names a parent turn deleted later;
* a tool-call without its tool-result (the app was closed mid-tool);
* invalid JSON content, valid JSON that is not a block list, a known block
  lacking its required field;
* unknown block types and unknown ``meta`` keys, a ``meta`` that is not JSON;
* a 1 MB turn;
* a v3 compact summary (alone in the first, ``user`` turn);
* images by ``data`` and by ``url``, documents with and without a name,
  tool-result ``output`` as a string and as a parts list, ``isError``,
  thinking with a signature, text ``origin`` (``messageId``);
* turns left behind by a deleted session (v3 ran without foreign keys);
* ``app_state``: ``lastSessionId`` and ``settings`` with unknown keys.

``sessions``/``turns_per_session`` add bulk sessions of realistic turns
(~1 KB each, mostly prose, some tool calls, thinking and images) for the 1 GB
benchmark.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.core.store.store import Store

V3_SCHEMA = """
CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,
  title       TEXT,
  space       TEXT,
  parent_id   TEXT,
  fork_idx    INTEGER,
  model       TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  meta        TEXT
);
CREATE TABLE turns (
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  idx         INTEGER NOT NULL,
  role        TEXT NOT NULL,
  content     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (session_id, idx)
);
CREATE INDEX turns_by_time ON turns(created_at);
CREATE TABLE app_state (
  key    TEXT PRIMARY KEY,
  value  TEXT
);
"""

#: Names of the quirk sessions in :attr:`GeneratedV3.named`.
QUIRK_SESSIONS = (
    "rich", "parent", "fork", "fork_of_fork", "orphan_fork", "gap_fork", "compacted",
    "damaged", "big", "untitled_null", "untitled_empty", "work_upper", "work_lower",
    "rtl", "empty", "bad_meta", "wal_only", "gap_parent",
)

T0 = 1_672_531_200_000  # 2023-01-01T00:00:00Z in ms
PNG_1PX = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PDF_TINY = base64.b64encode(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n").decode()
RTL_HE = "שלום עולם, זו שיחה בעברית"
RTL_AR = "مرحبا بالعالم، هذه محادثة"
EMOJI = "🦜 parrots 🎉 and 👩🏽‍💻 zwj"
BIG_MARKER = "zanzibarquokka"  # a word found only inside the 1 MB turn
WAL_MARKER = "walonlyplatypus"  # a word found only in rows still in the -wal file


@dataclass(frozen=True)
class V3Session:
    """One row of v3 ``sessions``, verbatim (``meta`` is the raw JSON text)."""

    id: str
    title: str | None
    space: str | None
    parent_id: str | None
    fork_idx: int | None
    model: str | None
    created_at: int
    updated_at: int
    meta: str | None


@dataclass(frozen=True)
class V3Turn:
    """One row of v3 ``turns``, verbatim (``content`` is the raw text)."""

    session_id: str
    idx: int
    role: str
    content: str
    created_at: int


@dataclass
class V3Snapshot:
    """Everything in a v3 file: sessions by id, turns per session in idx order, app_state."""

    sessions: dict[str, V3Session] = field(default_factory=dict)
    turns: dict[str, list[V3Turn]] = field(default_factory=dict)
    app_state: dict[str, str | None] = field(default_factory=dict)

    def turn_count(self) -> int:
        return sum(len(v) for v in self.turns.values())


@dataclass
class GeneratedV3:
    """What :func:`generate` wrote.

    Attributes:
        path: the v3 file.
        expected: its content (None when ``keep_expected=False``; use :func:`read_v3`).
        named: quirk name (see :data:`QUIRK_SESSIONS`) -> session id.
        deleted_parent_id: the id an orphan fork names (no such session).
        wal_only: (session id, idx) of turns that are only in the ``-wal`` file.
        wal_only_sessions: ids of sessions only in the ``-wal`` file.
        orphan_turn_session: id of the deleted session whose turns were left behind.
    """

    path: Path
    expected: V3Snapshot | None
    named: dict[str, str]
    deleted_parent_id: str
    wal_only: set[tuple[str, int]]
    wal_only_sessions: set[str]
    orphan_turn_session: str


def _readonly_uri(path: Path) -> str:
    """Read without creating side files: immutable when nothing is in -wal or a journal."""
    wal, journal = Path(f"{path}-wal"), Path(f"{path}-journal")
    quiet = not (wal.exists() and wal.stat().st_size > 0) and not journal.exists()
    return path.resolve().as_uri() + ("?mode=ro&immutable=1" if quiet else "?mode=ro")


def read_v3(path: Path) -> V3Snapshot:
    """Read a v3 file with plain sqlite3, read-only (no checkpoint: ``-wal`` stays as it is).

    Turns whose session row is missing are left out (the v3 app never showed them).
    """
    con = sqlite3.connect(_readonly_uri(Path(path)), uri=True)
    try:
        snap = V3Snapshot()
        for row in con.execute("SELECT id, title, space, parent_id, fork_idx, model, "
                               "created_at, updated_at, meta FROM sessions"):
            snap.sessions[row[0]] = V3Session(*row)
            snap.turns[row[0]] = []
        for row in con.execute("SELECT session_id, idx, role, content, created_at FROM turns "
                               "ORDER BY session_id, idx"):
            if row[0] in snap.turns:
                snap.turns[row[0]].append(V3Turn(*row))
        snap.app_state = dict(con.execute("SELECT key, value FROM app_state").fetchall())
        return snap
    finally:
        con.close()


# --- content ----------------------------------------------------------------


def _dumps(blocks: Any) -> str:
    return json.dumps(blocks, ensure_ascii=False, separators=(",", ":"))


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


class _Words:
    """Prose from a Zipf-like vocabulary: realistic for full-text indexing, fast to make."""

    def __init__(self, rng: random.Random) -> None:
        letters = "etaoinshrdlcumwfgypbvkjxqz"
        vocab = {"".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(30_000)}
        self.vocab = sorted(vocab)
        rng.shuffle(self.vocab)
        cum, total = [], 0.0
        for i in range(len(self.vocab)):
            total += 1.0 / (i + 1)
            cum.append(total)
        self.paragraphs = [
            " ".join(rng.choices(self.vocab, cum_weights=cum, k=rng.randint(12, 150))) + "."
            for _ in range(3000)
        ]
        code = ["def f(x):", "    return x + 1", "for i in range(10):", "print(i)",
                "import os", "class A:", "    pass", "if x is None:", "raise ValueError()"]
        self.code = ["\n".join(rng.choices(code, k=rng.randint(5, 60))) for _ in range(500)]

    def prose(self, rng: random.Random) -> str:
        return self.paragraphs[rng.randrange(len(self.paragraphs))]


def _rich_turns(rng: random.Random) -> list[tuple[str, list[Any]]]:
    """Turns holding every v3 block kind and field (role, blocks)."""
    call_a, call_b, call_c = (f"call_{rng.getrandbits(40):010x}" for _ in range(3))
    origin = {"kind": "signal", "source": "slack", "sender": "Dana", "messageId": "M123.456"}
    return [
        ("user", [_text("Look at these", origin={"kind": "user"}),
                  {"type": "image", "mediaType": "image/png", "data": PNG_1PX},
                  {"type": "image", "mediaType": "image/jpeg",
                   "url": "https://example.com/cat.jpg"},
                  {"type": "document", "mediaType": "application/pdf", "data": PDF_TINY,
                   "name": "report.pdf"},
                  {"type": "document", "mediaType": "application/pdf", "data": PDF_TINY}]),
        ("assistant", [{"type": "thinking", "text": "Let me check the files.",
                        "signature": "sig-" + "A" * 40},
                       {"type": "thinking", "text": "No signature here."},
                       _text("I'll list them."),
                       {"type": "tool-call", "id": call_a, "name": "ls",
                        "args": {"path": "/tmp", "all": True, "nested": {"n": None}}},
                       {"type": "tool-call", "id": call_b, "name": "screenshot", "args": {}}]),
        ("user", [{"type": "tool-result", "callId": call_a, "output": "a.txt\nb.txt"},
                  {"type": "tool-result", "callId": call_b, "output": [
                      {"type": "text", "text": "here it is"},
                      {"type": "image", "mediaType": "image/png", "data": PNG_1PX}]}]),
        ("assistant", [_text("One failed:"),
                       {"type": "tool-call", "id": call_c, "name": "rm", "args": {"p": "x"}}]),
        ("user", [{"type": "tool-result", "callId": call_c, "output": "permission denied",
                   "isError": True},
                  _text("relayed from slack", origin=origin),
                  _text("an event", origin={"kind": "event", "source": "timer"})]),
        ("assistant", [{"type": "x-poll", "question": "Lunch?", "options": ["a", "b"]},
                       {"type": "redacted_thinking", "data": "opaque=="},
                       _text(f"{EMOJI} — {RTL_HE} — {RTL_AR}")]),
        ("user", [_text("Run the slow tool")]),
        ("assistant", [_text("Running it."),
                       {"type": "tool-call", "id": "call_orphan", "name": "slow",
                        "args": {"seconds": 600}}]),  # no tool-result: app closed mid-tool
        ("user", []),  # an empty block list is valid JSON
    ]


def _meta(rng: random.Random, full: bool) -> str | None:
    if not full:
        return rng.choice([None, "{}", json.dumps({"titleSource": "auto"})])
    return json.dumps({
        "pinned": True, "archived": False, "titleSource": "user",
        "systemPrompt": "You are a terse assistant. ✂️",
        "usage": {"inputTokens": 1200, "outputTokens": 340, "cacheReadTokens": 9000,
                  "cacheWriteTokens": 1100, "costUsd": 0.0123},
        "color": "teal", "x-future": {"nested": [1, 2, {"k": None}]},
    }, ensure_ascii=False)


class _Writer:
    """Accumulates rows and the expected snapshot while writing them."""

    def __init__(self, con: sqlite3.Connection, rng: random.Random, keep: bool) -> None:
        self.con, self.rng, self.keep = con, rng, keep
        self.snap = V3Snapshot()
        self.clock = T0

    def new_id(self) -> str:
        return f"s_{self.rng.getrandbits(64):016x}"

    def tick(self, ms: int = 1000) -> int:
        self.clock += self.rng.randint(1, ms)
        return self.clock

    def session(self, sid: str | None = None, **kw: Any) -> str:
        sid = sid or self.new_id()
        created = self.tick(3_600_000)
        row = V3Session(sid, kw.get("title", f"Session {sid[-4:]}"), kw.get("space"),
                        kw.get("parent_id"), kw.get("fork_idx"),
                        kw.get("model", "anthropic:claude-sonnet-4-5"), created,
                        created + 60_000, kw.get("meta"))
        self.con.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)",
                         tuple(row.__dict__.values()))
        if self.keep:
            self.snap.sessions[sid] = row
            self.snap.turns[sid] = []
        return sid

    def turns(self, sid: str, items: list[tuple[int, str, str]]) -> None:
        """Insert (idx, role, raw content) rows."""
        rows = [V3Turn(sid, idx, role, content, self.tick()) for idx, role, content in items]
        self.con.executemany("INSERT INTO turns VALUES (?,?,?,?,?)",
                             [tuple(r.__dict__.values()) for r in rows])
        if self.keep and sid in self.snap.turns:
            self.snap.turns[sid] = sorted(self.snap.turns[sid] + rows, key=lambda t: t.idx)

    def app_state(self, key: str, value: Any) -> None:
        raw = json.dumps(value, ensure_ascii=False)
        self.con.execute("INSERT OR REPLACE INTO app_state VALUES (?,?)", (key, raw))
        if self.keep:
            self.snap.app_state[key] = raw


def _chat(words: _Words, rng: random.Random, n: int, start: int = 0,
          step: int = 1) -> list[tuple[int, str, str]]:
    return [(start + i * step, "user" if i % 2 == 0 else "assistant",
             _dumps([_text(words.prose(rng))])) for i in range(n)]


def _write_quirks(w: _Writer, words: _Words) -> tuple[dict[str, str], str, str]:
    rng, named = w.rng, {}
    named["rich"] = w.session(title="Every block kind", space="Work", meta=_meta(rng, True))
    w.turns(named["rich"], [(i, role, _dumps(b)) for i, (role, b) in enumerate(_rich_turns(rng))])

    named["parent"] = w.session(title="Parent", space="Personal")
    parent_turns = _chat(words, rng, 8)
    w.turns(named["parent"], parent_turns)
    named["fork"] = w.session(title="Parent (fork)", space="Personal",
                              parent_id=named["parent"], fork_idx=3)
    w.turns(named["fork"], parent_turns[:4] + _chat(words, rng, 3, start=4))
    named["fork_of_fork"] = w.session(title=None, space="Personal",
                                      parent_id=named["fork"], fork_idx=5)
    w.turns(named["fork_of_fork"], parent_turns[:4] + _chat(words, rng, 4, start=4))
    deleted = w.new_id()
    named["orphan_fork"] = w.session(title="Fork of a deleted one", parent_id=deleted, fork_idx=2)
    w.turns(named["orphan_fork"], _chat(words, rng, 5))
    # the parent's turns at idx 3 and 4 were deleted after the fork at idx 3
    gap_parent = w.session(title="Gappy parent", space="work")
    w.turns(gap_parent, [t for t in _chat(words, rng, 7) if t[0] not in (3, 4)])
    named["gap_parent"] = gap_parent
    named["gap_fork"] = w.session(title="Fork at a deleted turn", space="work",
                                  parent_id=gap_parent, fork_idx=3)
    w.turns(named["gap_fork"], _chat(words, rng, 6))

    named["compacted"] = w.session(title="Compacted in v3", space="Work")
    w.turns(named["compacted"], [(0, "user", _dumps([{
        "type": "compact-summary", "text": "Earlier we planned the trip to Lisbon.",
        "replacedTurns": 14}]))] + _chat(words, rng, 4, start=14))

    named["damaged"] = w.session(title="Damaged", meta=json.dumps({"archived": True}))
    w.turns(named["damaged"], [
        (0, "user", _dumps([_text("fine before")])),
        (1, "assistant", '[{"type":"text","text":"cut off in the mid'),
        (2, "user", "plain words, not json at all"),
        (3, "assistant", ""),
        (4, "user", '{"type":"text","text":"an object, not a list"}'),
        (5, "assistant", '[{"type":"text"}]'),
        (6, "user", '["a bare string"]'),
        (7, "assistant", _dumps([_text("fine after")])),
    ])
    named["big"] = w.session(title="A 1 MB turn", space="🦜 Birds")
    big = " ".join(words.prose(rng) for _ in range(1500))[:1_000_000 - 100]
    mid = len(big) // 2
    big = big[:mid] + f" {BIG_MARKER} " + big[mid:]
    w.turns(named["big"], [(0, "user", _dumps([_text(big)])),
                           (1, "assistant", _dumps([_text("That is long.")]))])
    named["untitled_null"] = w.session(title=None, space="", model=None)
    w.turns(named["untitled_null"], _chat(words, rng, 2))
    named["untitled_empty"] = w.session(title="", space=None)
    w.turns(named["untitled_empty"], _chat(words, rng, 2, step=3))
    named["work_upper"] = w.session(title="Upper", space="Work", meta=_meta(rng, False))
    w.turns(named["work_upper"], _chat(words, rng, 2))
    named["work_lower"] = w.session(title="lower", space="work")
    w.turns(named["work_lower"], _chat(words, rng, 2))
    named["rtl"] = w.session(title=RTL_AR, space="עבודה",
                             meta=json.dumps({"systemPrompt": RTL_HE}, ensure_ascii=False))
    w.turns(named["rtl"], [(0, "user", _dumps([_text(RTL_HE)])),
                           (1, "assistant", _dumps([_text(RTL_AR + " " + EMOJI)]))])
    named["empty"] = w.session(title="No turns yet", space="Work")
    named["bad_meta"] = w.session(title="Meta is not JSON", meta="{not json")
    w.turns(named["bad_meta"], _chat(words, rng, 1))
    # a deleted session's turns, left behind (v3 ran without foreign keys)
    gone = w.new_id()
    w.keep, keep = False, w.keep
    w.turns(gone, _chat(words, rng, 2))
    w.keep = keep
    return named, deleted, gone


def _bulk_turn(words: _Words, rng: random.Random, i: int, tag: str) -> tuple[str, str]:
    """One realistic turn (~1 KB on average) as (role, content)."""
    role = "user" if i % 2 == 0 else "assistant"
    blocks: list[Any] = [_text(f"{tag} {words.prose(rng)}")]
    r = rng.random()
    if role == "assistant" and r < 0.12:
        blocks.append({"type": "tool-call", "id": f"call_{tag}_{i}", "name": "read_file",
                       "args": {"path": f"/src/{rng.randrange(999)}.py"}})
    elif role == "assistant" and r < 0.22:
        blocks.insert(0, {"type": "thinking", "text": words.prose(rng), "signature": "sig" * 20})
    elif role == "user" and r < 0.10 and i > 0:
        out = words.code[rng.randrange(len(words.code))]
        blocks.insert(0, {"type": "tool-result", "callId": f"call_{tag}_{i - 1}", "output": out})
    elif role == "user" and r < 0.107:
        data = base64.b64encode(rng.randbytes(rng.randint(10_000, 60_000))).decode()
        blocks.append({"type": "image", "mediaType": "image/png", "data": data})
    return role, _dumps(blocks)


def _write_bulk(w: _Writer, words: _Words, sessions: int, per_session: int) -> None:
    spaces = [None, "", "Work", "work", "Home", "Research", "Side projects", "Écriture"]
    recent: list[tuple[str, int]] = []
    for s in range(sessions):
        parent, fork_idx = (None, None)
        if recent and w.rng.random() < 0.08:
            parent, n = recent[w.rng.randrange(len(recent))]
            fork_idx = w.rng.randrange(n) if n else None
        sid = w.session(title=f"Bulk {s}", space=spaces[s % len(spaces)], parent_id=parent,
                        fork_idx=fork_idx, meta=_meta(w.rng, s % 50 == 0))
        rows = []
        for i in range(per_session):
            role, content = _bulk_turn(words, w.rng, i, f"b{s}t{i}")
            rows.append((i, role, content))
        w.turns(sid, rows)
        recent = (recent + [(sid, per_session)])[-50:]
        if s % 200 == 199:
            w.con.commit()


def _write_wal_only(w: _Writer, words: _Words, named: dict[str, str]) -> tuple[set, set]:
    """Rows committed after the last checkpoint: they live only in the -wal file."""
    sid = w.session(title=f"Written last {WAL_MARKER}", space="Work")
    named["wal_only"] = sid
    w.turns(sid, [(0, "user", _dumps([_text(f"{WAL_MARKER} is only in the wal")])),
                  (1, "assistant", _dumps([_text("noted")]))])
    n = len(w.snap.turns.get(named["parent"], [])) if w.keep else 8
    w.turns(named["parent"], [(n + 5, "user", _dumps([_text(f"late {WAL_MARKER} reply")]))])
    w.app_state("lastSessionId", sid)
    return {(sid, 0), (sid, 1), (named["parent"], n + 5)}, {sid}


def generate(path: Path, *, seed: int = 0, journal_mode: str = "wal", wal_pending: bool = True,
             quirks: bool = True, sessions: int = 0, turns_per_session: int = 0,
             user_version: int = 3, keep_expected: bool = True) -> GeneratedV3:
    """Write a v3 ``sessions.db`` at ``path`` (replacing it and its -wal/-shm).

    Args:
        path: where to write.
        seed: every id, text and timestamp follows from it.
        journal_mode: "wal" (most v3 files) or "delete" (the first v3 builds).
        wal_pending: with "wal", leave the last rows only in ``-wal`` (not checkpointed).
        quirks: write the quirk sessions listed in the module docstring.
        sessions: bulk sessions to add (benchmarks), each with ``turns_per_session`` turns.
        user_version: 3, or 0 for files whose header was never stamped.
        keep_expected: keep the expected content in memory (turn off for 1 GB files).

    Returns:
        What was written; ``expected`` matches :func:`read_v3` of the file.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".gen")
    for p in (path, tmp):
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{p}{suffix}").unlink(missing_ok=True)
    rng = random.Random(seed)
    con = sqlite3.connect(tmp)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.executescript(V3_SCHEMA)
    con.execute(f"PRAGMA user_version={int(user_version)}")
    w = _Writer(con, rng, keep_expected)
    words = _Words(random.Random(seed + 1))
    named: dict[str, str] = {}
    deleted, gone = "", ""
    if quirks:
        named, deleted, gone = _write_quirks(w, words)
        w.app_state("settings", {
            "defaultModel": "anthropic:claude-sonnet-4-5",
            "autoCompact": {"threshold": 0.8, "keepTurns": 4,
                            "model": "anthropic:claude-haiku-4-5", "minTokens": 2000},
            "compactBeforeCacheExpiry": False, "autoTitle": True,
            "theme": "dark", "x-experimental": {"flag": [1, "two"]},
        })
        w.app_state("lastSessionId", named["rich"])
        w.app_state("windowGeometry", {"w": 1200, "h": 800})
    _write_bulk(w, words, sessions, turns_per_session)
    con.commit()
    wal_only: set[tuple[str, int]] = set()
    wal_sessions: set[str] = set()
    with_wal = journal_mode.lower() == "wal"
    if with_wal:
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA wal_autocheckpoint=0")
    else:
        con.execute("PRAGMA journal_mode=DELETE")
    if quirks:
        wal_only, wal_sessions = _write_wal_only(w, words, named)
        con.commit()
    if with_wal and wal_pending and quirks:
        # copy while this connection is open: its close would checkpoint the -wal
        shutil.copyfile(tmp, path)
        shutil.copyfile(f"{tmp}-wal", f"{path}-wal")
        con.close()
    else:
        if with_wal:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        os.replace(tmp, path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    if not (with_wal and wal_pending):
        wal_only, wal_sessions = set(), set()
    return GeneratedV3(path, w.snap if keep_expected else None, named, deleted, wal_only,
                       wal_sessions, gone)


def iter_turns(path: Path, batch: int = 10_000) -> Iterator[list[V3Turn]]:
    """Yield a (large) v3 file's turns in batches, ordered by (session_id, idx)."""
    con = sqlite3.connect(_readonly_uri(Path(path)), uri=True)
    try:
        cur = con.execute("SELECT session_id, idx, role, content, created_at FROM turns "
                          "ORDER BY session_id, idx")
        while rows := cur.fetchmany(batch):
            yield [V3Turn(*r) for r in rows]
    finally:
        con.close()


# --- what v4 must show for v3 content (independent of parley.core.store.upgrade.convert)
# -----------


def expected_blocks(role: str, content: str) -> tuple[str, list[Any], bool]:
    """What the v4 API must return for one v3 turn: ``(role, blocks, recovered)``.

    Written from the v3 format's rules, separately from the
    migration's own converter, so a test comparing the two can fail.
    """
    from parley.core.content import TextBlock

    def recovered() -> tuple[str, list[Any], bool]:
        role4 = role if role in ("user", "assistant") else "user"
        return role4, [TextBlock(content, recovered=True)], True

    if role not in ("user", "assistant"):
        return recovered()
    try:
        data = json.loads(content)
        if not isinstance(data, list):
            return recovered()
        return role, [_expected_block(b) for b in data], False
    except (ValueError, KeyError, TypeError, AttributeError, AssertionError):
        return recovered()


def _expected_block(b: dict[str, Any]) -> Any:
    from parley.core.content import (
        CompactSummaryBlock,
        DocumentBlock,
        ImageBlock,
        TextBlock,
        TextOrigin,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        UnknownBlock,
    )

    kind = b.get("type")
    if kind == "text":
        assert isinstance(b["text"], str)
        o = b.get("origin")
        origin = (TextOrigin(o.get("kind") or "user", o.get("source"), o.get("sender"),
                             o.get("messageId")) if o is not None else None)
        return TextBlock(b["text"], origin)
    if kind == "image":
        return ImageBlock(b["mediaType"], b.get("data"), b.get("url"))
    if kind == "document":
        return DocumentBlock(b["mediaType"], b["data"], b.get("name"))
    if kind == "tool-call":
        return ToolUseBlock(b["id"], b["name"], b.get("args") or {})
    if kind == "tool-result":
        out = b.get("output")
        if isinstance(out, str):
            parts: tuple[Any, ...] = (TextBlock(out),)
        else:
            parts = tuple(TextBlock(p["text"]) if p["type"] == "text"
                          else ImageBlock(p["mediaType"], p.get("data"), p.get("url"))
                          for p in out or [])
        return ToolResultBlock(b["callId"], parts, b.get("isError") is True)
    if kind == "thinking":
        return ThinkingBlock(b["text"], b.get("signature"))
    if kind == "compact-summary":
        return CompactSummaryBlock(b["text"], b.get("replacedTurns", 0), legacy=True)
    return UnknownBlock(b)


def expected_settings(app_state: dict[str, str | None]) -> tuple[dict[str, Any], dict[str, Any]]:
    """v4 ``(settings, app_state)`` expected from v3 ``app_state`` rows.

    Known keys get the names parley.core.settings declares (and the GUI's last-session
    key); unknown ones keep their v3 name.
    """
    names = {"defaultModel": "default_model", "autoTitle": "chat.auto_title",
             "compactBeforeCacheExpiry": "experimental.compact_before_cache_expiry"}
    compaction = {"threshold": "compaction.threshold", "keepTurns": "compaction.keep_turns",
                  "model": "compaction.model"}
    settings: dict[str, Any] = {}
    state: dict[str, Any] = {}
    for key, raw in app_state.items():
        value = None if raw is None else json.loads(raw)
        if key == "settings":
            for k, v in value.items():
                if k == "autoCompact":
                    settings.update({compaction.get(s, f"autoCompact.{s}"): x
                                     for s, x in v.items()})
                else:
                    settings[names.get(k, k)] = v
        else:
            state["session.last" if key == "lastSessionId" else key] = value
    return settings, state


# --- comparing a migrated file with its v3 content (through the v4 Store API) ----------


def expected_session(snap: V3Snapshot, sid: str) -> dict[str, Any]:
    """The v4 session fields a v3 session must come out as (spec point 2, 4)."""
    from parley.core.content import Usage

    s = snap.sessions[sid]
    try:
        meta = json.loads(s.meta) if s.meta is not None else {}
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        meta = {"v3_meta": s.meta}
    title = s.title or None
    usage = meta.pop("usage", {})
    out = {
        "title": title,
        "title_source": meta.pop("titleSource", None) if title else None,
        "pinned": meta.pop("pinned", False),
        "archived": meta.pop("archived", False),
        "system_prompt": meta.pop("systemPrompt", None),
        "usage": Usage(usage.get("inputTokens", 0), usage.get("outputTokens", 0),
                       usage.get("cacheReadTokens", 0), usage.get("cacheWriteTokens", 0),
                       usage.get("costUsd", 0.0)),
        "parent_session_id": s.parent_id,
        "model": s.model,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "turn_count": len(snap.turns[sid]),
    }
    parent_idx = {t.idx for t in snap.turns.get(s.parent_id or "", [])}
    if s.fork_idx is not None and s.fork_idx not in parent_idx:
        meta["v3_fork_idx"] = s.fork_idx
    out["meta"] = meta
    return out


def check_everything(store: Store, snap: V3Snapshot) -> None:
    """Every session, its space, fork link, meta, and every turn and block (point 2)."""
    from parley.core.store.schema import DEFAULT_SPACE_ID

    spaces = {s.id: s for s in store.list_spaces()}
    assert {s.name for s in spaces.values() if not s.is_default} == {
        s.space for s in snap.sessions.values() if s.space
    }
    for sid, v3s in snap.sessions.items():
        got = store.get_session(sid)
        want = expected_session(snap, sid)
        assert {k: getattr(got, k) for k in want} == want, sid
        space = spaces[got.space_id]
        if v3s.space:
            assert (space.name, space.is_default) == (v3s.space, False)
        else:
            assert got.space_id == DEFAULT_SPACE_ID
        turns = store.get_turns(sid)
        assert len(turns) == len(snap.turns[sid])
        for v4, v3 in zip(turns, snap.turns[sid], strict=True):
            role, blocks, _ = expected_blocks(v3.role, v3.content)
            assert (v4.role, v4.blocks, v4.created_at) == (role, blocks, v3.created_at), (sid,
                                                                                         v3.idx)
            assert (v4.aborted, v4.model, v4.usage) == (False, None, None)
        if v3s.parent_id is not None:
            check_fork_link(store, snap, sid)
    settings, state = expected_settings(snap.app_state)
    assert store.all_settings() == settings
    for key, value in state.items():
        assert store.get_state(key) == value


def check_fork_link(store: Store, snap: V3Snapshot, sid: str) -> None:
    """forked_from_turn_id = the parent's turn at fork_idx (or the last one before it)."""
    v3s = snap.sessions[sid]
    got = store.get_session(sid)
    assert got.parent_session_id == v3s.parent_id
    if v3s.parent_id not in snap.sessions:
        assert got.parent_exists is False and got.forked_from_turn_id is None
        return
    assert got.parent_exists is True
    parent_v3 = snap.turns[v3s.parent_id]
    parent_v4 = store.get_turns(v3s.parent_id)
    at = [i for i, t in enumerate(parent_v3) if t.idx <= v3s.fork_idx]
    assert got.forked_from_turn_id == (parent_v4[at[-1]].id if at else None)
