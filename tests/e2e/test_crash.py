"""Kill Parley's run loop at random moments; nothing it committed may be lost or damaged.

A fork server (``tests/e2e/crash_worker.py serve``) imports the core once; each
round forks a worker that opens sessions.db, points a hub at the fake provider
and sends messages in a loop while replies stream with token delays. The test
SIGKILLs the worker at a seeded random moment — on a timer, right after a user
turn is saved, right after a journal write, at the end of a stream (while
``finish_turn`` commits) or while a manual compaction works (its summary
request streams, then it saves) — then opens the file fresh, as the next start
of Parley would, and checks (see :data:`CHECKS`):

* every turn the worker reported committed is present and byte-identical
  (sha256 of the stored blocks JSON), and every turn seen after an earlier
  kill is still exactly as it was;
* at most one turn is unreported (committed, then killed before it printed),
  and it is at the end of the session;
* a cut-off reply is an assistant turn with ``aborted`` set holding a prefix
  of the reply, at least as long as the last journal write reported;
* a completed reply is whole, and the session's usage equals the sum of its
  completed replies' and compactions' usage (``finish_turn`` is one
  transaction; see ``COMPACTION_USAGE_IS_ATOMIC`` for the one known gap);
* every compaction row has its summary turn after the range it stands for,
  and no summary turn exists without its row;
* ``PRAGMA integrity_check`` is ``ok``, no foreign key is broken, and the
  full-text index passes its own integrity check;
* the next request built from the history (``to_messages`` → ``to_anthropic``
  / ``to_openai``) passes the fake provider's pairing validation — and the
  next round really sends it;
* ``parley.core.recovery.previous_run.mark_running`` reports the killed run and its interrupted
  reply.

Seeded: ``PARLEY_CRASH_SEED`` (default below), ``PARLEY_CRASH_KILLS`` and
``PARLEY_CRASH_ACTIONS`` change the run; ``PARLEY_CRASH_DEBUG=1`` prints every
round. Extension points: :data:`CHECKS` here and ``ACTIONS`` in the worker —
a new kind of write gets an action there and an invariant here.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from parley.core.content import Turn
from parley.core.convert import to_anthropic, to_openai
from parley.core.providers.capabilities import ANTHROPIC, OPENAI
from parley.core.recovery import previous_run
from parley.core.store import AsyncStore, Store
from parley.core.store.textindex import register_functions
from parley.core.store.turns import CUT_OFF
from parley.core.wire import to_messages
from tests.fakes.validation import validate_anthropic, validate_openai

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker fork server needs fork()"),
]

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("PARLEY_CRASH_SEED", "20261129"))
KILLS = int(os.environ.get("PARLEY_CRASH_KILLS", "50"))
MESSAGES_PER_ROUND = 6
WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog", "while", "seven",
         "owls", "watch", "quietly")
MODES = ("timer", "timer", "after-user-saved", "after-journal", "end-of-stream", "in-compaction")
#: Weights of the worker's actions (tests/e2e/crash_worker.py ACTIONS).
ACTIONS = os.environ.get("PARLEY_CRASH_ACTIONS", "send=4,resume=1,compact=1")


class ForkServer:
    """``python -m tests.e2e.crash_worker serve``, its stdout lines in a queue."""

    def __init__(self, log: Path, warm_url: str) -> None:
        self._err = open(log, "wb")  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.crash_worker", "serve", "--warm-url", warm_url],
            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.log = log
        threading.Thread(target=self._read, daemon=True).start()
        first = self.next_line(120)
        assert first and first.startswith("serving"), self.diagnose(first)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put((time.monotonic(), raw.decode("utf-8", "replace").rstrip("\n")))
        self.lines.put((time.monotonic(), "<eof>"))

    def next_line(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=max(0.0, timeout))[1]
        except queue.Empty:
            return None

    def fork(self, argv: list[str]) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(argv) + "\n").encode())
        self.proc.stdin.flush()
        line = self.next_line(30)
        assert line and line.startswith("forked "), self.diagnose(line)
        return int(line.split()[1])

    def diagnose(self, line: str | None) -> str:
        tail = self.log.read_bytes()[-3000:].decode("utf-8", "replace") if self.log.exists() else ""
        return f"unexpected line {line!r}; worker stderr:\n{tail}"

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._err.close()


@dataclass
class Facts:
    """What the workers reported, over all rounds."""

    saved: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (role, sha)
    journal: dict[str, tuple[int, str]] = field(default_factory=dict)  # id -> (chars, sha)
    recv: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # id -> [(chars, t)]
    failed: list[str] = field(default_factory=list)
    known: dict[str, tuple[str, int, str, int, str]] = field(default_factory=dict)
    replies: set[str] = field(default_factory=set)  # every scripted reply text
    uncounted: dict[str, int] = field(default_factory=dict)  # see COMPACTION_USAGE_IS_ATOMIC
    usage_gaps: int = 0

    def take(self, line: str) -> None:
        kind, _, rest = line.partition(" ")
        parts = rest.split(" ")
        if kind == "saved":
            self.saved[parts[0]] = (parts[1], parts[2])
        elif kind == "journal":
            self.journal[parts[0]] = (int(parts[1]), parts[2])
        elif kind == "recv":
            self.recv.setdefault(parts[0], []).append((int(parts[1]), float(parts[2])))
        elif kind in ("failed", "crashed"):
            self.failed.append(line)


@dataclass
class Round:
    number: int
    session_id: str
    mode: str
    journal_ms: float
    kind: str
    killed_at: float | None = None
    outcome: str = ""
    loss_ms: float = 0.0
    compact_cut: bool = False  # killed while a compaction worked


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def script_round(fake: Any, rng: random.Random, facts: Facts, number: int) -> None:
    """Queue this round's replies: varied length, chunk size and token delay."""
    fake.reset()
    delay = rng.choice([0.5, 2.0, 4.0, 8.0])
    for k in range(MESSAGES_PER_ROUND + 2):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 150)))
        # In tags, so that a reply a compaction gets reads as a summary (the others keep them).
        text = f"<summary>Reply r{number}n{k}: {words}.</summary>"
        facts.replies.add(text)
        fake.script(text, token_delay_ms=delay, chunk_size=rng.randint(3, 12))


