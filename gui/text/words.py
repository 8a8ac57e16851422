"""The words the window shows for its things and actions: one name for each.

A command's name is its label in :data:`parley.gui.commands.actions.ACTIONS`, and every
surface that names it — the menus, the command palette, the shortcut help, Settings →
Keyboard, the buttons over a message, tooltips, the sidebar's menus, the README — says
exactly that (a context menu may drop the object its row already is: "Rename…" on a
chat). :data:`GLOSSARY` lists the other words for the same things that the window does
*not* use, so a test (tests/gui/test_glossary.py) can walk every surface and fail on one.

Keys are written as the keyboard prints them: the main key is "Enter" (Qt's portable
name for it is "Return"; the keypad's is "Enter") everywhere but macOS, whose keyboards
say "return" and where Qt writes its own symbols (:func:`key_name`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass

#: The name the main Enter key is shown by (Qt calls it "Return").
ENTER = "Enter"


@dataclass(frozen=True, slots=True)
class Word:
    """One thing the window names, and the names it does not give it.

    Attributes:
        use: what the window says ("Fork from here").
        not_: regular expressions (case-insensitive) of the words it never says for it.
        means: what the word stands for, for the person reading this list.
    """

    use: str
    not_: tuple[str, ...]
    means: str


GLOSSARY: tuple[Word, ...] = (
    Word("chat", (r"\bsessions?\b(?!\.db|-)",),
         "one conversation in the list (a session in core/ and sessions.db)"),
    Word("Fork from here", (r"\bfork here\b", r"\bbranch (from )?here\b"),
         "a new chat copying this one up to a message"),
    Word("Regenerate", (r"\bregenerate (reply|response|answer)\b",),
         "another answer to the last message, the current one kept as a branch (‹ ›)"),
    Word("Archive chat / Unarchive chat", (r"\barchive and close\b", r"\barchive or unarchive\b",
                                           r"\bhide (the current |this )?chat\b"),
         "take a chat off the list without deleting it (Ctrl+W for the open one), or "
         "put it back"),
    Word("Continue", (r"\bresume\b", r"\bcontinue the reply\b"),
         "ask the model to go on with a reply that stopped, was cut off or hit its "
         "length limit"),
    Word("Import conversation…", (r"\bimport a conversation\b",),
         "bring chats in from a file"),
    Word("Settings", (r"\bpreferences\b", r"\boptions\b"), "Parley's settings window"),
    Word("Stop", (r"\babort\b",), "end the reply being written, keeping what arrived"),
    Word("message box", (r"\bcomposer\b", r"\binput box\b"), "where a message is typed"),
    Word(ENTER, (r"(?-i:\bReturn\b)",),
         "the key that sends (Qt's Return)"),
    Word("the model's display name", (r"\b(anthropic|openai|compatible):[a-z0-9]",),
         "a model as the window names it (\"Claude Sonnet 4.6\"), never its "
         "provider:model reference"),
)

def key_name(native: str) -> str:
    """A key combination as the window shows it: Qt's native text with the main Enter
    key called "Enter" ("Shift+Return" → "Shift+Enter"); unchanged on macOS."""
    if sys.platform == "darwin":
        return native
    return "+".join(ENTER if part == "Return" else part for part in native.split("+"))


def keys_shown(names: Iterable[str]) -> list[str]:
    """``names`` (as :func:`key_name` gives them) without repeats: Return and the keypad's
    Enter both read "Enter", shown once."""
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def composer_hint(send: str, newline: str, stop: str) -> str:
    """The line under the message box, from the keys in force ("" for a command with
    none): "Enter to send  ·  Shift+Enter for a new line  ·  Esc to stop"."""
    parts = [f"{send} to send" if send else "",
             f"{newline} for a new line" if newline else "",
             f"{stop} to stop" if stop else ""]
    return "  ·  ".join(p for p in parts if p)
