"""Text a person reads where a hidden character could mislead: invisible characters
shown escaped, or left out.

A format character (Unicode category ``Cf``) has no glyph of its own but changes what
is around it: the bidirectional controls U+202A–202E and U+2066–2069 reorder text, so
a tool called ``run\\u202Etxt.exe`` reads as ``runexe.txt``; zero-width characters
(U+200B–200F, U+FEFF, U+2060…) hide inside words; tag characters (U+E0000–E007F) carry
text nobody sees. Line and paragraph separators (U+2028, U+2029) count too.

* :func:`escape_invisible` — where a decision rests on the exact text (an MCP approval
  dialog: tool, server, arguments): each such character is written out as ``<U+202E>``.
* :func:`strip_invisible` — where a name only tells things apart (titles in the
  sidebar, the palette, search results, the window title): they are left out, but a
  zero-width joiner between two symbols is kept (it joins emoji such as 👩‍💻).
"""

from __future__ import annotations

import unicodedata

#: Invisible characters outside category ``Cf`` that are treated the same way.
_ALSO = frozenset("\u2028\u2029")
_ZWJ = "\u200d"
#: Categories on both sides of a zero-width joiner that joins a symbol sequence
#: (emoji, their skin-tone modifiers ``Sk`` and variation selector U+FE0F ``Mn``).
_JOINS = frozenset({"So", "Sk", "Mn"})


def is_invisible(ch: str) -> bool:
    """True for one character that shows nothing yet changes or hides text."""
    return ch in _ALSO or unicodedata.category(ch) == "Cf"


def escape_invisible(text: str) -> str:
    """``text`` with every invisible character written as ``<U+XXXX>`` (4–6 hex digits).

    Example: ``"a\\u202Eb"`` → ``"a<U+202E>b"``. ASCII text is returned as it is.
    """
    if text.isascii():
        return text
    return "".join(f"<U+{ord(c):04X}>" if is_invisible(c) else c for c in text)


def strip_invisible(text: str) -> str:
    """``text`` without its invisible characters (a zero-width joiner between two
    symbols kept). ASCII text is returned as it is."""
    if text.isascii():
        return text
    out: list[str] = []
    for i, c in enumerate(text):
        if not is_invisible(c) or c == _ZWJ and out and i + 1 < len(text) \
                and unicodedata.category(out[-1]) in _JOINS \
                and unicodedata.category(text[i + 1]) == "So":
            out.append(c)
    return "".join(out)