def run_round(server: ForkServer, rnd: Round, argv: list[str], rng: random.Random,
              facts: Facts) -> None:
    """Fork a worker, kill it when the round's trigger fires, collect its lines."""
    pid = server.fork(argv)
    line = server.next_line(60)
    while line is not None and line.startswith(("action", "serving")):
        line = server.next_line(60)
    assert line and line.startswith("ready "), server.diagnose(line)
    deadline = time.monotonic() + rng.uniform(0.0, 0.9)
    journals_wanted = rng.randint(1, 4)
    journals = 0
    pause = rng.uniform(0.0, 0.03)
    if rnd.mode == "in-compaction":
        pause = rng.uniform(0.0, 0.15)
    killed = False
    compacting = False
    while not killed:
        timeout = deadline - time.monotonic() if rnd.mode == "timer" else 30.0
        line = server.next_line(timeout)
        if line is None:
            if rnd.mode != "timer":
                raise AssertionError(f"worker went quiet; {server.diagnose(None)}")
            killed = kill(pid, rnd)
            break
        facts.take(line)
        if line.startswith(("done", "exit", "crashed", "<eof>")):
            break  # finished (or broke) before the trigger fired
        compacting = still_compacting(compacting, line)
        fire = (
            (rnd.mode == "after-user-saved" and line.startswith("saved ") and " user " in line)
            or (rnd.mode == "after-journal" and line.startswith("journal ")
                and (journals := journals + 1) >= journals_wanted)
            or (rnd.mode == "end-of-stream" and line.startswith("recv ") and _complete(line, facts))
            or (rnd.mode == "in-compaction" and line == "action compact")
        )
        if fire:
            time.sleep(pause)
            killed = kill(pid, rnd)
    while not (line or "").startswith(("exit ", "<eof>")):
        line = server.next_line(30)
        assert line is not None, server.diagnose(None)
        facts.take(line)  # printed before the kill landed: still facts
        compacting = still_compacting(compacting, line)
    rnd.compact_cut = killed and compacting
    assert line.startswith(f"exit {pid} "), server.diagnose(line)
    status = int(line.split()[2])
    assert status in ((-signal.SIGKILL,) if killed else (0, -signal.SIGKILL)), server.diagnose(line)
    if not killed:
        rnd.outcome = "finished"


