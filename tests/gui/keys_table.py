"""The keyboard shortcuts as the README's Markdown tables, made from the same declared keys
the window's shortcut help lists (the README tests compare them)."""

from __future__ import annotations

from parley.gui.commands.actions import CONTEXTS
from parley.gui.commands.keymap import Keymap
from parley.gui.commands.shortcut_help import HEADINGS
from parley.gui.text.words import key_name, keys_shown


def markdown_table(keymap: Keymap | None = None) -> str:
    """The shortcuts as a Markdown table (for the README), grouped like the help.

    Args:
        keymap: the keys to list (default: the declared defaults).

    Returns:
        Markdown text: one ``| Command | Keys |`` table per context, with a heading line.
    """
    keymap = keymap or Keymap()
    parts: list[str] = []
    for context in CONTEXTS:
        rows = [f"| {a.label} | {' / '.join(f'`{k}`' for k in written(keymap.keys(a.id)))} |"
                for a in keymap.actions if a.context == context and keymap.keys(a.id)]
        parts.append(f"**{HEADINGS[context].split(' (')[0]}**\n\n| Command | Keys |\n|---|---|\n"
                     + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def written(keys: tuple[str, ...]) -> list[str]:
    """Portable key texts as the README writes them (the main Enter key is "Enter")."""
    return keys_shown(key_name(k) for k in keys)
