"""Generate a large v4 sessions.db for benchmarks (default: 10k sessions, 1M turns, ~1 GB).

Usage::

    python -m tests.benchmarks.gen_store OUT.db --sessions 10000 --turns 1000000
    python -m tests.benchmarks.gen_store OUT.db --size small     # 1k sessions, 100k turns

The schema comes from ``parley.core.store.schema.create_all`` (via ``Store.open``);
rows are written with raw ``sqlite3`` ``executemany`` in big transactions with
the search triggers dropped, and the full-text index is built at the end with
``schema.rebuild_search_index`` (which puts the triggers back). Each session is one
path (:func:`link_in_order`: no branches). The file is a normal v4 file afterwards
(WAL, user_version 4).

Content is realistic in shape: Zipf-distributed words from a 30k-word
vocabulary, user turns of 20–600 characters, assistant replies of 200–4000
characters with markdown and code, tool calls with their results, some
thinking and some non-Latin text. Session lengths are skewed; session 0 has
``--long`` turns (default 10,000) for the "open a long session" benchmark.

:func:`cached_store` returns a generated file from ``/tmp/parley-bench``,
making it on first use, so benchmarks reuse it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from parley.core.store import Store, schema
from parley.core.store.textindex import register_functions

GEN_VERSION = 7  # 7: the conversation tree's rows (turn_links, turn_path); 6: no prefix index
CACHE_DIR = Path(os.environ.get("PARLEY_BENCH_CACHE", "/tmp/parley-bench"))
SIZES = {"full": (10_000, 1_000_000), "small": (1_000, 100_000), "tiny": (100, 5_000)}
BATCH = 20_000
BASE_TIME_MS = 1_700_000_000_000

_REAL_TEXT = (
    "the of and to in is that for it as with was on be by this are or from at an not have "
    "which but all can has one more will also were their about would there what when so "
    "python function error file database query search window session model token cache "
    "memory thread async await return value string list dict class import module test "
    "server request response stream update delete insert select index table column row "
    "please could you explain how why where summary translate write code fix bug review"
)
_REAL = _REAL_TEXT.split()
_NON_LATIN = [
    "我喜欢吃苹果，也喜欢东京的寿司。",
    "東京都に住んでいます。ラーメンが好きです。",
    "كتب الطالب الدرس في المكتبة الكبيرة",
    "Новогодняя ёлка стоит в большом зале",
    "मुझे हिन्दी भाषा बहुत पसंद है",
    "서울에서 친구를 만나요",
]


class TextMaker:
    """Makes text of a given length from a Zipf-weighted vocabulary (fast: sentence pool)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        syll = [
            "ka",
            "lo",
            "mi",
            "ren",
            "tor",
            "va",
            "quen",
            "dus",
            "pel",
            "ax",
            "shi",
            "bor",
            "nim",
            "tra",
            "ves",
            "ol",
            "zu",
            "gen",
            "fa",
            "rip",
            "sel",
            "mon",
            "tek",
            "dra",
        ]
        words = list(_REAL)
        seen = set(words)
        while len(words) < 30_000:
            w = "".join(rng.choice(syll) for _ in range(rng.randint(2, 4)))
            if w not in seen:
                seen.add(w)
                words.append(w)
        self.words = words
        cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(words))))
        pool = []
        for _ in range(60_000):
            n = rng.randint(4, 22)
            ws = rng.choices(words, cum_weights=cum, k=n)
            pool.append(ws[0].capitalize() + " " + " ".join(ws[1:]) + rng.choice(".,.?!:"))
        self.pool = pool

    def text(self, chars: int) -> str:
        out: list[str] = []
        size = 0
        rng = self.rng
        while size < chars:
            s = rng.choice(self.pool)
            if rng.random() < 0.01:
                s = rng.choice(_NON_LATIN)
            out.append(s)
            size += len(s) + 1
        return " ".join(out)

    def reply(self, chars: int) -> str:
        rng = self.rng
        parts = [self.text(chars // 2)]
        if rng.random() < 0.35:
            code = "\n".join(
                f"    {self.rng.choice(self.words)} = {rng.randint(0, 999)}"
                for _ in range(rng.randint(2, 8))
            )
            parts.append(f"```python\ndef {rng.choice(self.words)}():\n{code}\n```")
        parts.append("- " + "\n- ".join(self.text(40) for _ in range(rng.randint(1, 3))))
        parts.append(self.text(chars // 3))
        return "\n\n".join(parts)


def _blocks(tm: TextMaker, role: str, prev_tool: str | None) -> tuple[str, str | None]:
    """Return (blocks JSON, tool_use id awaiting its result)."""
    rng = tm.rng
    if role == "user":
        if prev_tool is not None:
            out = tm.text(rng.randint(300, 2000))
            blocks = [
                {
                    "type": "tool_result",
                    "tool_use_id": prev_tool,
                    "content": [{"type": "text", "text": out}],
                    "is_error": False,
                }
            ]
        else:
            blocks = [{"type": "text", "text": tm.text(int(rng.lognormvariate(4.6, 0.9)) + 20)}]
        return json.dumps(blocks, ensure_ascii=False, separators=(",", ":")), None
    blocks = []
    if rng.random() < 0.05:
        blocks.append(
            {
                "type": "thinking",
                "thinking": tm.text(rng.randint(200, 1000)),
                "signature": "sig" + str(rng.getrandbits(64)),
            }
        )
    blocks.append({"type": "text", "text": tm.reply(int(rng.lognormvariate(5.0, 0.7)) + 100)})
    tool = None
    if rng.random() < 0.12:
        tool = f"toolu_{rng.getrandbits(64):016x}"
        blocks.append(
            {
                "type": "tool_use",
                "id": tool,
                "name": rng.choice(["shell", "read_file", "search"]),
                "input": {"command": tm.text(60)},
            }
        )
    return json.dumps(blocks, ensure_ascii=False, separators=(",", ":")), tool


def _session_lengths(rng: random.Random, sessions: int, turns: int, long: int) -> list[int]:
    long = min(long, turns // 2) if sessions > 1 else turns
    raw = [rng.paretovariate(1.3) for _ in range(sessions - 1)]
    rest = turns - long
    scale = rest / sum(raw) if raw else 0
    lengths = [long] + [max(1, int(r * scale)) for r in raw]
    lengths = [min(n, long) for n in lengths]
    diff = turns - sum(lengths)
    i = 1
    while diff != 0 and sessions > 1:  # spread the rounding error
        step = 1 if diff > 0 else -1
        j = 1 + (i % (sessions - 1))
        if lengths[j] + step >= 1 and lengths[j] + step <= long:
            lengths[j] += step
            diff -= step
        i += 1
    return lengths


def _turn_rows(
    tm: TextMaker, lengths: list[int], session_ids: list[str]
) -> Iterator[tuple[object, ...]]:
    rng = tm.rng
    n = 0
    for sid, count in zip(session_ids, lengths, strict=True):
        t = BASE_TIME_MS + rng.randint(0, 300 * 86_400_000)
        tool = None
        for seq in range(count):
            role = "user" if seq % 2 == 0 else "assistant"
            blocks, tool = _blocks(tm, role, tool)
            t += rng.randint(2_000, 120_000)
            usage = None
            model = None
            if role == "assistant":
                model = "anthropic:claude-sonnet-4-5"
                usage = json.dumps(
                    {"input_tokens": rng.randint(10, 5000), "output_tokens": rng.randint(10, 2000)}
                )
            n += 1
            yield (f"{n:032x}", sid, seq, role, blocks, 0, model, usage, t)


def generate(
    out: Path, sessions: int, turns: int, *, long: int = 10_000, seed: int = 1, quiet: bool = False
) -> Path:
    """Write a v4 file at ``out`` (replacing it). Returns ``out``."""
    t0 = time.monotonic()
    for suffix in ("", "-wal", "-shm"):
        Path(str(out) + suffix).unlink(missing_ok=True)
    Store.open(out).close()
    rng = random.Random(seed)
    tm = TextMaker(rng)
    con = sqlite3.connect(out, isolation_level=None)
    register_functions(con)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    con.execute("PRAGMA cache_size = -400000")
    con.execute("BEGIN")
    schema.drop_search_triggers(con)
    spaces = ["default"] + [f"space{i:02d}" for i in range(1, 10)]
    con.executemany(
        "INSERT INTO spaces (id, name, position, created_at) VALUES (?, ?, ?, ?)",
        [(s, f"Space {i}", i, BASE_TIME_MS) for i, s in enumerate(spaces) if i > 0],
    )
    lengths = _session_lengths(rng, sessions, turns, long)
    session_ids = [f"s{i:031x}" for i in range(sessions)]
    con.executemany(
        "INSERT INTO sessions (id, space_id, title, title_source, model, pinned, created_at, "
        "updated_at, input_tokens, output_tokens) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                sid,
                rng.choice(spaces),
                tm.text(30)[:60],
                "auto",
                "anthropic:claude-sonnet-4-5",
                int(rng.random() < 0.01),
                BASE_TIME_MS + i * 1000,
                BASE_TIME_MS + rng.randint(0, 300 * 86_400_000),
                rng.randint(0, 10**6),
                rng.randint(0, 10**5),
            )
            for i, sid in enumerate(session_ids)
        ],
    )
    rows = _turn_rows(tm, lengths, session_ids)
    done = 0
    while True:
        batch = [r for _, r in zip(range(BATCH), rows, strict=False)]
        if not batch:
            break
        con.executemany(
            "INSERT INTO turns (id, session_id, seq, role, blocks, aborted, model, usage, "
            "created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            batch,
        )
        done += len(batch)
        if not quiet:
            print(
                f"\r  turns {done:,}/{turns:,}  {time.monotonic() - t0:.0f}s",
                end="",
                file=sys.stderr,
            )
    t1 = time.monotonic()
    if not quiet:
        print(f"\n  rows written in {t1 - t0:.0f}s; building the search index…", file=sys.stderr)
    link_in_order(con)
    schema.rebuild_search_index(con)
    con.execute("COMMIT")
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    if not quiet:
        size = out.stat().st_size / 1e6
        print(
            f"  index built in {time.monotonic() - t1:.0f}s; {out} is {size:,.0f} MB, "
            f"total {time.monotonic() - t0:.0f}s",
            file=sys.stderr,
        )
    return out


_WINDOW = "WINDOW w AS (PARTITION BY session_id ORDER BY seq)"


def link_in_order(con: sqlite3.Connection, session_id: str | None = None) -> None:
    """Make each session's turns one path, in stored order (no branches), as
    ``parley.core.store.turns.add_to_path`` does for turns appended one by one:
    each turn's parent is the turn stored before it, positions 0, 1, … by ``seq``,
    stamps growing along the path. Only ``session_id``'s turns when given.

    Args:
        con: inside the caller's transaction, after the turns are inserted.
        session_id: one session; None: every turn of the file.
    """
    where, args = ("WHERE session_id = ? ", (session_id,)) if session_id else ("", ())
    con.execute(
        "INSERT INTO turn_links (turn_id, session_id, parent_id, shown_at) "
        f"SELECT id, session_id, lag(id) OVER w, row_number() OVER w FROM turns {where}{_WINDOW}",
        args,
    )
    con.execute(
        "INSERT INTO turn_path (session_id, pos, turn_id) "
        f"SELECT session_id, row_number() OVER w - 1, id FROM turns {where}{_WINDOW}",
        args,
    )


def cached_store(sessions: int, turns: int, *, long: int = 10_000) -> Path:
    """Return a generated store of this size from the cache folder, generating it once."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    path = CACHE_DIR / f"store-v{GEN_VERSION}-{sessions}-{turns}-{long}.db"
    if not path.exists():
        tmp = path.with_name(path.name + ".partial")
        generate(tmp, sessions, turns, long=long)
        for suffix in ("-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        tmp.rename(path)
    return path


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--size", choices=sorted(SIZES), help="preset (overrides the counts)")
    p.add_argument("--sessions", type=int, default=SIZES["full"][0])
    p.add_argument("--turns", type=int, default=SIZES["full"][1])
    p.add_argument("--long", type=int, default=10_000, help="turns of the longest session")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    sessions, turns = SIZES[a.size] if a.size else (a.sessions, a.turns)
    generate(a.out, sessions, turns, long=a.long, seed=a.seed)


if __name__ == "__main__":
    main()