def still_compacting(compacting: bool, line: str) -> bool:
    """Whether a compaction is still working after the worker printed ``line``."""
    if line.startswith("action "):
        return line == "action compact"
    if line.startswith("not-compacted") or (compacting and line.startswith("saved ")):
        return False
    return compacting


def _complete(line: str, facts: Facts) -> bool:
    _, _, chars, _ = line.split(" ")
    return int(chars) in {len(r) for r in facts.replies}


def kill(pid: int, rnd: Round) -> bool:
    rnd.killed_at = time.monotonic()
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:  # it finished just now
        return False
    return True


# --- checks after a kill -----------------------------------------------------------


@dataclass
class Row:
    id: str
    session_id: str
    seq: int
    role: str
    aborted: int
    blocks: str
    usage: str | None

    @property
    def sha(self) -> str:
        return sha(self.blocks)

    def text(self) -> str:
        return _text(self.blocks)


def _text(blocks_json: str) -> str:
    return "".join(b.get("text", "") for b in json.loads(blocks_json) if b.get("type") == "text")


def read_rows(path: Path) -> tuple[list[Row], sqlite3.Connection]:
    con = sqlite3.connect(path)
    register_functions(con)
    rows = [
        Row(*r)
        for r in con.execute(
            "SELECT id, session_id, seq, role, aborted, blocks, usage FROM turns "
            "ORDER BY session_id, seq"
        )
    ]
    return rows, con


def check_file(con: sqlite3.Connection, **_: Any) -> None:
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.execute("INSERT INTO search_fts(search_fts) VALUES ('integrity-check')")


def check_turns(rows: list[Row], facts: Facts, rnd: Round, **_: Any) -> None:
    by_id = {r.id: r for r in rows}
    for tid, (session_id, seq, role, aborted, digest) in facts.known.items():
        r = by_id.get(tid)
        assert r is not None, f"turn {tid} seen after an earlier kill is gone"
        assert (r.session_id, r.seq, r.role, r.aborted, r.sha) == (
            session_id, seq, role, aborted, digest
        ), f"turn {tid} changed after an earlier kill"
    for tid, (role, digest) in facts.saved.items():
        r = by_id.get(tid)
        assert r is not None, f"committed turn {tid} lost"
        assert (r.role, r.sha, r.aborted) == (role, digest, 0), f"committed turn {tid} differs"
    for r in rows:
        if r.role == "assistant" and r.aborted:
            text = r.text()
            assert text and any(rep.startswith(text) for rep in facts.replies), r
            reported = facts.journal.get(r.id, (0, ""))[0]
            assert len(text) >= reported, f"journalled {reported} chars, {len(text)} kept"
        elif r.role == "assistant":
            assert r.text() in facts.replies, f"completed reply {r.id} is not whole"
    new = [r for r in rows if r.id not in facts.known]
    unreported = [r for r in new if r.id not in facts.saved and r.id not in facts.journal]
    assert len(unreported) <= 1, unreported
    for r in unreported:
        tail = max(x.seq for x in rows if x.session_id == r.session_id)
        assert r.session_id == rnd.session_id and r.seq == tail, r


#: A compaction and its usage are saved in one transaction (Store.record_compaction with
#: count_usage=True), so a kill never leaves the compaction's usage uncounted.
COMPACTION_USAGE_IS_ATOMIC = True


