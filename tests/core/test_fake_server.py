"""The fake provider server speaks both wire formats the way the real SDKs expect."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

USER = [{"role": "user", "content": "hello there"}]


@pytest.fixture
def claude(fake_provider):
    return anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=fake_provider.anthropic_base_url, max_retries=0
    )


@pytest.fixture
def gpt(fake_provider):
    return openai.AsyncOpenAI(
        api_key="sk-test-123456789", base_url=fake_provider.openai_base_url, max_retries=0
    )


async def _events(stream):
    return [e async for e in stream]


async def test_anthropic_stream_has_every_event_kind(fake_provider, claude):
    fake_provider.script(
        "Hello world",
        thinking="Let me see",
        signature="sig-1",
        tool_calls=[{"name": "lookup", "input": {"q": "tea"}, "id": "toolu_1"}],
        chunk_size=4,
    )
    stream = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=64, messages=USER, stream=True
    )
    events = await _events(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert "".join(d.thinking for d in deltas if d.type == "thinking_delta") == "Let me see"
    assert [d.signature for d in deltas if d.type == "signature_delta"] == ["sig-1"]
    assert "".join(d.text for d in deltas if d.type == "text_delta") == "Hello world"
    assert len([d for d in deltas if d.type == "text_delta"]) == 3  # chunk_size 4
    json_text = "".join(d.partial_json for d in deltas if d.type == "input_json_delta")
    assert json_text == '{"q": "tea"}'
    starts = [e.content_block for e in events if e.type == "content_block_start"]
    assert [b.type for b in starts] == ["thinking", "text", "tool_use"]
    assert starts[2].id == "toolu_1" and starts[2].name == "lookup"
    assert events[-2].delta.stop_reason == "tool_use"


async def test_anthropic_stream_sends_ping_events(fake_provider):
    async with httpx2.AsyncClient() as client:
        r = await client.post(
            fake_provider.base_url + "/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": USER, "stream": True},
        )
    assert "event: ping" in r.text
    assert r.headers["content-type"].startswith("text/event-stream")


async def test_default_reply_echoes_the_last_user_message(fake_provider, claude):
    msg = await claude.messages.create(model="claude-haiku-4-5", max_tokens=64, messages=USER)
    assert msg.content[0].text == "You said: hello there"
    assert msg.stop_reason == "end_turn"


async def test_parley_title_and_summary_requests_get_plausible_answers(fake_provider, claude):
    """Against the fake server (README: trying Parley without a key) titles and
    compaction summaries read like ones, instead of echoing Parley's own prompt."""
    from parley.core.chat.titles import _prompt as title_prompt
    from parley.core.compaction.prompt import extract_summary, transcript_prompt
    from parley.core.content import TextBlock, Turn

    ask = title_prompt("plan a weekend trip to Lisbon, please!", "Sure — here is a plan")
    msg = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=64, messages=[{"role": "user", "content": ask}]
    )
    assert msg.content[0].text == "Plan weekend trip Lisbon"  # its subject, not an echo

    turns = [Turn("user", [TextBlock("How do octopuses sleep?")]),
             Turn("assistant", [TextBlock("They change colour while asleep.")])]
    ask = transcript_prompt(turns, level=0)
    msg = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=400, messages=[{"role": "user", "content": ask}]
    )
    summary = extract_summary(msg.content[0].text)
    assert summary is not None and "How do octopuses sleep?" in summary


