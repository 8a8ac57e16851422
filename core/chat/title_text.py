"""Titles as plain text: markdown taken out, and answers that only echo the request caught.

A title shows in the sidebar, the header and the window title as plain text,
so whatever markup a model (or the first line of a message) carries is
removed: emphasis (``**``, ``*``, ``__``, ``_``, ``~~``), inline code
backticks, heading / quote / list marks, links and images (their text is
kept, the address dropped) and HTML-like tags.
"""

from __future__ import annotations

import re

#: A fork's mark at the end of its automatic title: " (fork)", " (fork 2)" … (what tells
#: a chat's forks apart: ``parley.core.store.forks.fork_title``; kept when a title is
#: elided: ``parley.gui.text.names.elided_title``).
FORK_MARK = re.compile(r" \(fork(?: \d+)?\)\Z")

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_EMPHASIS = re.compile(r"(\*\*|__|~~)(.+?)\1")
_STAR = re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])")
_LEAD = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)+")
_STRAY = re.compile(r"\*\*|__|~~|`")
_WORD = re.compile(r"\w+", re.UNICODE)

#: An answer repeating at least this many of the request's first words (and stopping
#: before its end) is an echo, not a title.
ECHO_MIN_WORDS = 4


def plain_text(line: str) -> str:
    """Return one line of text with markdown and tags taken out.

    Args:
        line: a line that may hold markdown (``**bold**``, ``*it*``, `` `code` ``,
            ``# heading``, ``[text](url)``, ``<b>tags</b>``).

    Returns:
        The words as a reader sees them, spaces collapsed (may be ``""``).
        ``"Here is **bold**, *italic*, `code` and [a link](http://x)"`` gives
        ``"Here is bold, italic, code and a link"``.
    """
    text = _IMAGE.sub(r"\1", line)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TAG.sub("", text)
    text = _LEAD.sub("", text)
    for _ in range(3):  # nested emphasis: ***x***, **_x_**
        text = _EMPHASIS.sub(r"\2", text)
        text = _STAR.sub(r"\1", text)
        text = _UNDERSCORE.sub(r"\1", text)
    text = _STRAY.sub("", text)
    return " ".join(text.split())


def echoes_request(title: str, request: str) -> bool:
    """True when ``title`` is only the request's first words, cut before its end.

    Args:
        title: a cleaned title.
        request: the first user message (the title model read its start).

    Returns:
        True when the title has at least :data:`ECHO_MIN_WORDS` words, they are
        the first words of ``request`` word for word (case and punctuation
        aside) and the request goes on after them: a model that copied the
        request's start instead of naming its subject. A short request named by
        its own words ("Rust lifetimes" for "Rust lifetimes") is not an echo.
    """
    words = [w.lower() for w in _WORD.findall(title)]
    asked = [w.lower() for w in _WORD.findall(plain_text(request))]
    return len(words) >= ECHO_MIN_WORDS and len(asked) > len(words) and asked[: len(words)] == words