def check_usage(con: sqlite3.Connection, rows: list[Row], sessions: dict[str, Any],
                facts: Facts, rnd: Round, **_: Any) -> None:
    """A session's usage is its completed replies' plus its compactions' (each counted once)."""
    for sid, session in sessions.items():
        done = [r for r in rows if r.session_id == sid and r.role == "assistant" and not r.aborted]
        replies = sum(json.loads(r.usage)["output_tokens"] for r in done if r.usage)
        compactions = {
            summary: json.loads(usage).get("output_tokens", 0) if usage else 0
            for summary, usage in con.execute(
                "SELECT summary_turn_id, usage FROM compactions WHERE session_id = ?", (sid,))
        }
        expected = replies + sum(compactions.values()) - facts.uncounted.get(sid, 0)
        gap = expected - session.usage.output_tokens
        new = [tokens for summary, tokens in compactions.items() if summary not in facts.known]
        if gap and not COMPACTION_USAGE_IS_ATOMIC and sid == rnd.session_id \
                and rnd.compact_cut and gap in new:
            facts.uncounted[sid] = facts.uncounted.get(sid, 0) + gap
            facts.usage_gaps += 1
            continue
        assert gap == 0, (
            f"session usage {session.usage.output_tokens} output tokens; replies {replies} + "
            f"compactions {sum(compactions.values())} - known gaps {facts.uncounted.get(sid, 0)}"
        )


def check_compactions(con: sqlite3.Connection, rows: list[Row], **_: Any) -> None:
    """Every compaction row has its summary turn after the range it stands for."""
    seq = {r.id: (r.session_id, r.seq) for r in rows}
    by_id = {r.id: r for r in rows}
    found = con.execute(
        "SELECT id, session_id, summary_turn_id, first_turn_id, last_turn_id FROM compactions"
    ).fetchall()
    for cid, sid, summary_id, first, last in found:
        summary = by_id.get(summary_id)
        assert summary is not None and summary.session_id == sid and not summary.aborted
        block = json.loads(summary.blocks)[0]
        assert block["type"] == "compact_summary" and block.get("compaction_id") == cid
        assert seq[first][0] == seq[last][0] == sid
        assert seq[first][1] <= seq[last][1] < summary.seq
    summaries = [r for r in rows if '"type":"compact_summary"' in r.blocks]
    assert len(summaries) == len(found), "a summary turn without its compaction row"


def check_wire(histories: dict[str, list[Turn]], **_: Any) -> None:
    for sid, history in histories.items():
        for caps in (ANTHROPIC, OPENAI):
            msgs = to_messages(history, caps)
            if not msgs:
                continue
            if caps is ANTHROPIC:
                body = {"model": "m", "max_tokens": 64, "messages": to_anthropic(msgs)}
                err = validate_anthropic(body)
            else:
                err = validate_openai({"model": "m", "messages": to_openai(msgs)})
            assert err is None, f"{caps.kind} would reject session {sid}: {err}"


def check_recovery(rows: list[Row], facts: Facts, previous: Any, rnd: Round, **_: Any) -> None:
    assert previous is not None, "the killed run was not noticed at the next start"
    mine = [r for r in rows if r.session_id == rnd.session_id]
    if all(r.id in facts.known for r in mine):
        return  # killed before it wrote to the session: nothing new to report
    # A compaction's summary (stored last, role user) is no message waiting for a reply.
    last = [r for r in mine if '"type":"compact_summary"' not in r.blocks][-1]
    interrupted = {i.session_id: i for i in previous.interrupted}
    if last.role == "user" or last.aborted == CUT_OFF:
        item = interrupted.get(rnd.session_id)
        assert item is not None and item.turn_id == last.id, (last, previous)
    else:
        assert rnd.session_id not in interrupted, (last, previous)


#: Invariants checked after every kill (extension point: add one per new kind of write).
CHECKS: list[Callable[..., None]] = [check_file, check_turns, check_usage, check_compactions,
                                     check_wire, check_recovery]


async def open_like_the_app(path: Path, session_ids: list[str]) -> tuple[Any, dict, dict]:
    store = await AsyncStore.open(path)
    try:
        previous = await previous_run.mark_running(store)
        sessions = {sid: await store.get_session(sid) for sid in session_ids}
        histories = {sid: await store.history(sid) for sid in session_ids}
        await previous_run.mark_clean_exit(store)
    finally:
        await store.close()
    return previous, sessions, histories


