"""Automatic titles against a real store and the fake provider over real HTTP.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from parley.core.attachments.files import text_file_block
from parley.core.chat.run import ChatRunner, SessionTitled
from parley.core.chat.titles import (
    TitleService,
    clean_title,
    first_line_title,
    generate_title,
    title_problem,
)
from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.settings import UnknownSetting, spec
from tests.core.hubs import fake_workspace

SONNET = "anthropic:claude-sonnet-4-6"
QUESTION = "How do I plan a three-day trip to Lisbon?\nI like museums and food."


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    ws = await fake_workspace(tmp_path, fake_provider, at=any_target,  # a file, then PostgreSQL
                              compatible={"name": "Ollama", "default_model": "llama3.2:3b"})
    yield ws.store, ws.hub
    await ws.close()


async def first_exchange(store, text: str = QUESTION, *, title: str | None = None) -> str:
    session = await store.create_session(title=title)
    await store.append_turn(session.id, Turn("user", [TextBlock(text)]))
    await store.append_turn(
        session.id, Turn("assistant", [TextBlock("Day one: start in Alfama, then…")])
    )
    return session.id


@pytest.mark.parametrize(
    ("model_ref", "expected_model"),
    [
        (SONNET, "claude-haiku-4-5"),  # the Haiku the fake lists (not the catalog's newest)
        ("openai:gpt-5", "gpt-5-mini"),
        ("ollama:llama3.2:3b", "llama3.2:3b"),
    ],
)
async def test_generated_title_by_a_cheap_model_of_the_same_provider(
    env, fake_provider, model_ref, expected_model
):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script('"Planning a Lisbon Trip."')

    title = await generate_title(hub, store, sid, model_ref=model_ref)

    assert title == "Planning a Lisbon Trip"
    session = await store.get_session(sid)
    assert (session.title, session.title_source) == ("Planning a Lisbon Trip", "auto")
    (request,) = fake_provider.model_requests
    assert request.body["model"] == expected_model
    sent = str(request.body)
    assert "three-day trip to Lisbon" in sent and "Alfama" in sent  # message and reply start
    assert session.usage.output_tokens > 0  # the title request counts in the session's usage


async def test_a_provider_that_lists_no_cheap_model_titles_with_the_chats_model(
    env, fake_provider
):
    store, hub = env
    fake_provider.anthropic_models = [m for m in fake_provider.anthropic_models
                                      if "haiku" not in m["id"]]
    sid = await first_exchange(store)
    fake_provider.script("Lisbon trip planning")
    assert await generate_title(hub, store, sid, model_ref=SONNET) == "Lisbon trip planning"
    (request,) = fake_provider.model_requests
    assert request.body["model"] == "claude-sonnet-4-6"  # never one the provider lacks


async def test_run_loop_placeholder_is_replaced_by_the_generated_title(env, fake_provider):
    store, hub = env
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    session = await store.create_session()
    fake_provider.script("Start in Alfama.").script("Lisbon in three days")
    events: list = []
    await runner.send(session.id, [TextBlock(QUESTION)], model_ref=SONNET, on_event=events.append)
    assert (await store.get_session(session.id)).title == first_line_title(QUESTION)

    titled: list[tuple[str, str]] = []
    service = TitleService(store, hub, on_titled=lambda s, t: titled.append((s, t)))
    # The run loop's hook: the title reaches the run's listener as SessionTitled.
    title = await service.on_first_exchange(
        session.id, SONNET, on_titled=lambda s, t: events.append(SessionTitled(s, t))
    )

    assert title == "Lisbon in three days"
    assert titled == [(session.id, "Lisbon in three days")]
    assert (await store.get_session(session.id)).title == "Lisbon in three days"
    assert [e.title for e in events if isinstance(e, SessionTitled)] == [
        first_line_title(QUESTION), "Lisbon in three days",
    ]


async def test_user_title_is_never_overwritten_and_costs_no_call(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store, title="My Lisbon notes")
    fake_provider.script("Something else")

    assert await generate_title(hub, store, sid, model_ref=SONNET) is None
    session = await store.get_session(sid)
    assert (session.title, session.title_source) == ("My Lisbon notes", "user")
    assert fake_provider.model_requests == []


async def test_user_renaming_during_the_call_wins(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script("A slow generated title", token_delay_ms=20, chunk_size=2)
    task = asyncio.ensure_future(generate_title(hub, store, sid, model_ref=SONNET))
    for _ in range(200):
        if fake_provider.model_requests:
            break
        await asyncio.sleep(0.01)
    await store.rename_session(sid, "Typed by me")

    assert await task is None
    assert (await store.get_session(sid)).title == "Typed by me"


@pytest.mark.parametrize("failure", ["server_error", "auth", "overloaded"])
async def test_failed_call_falls_back_to_the_first_line(env, fake_provider, caplog, failure):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.fail(failure)

    with caplog.at_level(logging.WARNING, logger="parley.core.chat.titles"):
        title = await generate_title(hub, store, sid, model_ref=SONNET)

    assert title == "How do I plan a three-day trip to Lisbon?"
    assert (await store.get_session(sid)).title_source == "auto"
    assert any("title model" in r.getMessage() for r in caplog.records)


async def test_empty_answer_and_unknown_provider_fall_back(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script("   ")
    assert await generate_title(hub, store, sid, model_ref=SONNET) == first_line_title(QUESTION)

    other = await first_exchange(store, "Second chat")
    assert await generate_title(hub, store, other, model_ref="gone:model") == "Second chat"


async def test_setting_off_sets_the_first_line_without_a_call(env, fake_provider):
    store, hub = env
    await store.set_setting("chat.auto_title", False)
    sid = await first_exchange(store)
    fake_provider.script("Should not be asked")

    assert await generate_title(hub, store, sid, model_ref=SONNET) == first_line_title(QUESTION)
    assert fake_provider.model_requests == []
    assert fake_provider.pending == 1


async def test_a_message_with_files_is_titled_from_what_was_typed(env, fake_provider):
    """Not from an attached file's header ("File notes txt", trial 16 shot-52): the run
    loop's placeholder and the model's prompt take the typed words."""
    store, hub = env
    await store.set_setting("chat.auto_title", False)
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    session = await store.create_session()
    fake_provider.script("Read them.")
    blocks = [text_file_block("notes.txt", "pots: 3\nseeds: basil"),
              TextBlock("Here are my files")]
    await runner.send(session.id, blocks, model_ref=SONNET, on_event=lambda e: None)
    assert (await store.get_session(session.id)).title == "Here are my files"
    assert await generate_title(hub, store, session.id, model_ref=SONNET) == "Here are my files"
    await store.set_setting("chat.auto_title", True)
    only_files = await store.create_session()
    await store.append_turn(only_files.id, Turn("user", [text_file_block("a.txt", "Tomatoes\n")]))
    await store.append_turn(only_files.id, Turn("assistant", [TextBlock("Noted.")]))
    fake_provider.script("Garden Notes")
    assert await generate_title(hub, store, only_files.id, model_ref=SONNET) == "Garden Notes"
    assert "a.txt" in str(fake_provider.model_requests[-1].body)  # nothing typed: the file


async def test_fork_titles_and_later_exchanges_are_left_alone(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store)
    await store.set_auto_title(sid, "Lisbon (fork)")  # e.g. a fork's derived title
    assert await generate_title(hub, store, sid, model_ref=SONNET) is None

    later = await first_exchange(store)
    await store.append_turn(later, Turn("user", [TextBlock("And Porto?")]))
    await store.append_turn(later, Turn("assistant", [TextBlock("Porto is…")]))
    service = TitleService(store, hub)
    assert await service.on_first_exchange(later, SONNET) is None
    assert fake_provider.model_requests == []


async def test_tool_results_do_not_count_as_a_second_exchange(env, fake_provider):
    store, hub = env
    session = await store.create_session()
    use = ToolUseBlock("t1", "search", {"q": "lisbon"})
    for turn in (
        Turn("user", [TextBlock(QUESTION)]),
        Turn("assistant", [use]),
        Turn("user", [ToolResultBlock("t1", (TextBlock("museums…"),))]),
        Turn("assistant", [TextBlock("Here is a plan.")]),
    ):
        await store.append_turn(session.id, turn)
    fake_provider.script("Lisbon museum plan")
    assert await TitleService(store, hub).on_first_exchange(session.id, SONNET) == (
        "Lisbon museum plan"
    )


async def test_a_title_cancelled_while_asked_saves_nothing(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script("Never finished", token_delay_ms=200, chunk_size=1)
    service = TitleService(store, hub)
    # As the window runs it: a background task, cancelled when the window closes.
    task = asyncio.ensure_future(service.on_first_exchange(sid, SONNET))
    for _ in range(200):
        if fake_provider.model_requests:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert (await store.get_session(sid)).title is None


async def test_missing_session_is_logged_not_raised(env, caplog):
    store, hub = env
    with caplog.at_level(logging.ERROR, logger="parley.core.chat.titles"):
        assert await generate_title(hub, store, "no-such-session", model_ref=SONNET) is None
        assert await TitleService(store, hub).on_first_exchange("no-such", SONNET) is None
    assert caplog.records


def _title_model_declared() -> bool:
    try:
        spec("chat.title_model")
    except UnknownSetting:
        return False
    return True


@pytest.mark.skipif(not _title_model_declared(),
                    reason="parley.core.settings lacks chat.title_model")
async def test_title_model_setting_overrides_the_cheap_model(env, fake_provider):
    store, hub = env
    await store.set_setting("chat.title_model", "claude-opus-4-6")
    sid = await first_exchange(store)
    fake_provider.script("Opus named it")
    assert await generate_title(hub, store, sid, model_ref=SONNET) == "Opus named it"
    assert fake_provider.model_requests[0].body["model"] == "claude-opus-4-6"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"Trip to Lisbon."', "Trip to Lisbon"),
        ("Title: Fixing a Python import error", "Fixing a Python import error"),
        ("**Lisbon food guide**\nExtra explanation.", "Lisbon food guide"),
        ("<think>the user wants…</think>\n“Rust lifetimes explained”", "Rust lifetimes explained"),
        ("one two three four five six seven eight", "one two three four five six"),
        ("Why is my build slow?", "Why is my build slow?"),
        ("Here is **bold**, *italic*, `code` and", "Here is bold, italic, code and"),
        ("## [Lisbon](https://x.example) _food_ guide", "Lisbon food guide"),
        ("<b>Rust</b> ~~lifetimes~~ `ref`", "Rust lifetimes ref"),
        ("snake_case names in *Python*", "snake_case names in Python"),
        ("东京三日游计划。", "东京三日游计划"),
        ("<user_message>\nName three colours.\n</user_message>", "Name three colours"),
        ("<user_message>", None),
        ("What's the capital of France? A city", "What's the capital of France?"),
        ("Dr. Who trivia", "Dr. Who trivia"),
        ("  \n ... \n", None),
        ("", None),
    ],
)
def test_clean_title(raw, expected):
    assert clean_title(raw) == expected


@pytest.mark.parametrize(
    ("answer", "stop_reason", "reply"),
    [  # what SmolLM2-135M wrote on a real llama-cpp-python server
        ("The user's conversation is", "end_turn", "Day one: start in Alfama, then…"),
        ("This conversation has been edited to", "max_tokens", "Day one: start in Alfama…"),
        ("The conversation is about Lisbon", "end_turn", "Day one: start in Alfama…"),
        ("Title of the chat", "end_turn", "Day one: start in Alfama…"),
        ("The capital of France is Paris.", "end_turn", "The capital of France is Paris. It…"),
        ("Planning a Lisbon tri", "max_tokens", "Day one: start in Alfama…"),  # cut mid-word
        ("I'm not sure what to say", "end_turn", "Day one: start in Alfama…"),  # 2026-12-01
        ("Sure! Here is a title:", "end_turn", "Day one: start in Alfama…"),
    ],
)
async def test_an_answer_that_is_no_title_falls_back_to_the_first_line(
    env, fake_provider, caplog, answer, stop_reason, reply
):
    store, hub = env
    session = await store.create_session()
    await store.append_turn(session.id, Turn("user", [TextBlock(QUESTION)]))
    await store.append_turn(session.id, Turn("assistant", [TextBlock(reply)]))
    fake_provider.script(answer, stop_reason=stop_reason)

    with caplog.at_level(logging.INFO, logger="parley.core.chat.titles"):
        title = await generate_title(hub, store, session.id, model_ref="ollama:llama3.2:3b")

    assert title == "How do I plan a three-day trip to Lisbon?"
    assert len(fake_provider.model_requests) == 1
    assert "gave no title" in caplog.text


def test_the_placeholder_from_the_first_line_is_plain_text():
    assert first_line_title("# **Fix** the `build` [now](http://x)\nmore") == "Fix the build now"
    assert first_line_title("> - *quoted* item") == "quoted item"


async def test_an_echo_of_the_request_is_refused_for_the_first_line(env, fake_provider, caplog):
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script("How do I plan a three-day")
    with caplog.at_level(logging.INFO, logger="parley.core.chat.titles"):
        title = await generate_title(hub, store, sid, model_ref=SONNET)
    assert title == "How do I plan a three-day trip to Lisbon?"
    assert "(echo:" in caplog.text
    # A short request named by its own words, or a topic sharing its words, is a title.
    short = "Rust lifetimes"
    assert title_problem(short, short, "", "end_turn", short) is None
    assert title_problem("Plan three-day trip Lisbon", "x", "", "end_turn", QUESTION) is None


async def test_the_fake_servers_own_title_is_kept(env, fake_provider):
    store, hub = env
    sid = await first_exchange(store)
    assert await generate_title(hub, store, sid, model_ref=SONNET) == "Plan three-day trip Lisbon"


async def test_a_title_cut_by_the_output_limit_after_its_last_whole_word_is_kept(
    env, fake_provider
):
    """The limit cut a second line (an explanation), not the title."""
    store, hub = env
    sid = await first_exchange(store)
    fake_provider.script("Lisbon trip planning\nThis title was chosen bec",
                         stop_reason="max_tokens")
    assert await generate_title(hub, store, sid, model_ref=SONNET) == "Lisbon trip planning"
    # A topic sharing words with the reply, not copying its start, is a title.
    reply = "The capital of France is Paris."
    assert title_problem("Capital of France", "Capital of France", reply, "end_turn") is None
    assert title_problem("The capital of France", "x", reply, "end_turn") == "copy"


# -- a local server that stops the running request when a new one arrives -------------

LOCAL = "ollama:llama3.2:3b"
LONG_REPLY = "Paris is the capital of France. " * 12


async def until_requests(fake_provider, n: int) -> None:
    for _ in range(500):
        if len(fake_provider.model_requests) >= n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the fake never got {n} model requests")


async def interrupting_server_chats(store, hub, fake_provider):
    """A server that cuts off streams in flight when a request arrives (llama-cpp-python's
    default); returns (a chat with a first exchange to title, an empty chat, a runner)."""
    fake_provider.windows.interrupt_streams = True
    titled = await first_exchange(store)
    chat = await store.create_session()
    return titled, chat, ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)


async def test_a_title_waits_for_a_chat_reply_streaming_from_the_same_local_server(
    env, fake_provider
):
    """llama-cpp-python's default: the title request cut the chat reply off (twice)."""
    store, hub = env
    titled, chat, runner = await interrupting_server_chats(store, hub, fake_provider)
    fake_provider.script(LONG_REPLY, token_delay_ms=15, chunk_size=4)
    fake_provider.script("Lisbon trip planning")
    reply = asyncio.ensure_future(
        runner.send(chat.id, [TextBlock("What is the capital of France?")], model_ref=LOCAL))
    await until_requests(fake_provider, 1)  # the reply streams …
    title = await generate_title(hub, store, titled, model_ref=LOCAL)  # … the title waits

    turn = await reply
    assert turn is not None and turn.text() == LONG_REPLY and not turn.aborted
    assert title == "Lisbon trip planning"
    assert fake_provider.windows.interrupted == 0
    assert len(fake_provider.model_requests) == 2  # nothing sent again


async def test_a_chat_request_calls_off_a_running_title_which_goes_again_after_it(
    env, fake_provider
):
    store, hub = env
    titled, chat, runner = await interrupting_server_chats(store, hub, fake_provider)
    fake_provider.script("Lisbon trip planning " * 10, token_delay_ms=20, chunk_size=2)
    fake_provider.script("The answer.", token_delay_ms=5, chunk_size=2)
    fake_provider.script("Lisbon trip planning")
    title = asyncio.ensure_future(generate_title(hub, store, titled, model_ref=LOCAL))
    await until_requests(fake_provider, 1)  # the title streams …
    turn = await runner.send(chat.id, [TextBlock("Quick question")], model_ref=LOCAL)

    assert turn is not None and turn.text() == "The answer." and not turn.aborted
    assert await title == "Lisbon trip planning"  # asked again once the server was free
    assert len(fake_provider.model_requests) == 3
