"""``/tool NAME {json}`` makes the unscripted fake model call a tool (tests.fakes.tool_phrase),
over real HTTP with the real SDKs: the phrase gives a tool_use, the request carrying
the tool_result gets a final text answer."""

from __future__ import annotations

import anthropic
import openai
import pytest

ECHO = {"name": "mcp__fake__echo", "description": "Return the text unchanged.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"]}}
ADD = {"name": "mcp__fake__add", "description": "Add two numbers.",
       "input_schema": {"type": "object", "properties": {"a": {"type": "number"},
                                                         "b": {"type": "number"}}}}


@pytest.fixture
def claude(fake_provider):
    return anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=fake_provider.anthropic_base_url, max_retries=0)


@pytest.fixture
def gpt(fake_provider):
    return openai.AsyncOpenAI(
        api_key="sk-test-123456789", base_url=fake_provider.openai_base_url, max_retries=0)


async def test_the_phrase_calls_the_tool_then_the_result_is_answered_anthropic(claude):
    ask = [{"role": "user", "content": '/tool echo {"text": "hi there"}'}]
    async with claude.messages.stream(model="claude-haiku-4-5", max_tokens=256,
                                      tools=[ADD, ECHO], messages=ask) as stream:
        first = await stream.get_final_message()
    assert first.stop_reason == "tool_use"
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.name == "mcp__fake__echo"  # "echo" found as the last part of the name
    assert use.input == {"text": "hi there"}

    follow = [*ask, {"role": "assistant", "content": [b.model_dump() for b in first.content]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                            "content": "echo: hi there"}]}]
    final = await claude.messages.create(model="claude-haiku-4-5", max_tokens=256,
                                         tools=[ADD, ECHO], messages=follow)
    assert final.stop_reason == "end_turn"
    assert [b.type for b in final.content] == ["text"]
    assert final.content[0].text == "The tool answered: echo: hi there"


async def test_the_phrase_calls_the_tool_then_the_result_is_answered_openai(gpt):
    tools = [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                               "parameters": t["input_schema"]}}
             for t in (ECHO, ADD)]
    ask = [{"role": "user", "content": '/tool mcp__fake__add {"a": 2, "b": 3}'}]
    first = await gpt.chat.completions.create(model="gpt-4o-mini", tools=tools, messages=ask)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.function.name == "mcp__fake__add"
    assert call.function.arguments.replace(" ", "") == '{"a":2,"b":3}'

    follow = [*ask, choice.message.model_dump(exclude_none=True),
              {"role": "tool", "tool_call_id": call.id, "content": "5.0"}]
    final = await gpt.chat.completions.create(model="gpt-4o-mini", tools=tools, messages=follow)
    assert final.choices[0].finish_reason == "stop"
    assert not final.choices[0].message.tool_calls
    assert final.choices[0].message.content == "The tool answered: 5.0"


async def test_an_unknown_tool_or_bad_arguments_are_said_and_nothing_is_called(claude):
    for text, said in [("/tool nothing_here", "No tool is called 'nothing_here' here. "
                                              "Tools offered: mcp__fake__echo."),
                       ("/tool echo [1, 2]", "must be a JSON object"),
                       ("/tool echo {broken", "must be a JSON object")]:
        reply = await claude.messages.create(
            model="claude-haiku-4-5", max_tokens=256, tools=[ECHO],
            messages=[{"role": "user", "content": text}])
        assert reply.stop_reason == "end_turn", text
        assert [b.type for b in reply.content] == ["text"]
        assert said in reply.content[0].text


async def test_a_message_without_the_phrase_is_still_echoed(claude):
    reply = await claude.messages.create(
        model="claude-haiku-4-5", max_tokens=256, tools=[ECHO],
        messages=[{"role": "user", "content": "please /tool echo {}"}])
    assert reply.content[0].text == "You said: please /tool echo {}"
