"""The most text Parley takes in one message, draft or imported turn.

No model can read a message longer than its context window, so a longer one
can never be sent; storing it only makes every later start and layout slower
(a 50 MB paste was kept as a 53 MB draft inside sessions.db). The limit is
taken from the largest window of any model the catalog knows
(``parley.core.providers.catalog``: 1,047,576 tokens, GPT-4.1) at
:data:`CHARS_PER_TOKEN` characters per token — the estimate ``parley.core.context.tokens``
makes for English text — so about 4.2 million characters (~4 MB of ASCII).
A text that long can be sent to at least one model; anything over it is
refused before it is stored:

* a message: :func:`check_blocks` (``ChatRunner.check_message`` calls it for
  any model, known to the catalog or not) raises :class:`TextTooLong`;
* a draft: not written (``parley.gui.composer.drafts``), and the composer refuses a paste
  that would pass it;
* an imported conversation: refused before anything is written
  (``parley.core.importing.conversation``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from parley.core.errors import ParleyError

if TYPE_CHECKING:  # the message model is not needed to build the window (start-up)
    from parley.core.content import Block

#: Characters per token used for the limit (``parley.core.context.tokens`` estimates ASCII text so).
CHARS_PER_TOKEN = 4


@lru_cache(maxsize=1)
def largest_window_tokens() -> int:
    """The largest context window (tokens) of any model in the catalog."""
    from parley.core.providers.catalog import known_models

    return max(m.context_window for kind in ("anthropic", "openai")
               for m in known_models(kind))


def max_text_chars() -> int:
    """The most characters of text one message (or draft, or imported turn) may hold."""
    return largest_window_tokens() * CHARS_PER_TOKEN


def megabytes(chars: int) -> str:
    """``chars`` as a size a person reads ("4.2 MB"; one byte per character)."""
    return f"{chars / 1_000_000:,.1f} MB"


class TextTooLong(ParleyError):
    """A text longer than any model can read (:func:`max_text_chars`).

    Attributes:
        chars: its length in characters.
        limit: the limit in characters.
    """

    def __init__(self, what: str, chars: int, limit: int, kept: str) -> None:
        super().__init__(
            f"{what} is {chars:,} characters long ({megabytes(chars)}): more than any model "
            f"can read (the largest takes about {limit:,} characters, "
            f"{largest_window_tokens():,} tokens). {kept}"
        )
        self.chars = chars
        self.limit = limit


def split_advice() -> str:
    """What to do with a text longer than any model reads: send the part needed, or the
    text in parts. Attaching it whole is no way: an attached text file is read up to
    ``parley.core.attachments.files.TEXT_MAX_BYTES`` (512 KB), far less than this limit."""
    from parley.core.attachments.files import TEXT_MAX_BYTES

    return ("Send the part you need, or split the text and send it in parts, each pasted "
            f"or attached as a text file of up to {TEXT_MAX_BYTES // 1024:,} KB.")


def paste_refused(chars: int) -> TextTooLong:
    """The refusal of a paste that would make the message ``chars`` characters long."""
    return TextTooLong("With this paste, the message", chars, max_text_chars(),
                       f"The paste was not taken (nor kept as a draft). {split_advice()}")


def text_chars(blocks: Iterable[Block]) -> int:
    """Characters of the text blocks among ``blocks``."""
    from parley.core.content import TextBlock

    return sum(len(b.text) for b in blocks if isinstance(b, TextBlock))


def check_blocks(blocks: Iterable[Block]) -> None:
    """Refuse a message whose text is longer than any model can read.

    Raises:
        TextTooLong: nothing was saved or sent (the message stays in the box).
    """
    chars, limit = text_chars(blocks), max_text_chars()
    if chars > limit:
        raise TextTooLong(
            "This message", chars, limit,
            f"Nothing was saved or sent; it stays in the box. {split_advice()}")
