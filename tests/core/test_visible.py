"""Invisible characters: escaped for approval dialogs, left out of titles in lists."""

from __future__ import annotations

import pytest

from parley.core.visible import escape_invisible, is_invisible, strip_invisible

HIDDEN = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
          "\u2069", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\ufeff", "\u2060",
          "\u00ad", "\u061c", "\U000e0041", "\u2028", "\u2029"]


@pytest.mark.parametrize("ch", HIDDEN)
def test_each_hidden_character_is_escaped_and_stripped(ch):
    assert is_invisible(ch)
    text = f"run{ch}txt.exe"
    assert escape_invisible(text) == f"run<U+{ord(ch):04X}>txt.exe"
    assert strip_invisible(text) == "runtxt.exe"


def test_a_right_to_left_override_cannot_disguise_a_name():
    spoof = "read_\u202efdp.exe"
    assert escape_invisible(spoof) == "read_<U+202E>fdp.exe"
    assert strip_invisible(spoof) == "read_fdp.exe"


def test_visible_text_is_kept_as_it_is():
    for text in ("plain ascii", "Grüße — ünïcödé", "日本語のタイトル", "עברית", "emoji 🎉",
                 "a\tb\nc"):
        assert escape_invisible(text) == text
        assert strip_invisible(text) == text


def test_a_joiner_inside_an_emoji_is_kept_in_titles():
    coder = "\U0001f469\u200d\U0001f4bb"  # woman technologist
    family = "\U0001f468\U0001f3fd\u200d\U0001f469\u200d\U0001f467"
    assert strip_invisible(f"{coder} notes") == f"{coder} notes"
    assert strip_invisible(family) == family
    assert strip_invisible("a\u200db") == "ab"  # between letters it hides nothing useful
    assert escape_invisible(coder) == "\U0001f469<U+200D>\U0001f4bb"  # dialogs show all