async def test_openai_stream_with_tool_calls_and_usage_chunk(fake_provider, gpt):
    fake_provider.script(
        "Sure", tool_calls=[{"name": "lookup", "input": {"q": "tea"}}], chunk_size=3
    )
    stream = await gpt.chat.completions.create(
        model="gpt-5", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = await _events(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Sure"
    calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert calls[0].id.startswith("call_") and calls[0].function.name == "lookup"
    assert "".join(tc.function.arguments or "" for tc in calls) == '{"q": "tea"}'
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens > 0


async def test_openai_stream_without_include_usage_has_no_usage(fake_provider, gpt):
    stream = await gpt.chat.completions.create(model="gpt-5", messages=USER, stream=True)
    chunks = await _events(stream)
    assert all(c.usage is None for c in chunks)


async def test_openai_non_streaming(fake_provider, gpt):
    fake_provider.script("Plain answer")
    done = await gpt.chat.completions.create(model="gpt-5", messages=USER)
    assert done.choices[0].message.content == "Plain answer"
    assert done.choices[0].finish_reason == "stop"


async def test_requests_are_recorded_without_credentials(fake_provider, claude):
    await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
    rec = fake_provider.last_request
    assert rec.path == "/v1/messages" and rec.api == "anthropic"
    assert rec.body["messages"] == USER
    assert b"hello there" in rec.raw
    assert rec.has_auth
    assert not {"x-api-key", "authorization"} & set(rec.headers)
    assert all("sk-ant-test" not in v for v in rec.headers.values())


async def test_reset_clears_script_and_requests(fake_provider, claude):
    fake_provider.script("one").script("two")
    await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
    assert fake_provider.pending == 1
    fake_provider.reset()
    assert fake_provider.pending == 0 and fake_provider.requests == []


@pytest.mark.parametrize(
    ("kind", "status", "error_type"),
    [
        ("auth", 401, "authentication_error"),
        ("permission", 403, "permission_error"),
        ("overloaded", 529, "overloaded_error"),
        ("server_error", 500, "api_error"),
        ("not_found", 404, "not_found_error"),
    ],
)
async def test_anthropic_status_failures(fake_provider, claude, kind, status, error_type):
    fake_provider.fail(kind)
    with pytest.raises(anthropic.APIStatusError) as info:
        await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
    assert info.value.status_code == status
    assert info.value.body["error"]["type"] == error_type


async def test_rate_limit_sends_retry_after(fake_provider, claude):
    fake_provider.fail("rate_limit", retry_after=7)
    with pytest.raises(anthropic.RateLimitError) as info:
        await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
    assert info.value.response.headers["retry-after"] == "7"


async def test_prompt_too_long_bodies(fake_provider, claude, gpt):
    fake_provider.fail("prompt_too_long", tokens=250_000, maximum=200_000)
    with pytest.raises(anthropic.BadRequestError) as a_info:
        await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
    assert (
        a_info.value.body["error"]["message"]
        == "prompt is too long: 250000 tokens > 200000 maximum"
    )
    fake_provider.fail("prompt_too_long", tokens=130_000, maximum=128_000)
    with pytest.raises(openai.BadRequestError) as o_info:
        await gpt.chat.completions.create(model="gpt-4.1", messages=USER)
    assert o_info.value.code == "context_length_exceeded"
    assert "maximum context length is 128000 tokens" in o_info.value.message


async def test_openai_401_masks_the_key_like_the_real_api(fake_provider, gpt):
    fake_provider.fail("auth")
    with pytest.raises(openai.AuthenticationError) as info:
        await gpt.chat.completions.create(model="gpt-5", messages=USER)
    assert "sk-" in info.value.message and "sk-test-123456789" not in info.value.message


async def test_mid_stream_error_event(fake_provider, claude):
    fake_provider.fail("mid_stream_error", reply="abcdefghijklmnop", after_chars=8)
    stream = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=10, messages=USER, stream=True
    )
    seen = []
    with pytest.raises(anthropic.APIStatusError) as info:
        async for e in stream:
            if e.type == "content_block_delta":
                seen.append(e.delta.text)
    assert "".join(seen) == "abcdefgh"
    assert info.value.status_code == 200
    assert info.value.body["error"]["type"] == "overloaded_error"


async def test_cut_drops_the_connection(fake_provider, claude):
    fake_provider.fail("cut", reply="abcdefghijklmnop", after_chars=8)
    stream = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=10, messages=USER, stream=True
    )
    # anthropic >= 2.17 wraps a failed read of the body in APIConnectionError (its
    # _streaming.async_iter_response_bytes); older releases let httpx2's error through.
    with pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as raised:
        async for _ in stream:
            pass
    dropped = raised.value
    if isinstance(dropped, anthropic.APIConnectionError):
        dropped = dropped.__cause__
    assert isinstance(dropped, httpx2.RemoteProtocolError)  # the connection was dropped


async def test_hang_holds_headers_back(fake_provider):
    fake_provider.fail("hang", seconds=2)
    client = anthropic.AsyncAnthropic(
        api_key="k", base_url=fake_provider.anthropic_base_url, max_retries=0, timeout=0.2
    )
    with pytest.raises(anthropic.APITimeoutError):
        await client.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)


async def test_token_delay_slows_the_stream(fake_provider, claude):
    import time

    fake_provider.script("x" * 40, chunk_size=4, token_delay_ms=20)
    start = time.monotonic()
    stream = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=10, messages=USER, stream=True
    )
    await _events(stream)
    assert time.monotonic() - start >= 0.18  # 10 chunks x 20 ms


def _cached(system: str, messages: list[dict]) -> dict:
    return {
        "model": "claude-haiku-4-5",
        "max_tokens": 10,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    }


async def test_prompt_cache_reads_the_identical_prefix(fake_provider, claude):
    system = "You are terse. " * 40
    first = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "question one " * 20,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }
    ]
    m1 = await claude.messages.create(**_cached(system, first))
    assert m1.usage.cache_read_input_tokens == 0
    written = m1.usage.cache_creation_input_tokens
    assert written > 0 and m1.usage.input_tokens == 0
    second = [
        {"role": "user", "content": [{"type": "text", "text": "question one " * 20}]},
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "question two", "cache_control": {"type": "ephemeral"}}
            ],
        },
    ]
    m2 = await claude.messages.create(**_cached(system, second))
    assert m2.usage.cache_read_input_tokens == written
    assert m2.usage.cache_creation_input_tokens > 0
    # A changed prefix misses the message part of the cache but still hits the system prompt.
    third = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "question ONE " * 20,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }
    ]
    m3 = await claude.messages.create(**_cached(system, third))
    assert 0 < m3.usage.cache_read_input_tokens < written


