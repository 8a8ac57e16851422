"""A stored conversation with every kind of block, shared by the export and import tests."""

from __future__ import annotations

from parley.core.content import (
    DocumentBlock,
    ImageBlock,
    TextBlock,
    TextOrigin,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    Usage,
)

PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQ="
MODEL = "anthropic:claude-sonnet-4-6"


def rich_turns() -> list[Turn]:
    """A conversation with every kind of block, a tool loop and an aborted reply."""
    return [
        Turn("user", [TextBlock("What is in this picture?"), ImageBlock("image/png", PNG)]),
        Turn(
            "assistant",
            [
                ThinkingBlock("The user wants a description.", signature="sig-1"),
                TextBlock("Let me look it up."),
                ToolUseBlock("toolu_1", "search", {"q": "red bridge", "limit": 3}),
            ],
            model=MODEL,
            usage=Usage(10, 5),
        ),
        Turn(
            "user",
            [
                ToolResultBlock(
                    "toolu_1", (TextBlock("Golden Gate Bridge"), ImageBlock("image/png", PNG))
                )
            ],
        ),
        Turn(
            "assistant",
            [TextBlock("It is the Golden Gate Bridge.\n\n```python\nprint('hi')\n```")],
            model=MODEL,
        ),
        Turn(
            "user",
            [
                TextBlock("New message from Slack", origin=TextOrigin("signal", "slack", "Ana")),
                DocumentBlock("application/pdf", PDF, "plan.pdf"),
                TextBlock("Summarize the plan."),
            ],
        ),
        Turn("assistant", [TextBlock("The plan says")], aborted=True, model=MODEL),
    ]


async def make_session(store, turns=None, *, title="Bridges & plans: a chat?") -> str:
    session = await store.create_session(title=title, model=MODEL, system_prompt="Be brief.")
    for turn in turns if turns is not None else rich_turns():
        await store.append_turn(session.id, turn)
    return session.id
