"""A reply that did not finish is told in the exports as the window tells it: stopped (Esc)
as stopped, cut off (a failure, with its reason, or Parley's end) as cut off; the
Markdown export reads back the same, and the Parley JSON keeps ``stop_reason`` as is.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import json

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.export import export_session
from parley.core.importing.files import import_data
from parley.core.store.async_store import AsyncStore
from tests.core.export_support import MODEL, make_session

ASK = Turn("user", [TextBlock("Tell me a story")])


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


def _chat(**unfinished: object) -> list[Turn]:
    """A question and a reply that did not finish (``unfinished``: its Turn fields)."""
    reply = Turn("assistant", [TextBlock("Once upon a time")], aborted=True, model=MODEL,
                 **unfinished)  # type: ignore[arg-type]
    return [ASK, reply]


@pytest.mark.parametrize(("unfinished", "line"), [
    ({}, "*(stopped before it finished)*"),
    ({"stop_reason": "failed:connection"}, "*(cut off before it finished — connection lost)*"),
    ({"stop_reason": "failed:timeout"},
     "*(cut off before it finished — no data came in time)*"),
    ({"stop_reason": "failed:"}, "*(cut off before it finished — an error)*"),
    ({"cut_off": True}, "*(cut off before it finished — Parley closed)*"),
])
async def test_markdown_says_stopped_or_cut_off_and_why(store, unfinished, line):
    sid = await make_session(store, _chat(**unfinished))
    md = (await export_session(store, sid, "markdown")).text
    assert f"{line}\n\nOnce upon a time" in md
    if "cut off" in line:
        assert "stopped" not in md  # a cut reply does not read as stopped


@pytest.mark.parametrize("unfinished", [
    {}, {"stop_reason": "failed:connection"}, {"stop_reason": "failed:process"},
    {"cut_off": True},
])
async def test_markdown_read_back_keeps_why_a_reply_did_not_finish(store, tmp_path,
                                                                    unfinished):
    sid = await make_session(store, _chat(**unfinished))
    md = (await export_session(store, sid, "markdown")).text

    summary = await import_data(store, md.encode())

    (back,) = summary.session_ids
    turns = await store.get_turns(back)
    assert [t.text() for t in turns] == ["Tell me a story", "Once upon a time"]
    reply = turns[-1]
    assert reply.aborted
    assert reply.stop_reason == unfinished.get("stop_reason")
    assert reply.cut_off == unfinished.get("cut_off", False)
    again = (await export_session(store, back, "markdown")).text
    assert again.split("\n---\n")[1:] == md.split("\n---\n")[1:]


async def test_parley_json_keeps_the_stop_reason_as_is(store):
    sid = await make_session(store, _chat(stop_reason="failed:connection"))
    data = json.loads((await export_session(store, sid, "parley")).text)
    text = json.dumps(data)
    assert '"stop_reason": "failed:connection"' in text and '"aborted": true' in text


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
async def test_provider_exports_leave_a_cut_reply_out_and_say_so(store, fmt):
    sid = await make_session(store, _chat(stop_reason="failed:connection"))
    result = await export_session(store, sid, fmt)
    assert "Once upon a time" not in result.text
    assert "1 reply(ies) stopped or cut off before they finished were left out." in result.lost