async def test_no_breakpoint_no_cache(fake_provider, claude):
    for _ in range(2):
        m = await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)
        assert m.usage.cache_read_input_tokens == 0 and m.usage.cache_creation_input_tokens == 0


async def test_openai_cached_tokens_grow_with_the_conversation(fake_provider, gpt):
    await gpt.chat.completions.create(model="gpt-5", messages=USER)
    longer = USER + [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]
    done = await gpt.chat.completions.create(model="gpt-5", messages=longer)
    cached = done.usage.prompt_tokens_details.cached_tokens
    assert 0 < cached < done.usage.prompt_tokens


async def test_count_tokens_and_models(fake_provider, claude, gpt):
    count = await claude.messages.count_tokens(model="claude-haiku-4-5", messages=USER)
    assert count.input_tokens > 0
    a_ids = [m.id async for m in claude.models.list()]
    o_ids = [m.id async for m in gpt.models.list()]
    assert "claude-opus-4-1" in a_ids and "gpt-5" in o_ids and "gpt-5" not in a_ids
    fake_provider.openai_models = [{"id": "qwen2.5:7b"}]
    assert [m.id async for m in gpt.models.list()] == ["qwen2.5:7b"]


async def test_valid_keys_rejects_other_keys(fake_provider, claude):
    fake_provider.valid_keys = {"right-key"}
    with pytest.raises(anthropic.AuthenticationError):
        await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=USER)


async def test_unknown_failure_kind_is_refused(fake_provider):
    with pytest.raises(ValueError):
        fake_provider.fail("meteor")


async def test_broken_tool_pairing_gets_the_real_400(fake_provider, claude, gpt):
    fake_provider.script("never used")
    orphan = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}],
        }
    ]
    with pytest.raises(anthropic.BadRequestError) as a_info:
        await claude.messages.create(model="claude-haiku-4-5", max_tokens=10, messages=orphan)
    assert a_info.value.body["error"]["type"] == "invalid_request_error"
    assert "tool_use_id" in a_info.value.body["error"]["message"]
    unanswered = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "next"},
    ]
    with pytest.raises(openai.BadRequestError) as o_info:
        await gpt.chat.completions.create(model="gpt-5", messages=unanswered)
    assert "call_1" in o_info.value.message
    assert fake_provider.pending == 1  # a rejected request does not use up the script


def test_cli_serves_until_stopped(tmp_path):
    import os
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.server", "--port", str(port), "--token-delay-ms", "0"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        body = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and body is None:
            try:
                r = httpx2.post(
                    f"http://127.0.0.1:{port}/v1/chat/completions",
                    timeout=2,
                    json={"model": "m", "messages": [{"role": "user", "content": "ping"}]},
                )
                body = r.json()
            except httpx2.TransportError:
                time.sleep(0.1)
        assert body is not None, "the CLI server did not come up"
        assert body["choices"][0]["message"]["content"] == "You said: ping"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/v1" in out


def test_cli_says_when_its_port_is_taken_and_can_require_a_key():
    import os
    import socket
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tests.fakes.server", "--port", str(port)],
            cwd=root, capture_output=True, text=True, timeout=60,
        )
    assert done.returncode == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_key_option_refuses_other_keys_like_a_real_provider():
    import os
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.server", "--port", str(port), "--key", "sk-right"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": "ping"}]}

    def post(key: str) -> int | None:
        try:
            headers = {"authorization": f"Bearer {key}"}
            return httpx2.post(url, timeout=2, json=body, headers=headers).status_code
        except httpx2.TransportError:
            return None

    try:
        deadline = time.monotonic() + 20
        while (status := post("sk-wrong")) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status == 401
        assert post("sk-right") == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert "only the key(s) given with --key" in out


async def test_a_second_summary_carries_the_first_ones_points(fake_provider, claude):
    """Compacting twice against the fake server (README) works: the second summary,
    written from a transcript that begins with the first, keeps what the first said
    (a summary of one new message alone is refused as too short for what it replaces)."""
    from parley.core.compaction.prompt import extract_summary, transcript_prompt
    from parley.core.content import CompactSummaryBlock, TextBlock, Turn

    first = "What happened so far:\n" + "\n".join(
        f"- The user said: question {i} about octopuses" for i in range(40))
    turns = [Turn("user", [CompactSummaryBlock(summary=first, first_turn_id="a",
                                               last_turn_id="b")]),
             Turn("user", [TextBlock("omega three")]),
             Turn("assistant", [TextBlock("You said: omega three")])]
    ask = transcript_prompt(turns, level=0, previous=True)
    msg = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=2000, messages=[{"role": "user", "content": ask}]
    )
    summary = extract_summary(msg.content[0].text)
    assert summary is not None
    assert "question 0 about octopuses" in summary and "question 39 about" in summary
    assert summary.rstrip().endswith("omega three")