def verify(path: Path, facts: Facts, rnd: Round, session_ids: list[str]) -> None:
    previous, sessions, histories = asyncio.run(open_like_the_app(path, session_ids))
    rows, con = read_rows(path)
    try:
        for check in CHECKS:
            check(con=con, rows=rows, facts=facts, rnd=rnd, sessions=sessions,
                  histories=histories, previous=previous)
    finally:
        con.close()
    classify(rows, facts, rnd)
    facts.known = {r.id: (r.session_id, r.seq, r.role, r.aborted, r.sha) for r in rows}


def classify(rows: list[Row], facts: Facts, rnd: Round) -> None:
    if rnd.outcome:
        return
    last = [r for r in rows if r.session_id == rnd.session_id][-1]
    if last.role == "user":
        rnd.outcome = "unanswered"
    elif last.aborted:
        rnd.outcome = "aborted-reply"
        kept = len(last.text())
        # How long the text the worker had but the file lacks had been waiting.
        later = [t for chars, t in facts.recv.get(last.id, []) if chars > kept]
        if later and rnd.killed_at is not None:
            rnd.loss_ms = (rnd.killed_at - min(later)) * 1000
    else:
        rnd.outcome = "reply-complete"


def test_sigkill_during_streaming_and_saving_loses_nothing_committed(tmp_path, fake_provider):
    t0 = time.monotonic()
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        session_ids = [store.create_session(title=f"crash {i}").id for i in range(2)]
    rng = random.Random(SEED)
    facts = Facts()
    rounds: list[Round] = []
    timings: list[tuple[float, float]] = []
    server = ForkServer(tmp_path / "worker-stderr.log", fake_provider.base_url)
    try:
        number = 0
        while sum(1 for r in rounds if r.outcome != "finished") < KILLS:
            assert number < KILLS * 2, "too many rounds finished before their kill"
            rnd = Round(number, rng.choice(session_ids), MODES[number % len(MODES)],
                        rng.choice([10.0, 50.0, 250.0]), rng.choice(["anthropic", "openai"]))
            script_round(fake_provider, rng, facts, number)
            argv = ["run", "--db", str(db), "--url", fake_provider.base_url, "--kind", rnd.kind,
                    "--session", rnd.session_id, "--messages", str(MESSAGES_PER_ROUND),
                    "--seed", str(SEED + number), "--journal-ms", str(rnd.journal_ms),
                    "--actions", ACTIONS]
            t_round = time.monotonic()
            run_round(server, rnd, argv, rng, facts)
            t_verify = time.monotonic()
            verify(db, facts, rnd, session_ids)
            timings.append((t_verify - t_round, time.monotonic() - t_verify))
            assert not facts.failed, f"round {number}: {facts.failed}"
            rounds.append(rnd)
            number += 1
    finally:
        server.close()
    elapsed = time.monotonic() - t0
    if os.environ.get("PARLEY_CRASH_DEBUG"):
        for r in rounds:
            print(r)
    outcomes = {o: sum(1 for r in rounds if r.outcome == o) for o in
                ("aborted-reply", "unanswered", "reply-complete", "finished")}
    losses = [r.loss_ms - r.journal_ms for r in rounds if r.outcome == "aborted-reply"]
    con = sqlite3.connect(db)
    compactions = con.execute("SELECT count(*) FROM compactions").fetchone()[0]
    con.close()
    cuts = sum(r.compact_cut for r in rounds)
    print(f"\ncrash test: {len(rounds)} rounds, {KILLS} kills in {elapsed:.1f} s; "
          f"outcomes {outcomes}; {compactions} compactions saved, {cuts} cut by a kill "
          f"({facts.usage_gaps} left their usage uncounted); "
          f"{len(facts.saved)} committed turns checked; time in rounds "
          f"{sum(t[0] for t in timings):.1f} s, in checks {sum(t[1] for t in timings):.1f} s; "
          f"worst unjournalled age beyond the journal interval {max(losses, default=0):.0f} ms")
    # The test must really have cut replies mid-stream and hit every kind of moment.
    assert outcomes["aborted-reply"] >= KILLS // 6
    assert outcomes["unanswered"] >= 1
    assert len({r.mode for r in rounds}) == len(set(MODES))
    if "compact" in ACTIONS:
        assert compactions >= 1 and cuts >= 1
