"""The fake provider's summaries of chats that hold files (issue 35, item 7): a chat whose
messages carry images and documents — some with no typed words at all — is summarized
by the fake as a model would: its points name the files (and quote a text file's words
when the request holds them), never their base64, and Parley accepts the summary, from
the separate summary request and from the cache-friendly one alike. Real sessions.db,
real SDKs over HTTP."""

from __future__ import annotations

import base64

import pytest

from parley.core.content import DocumentBlock, ImageBlock, TextBlock, Turn
from tests.core.compaction_support import GPT, SONNET
from tests.core.images import png
from tests.fakes.summaries import SUMMARY_ASK

PNG = base64.b64encode(png(size=(200, 150))).decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n" + b"% filler\n" * 800
                       + b"%%EOF").decode()
NOTES = ("Harbour inventory: forty crates of saffron, twelve barrels of tar, "
         "and the lighthouse keeper's ledger. ") * 60
TXT = base64.b64encode(NOTES.encode()).decode()
FILES = [
    [ImageBlock("image/png", PNG)],  # no typed words
    [DocumentBlock("application/pdf", PDF, "contract.pdf"),
     DocumentBlock("text/plain", TXT, "harbour.txt")],
    [TextBlock("Which crates matter?"), ImageBlock("image/png", PNG)],
]


def no_file_bytes(summary: str) -> bool:
    return not any(data[i:i + 24] in summary for data in (PNG, PDF, TXT)
                   for i in range(0, min(len(data), 480) - 24, 24))


async def last_summary(env) -> str:
    stored = await env.store.get_turns(env.sid)
    return stored[-1].blocks[0].summary


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_a_summary_request_of_a_chat_of_files_names_them(env, fake_provider, model):
    for blocks, answer in zip(FILES, ("A small picture.", "Two files read.", "The saffron."),
                              strict=True):
        await env.store.append_turn(env.sid, Turn("user", blocks))
        await env.store.append_turn(env.sid, Turn("assistant", [TextBlock(answer)]))
    await env.seed(3)

    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=model)

    assert result.compacted, result
    summary = await last_summary(env)
    assert "<transcript>" in fake_provider.model_requests[-1].body["messages"][-1].__str__()
    assert "shared an image (image/png)" in summary
    assert "“contract.pdf”" in summary and "“harbour.txt”" in summary
    assert "The user said: Which crates matter?" in summary
    assert no_file_bytes(summary)


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_the_chat_resent_for_its_summary_gets_one_naming_its_files(env, fake_provider,
                                                                        model):
    for blocks in FILES:
        assert await env.runner.send(env.sid, blocks, model_ref=model) is not None
    for n in range(4):  # enough words after the files for a summary to make it smaller
        await env.send(f"And the tar, part {n}? " + "tar barrels pitch " * 300, model=model)

    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=model)

    assert result.compacted, result
    asked = fake_provider.model_requests[-1].body
    assert SUMMARY_ASK in str(asked["messages"][-1]) and "<transcript>" not in str(asked)
    summary = await last_summary(env)
    assert "shared an image (image/png)" in summary
    assert "“contract.pdf”" in summary
    assert "“harbour.txt”, which begins: Harbour inventory: forty crates of saffron" in summary
    assert no_file_bytes(summary)


async def test_a_photo_counts_as_an_image_not_as_its_base64(env, fake_provider):
    """A 1 MB photo is about 1,600 tokens to the real APIs (they count pixels, scaled
    down), not the 350,000 its base64 would be: a chat holding one goes on."""
    import random

    from PIL import Image

    from tests.fakes.cache import IMAGE_TOKENS_MAX, count_anthropic_tokens

    rng = random.Random(7)
    photo = Image.frombytes("RGB", (640, 480), bytes(rng.getrandbits(8)
                                                     for _ in range(640 * 480 * 3)))
    buf = __import__("io").BytesIO()
    photo.save(buf, "PNG")
    data = base64.b64encode(buf.getvalue()).decode()
    assert len(data) > 1_000_000
    assert await env.runner.send(env.sid, [TextBlock("My cat"), ImageBlock("image/png", data)],
                                 model_ref=SONNET) is not None
    assert await env.send("What colour is it?") is not None
    body = fake_provider.model_requests[-1].body
    assert IMAGE_TOKENS_MAX == 1_600
    assert count_anthropic_tokens(body) < 1_600 + 2_000  # the photo, and the words
