"""The README's links lead somewhere: every ``](#anchor)`` names a heading as GitHub
anchors it, and every relative ``](path)`` names a file or folder of the repository.

GitHub's anchors: the heading's text without Markdown marks, lower-cased, every character
that is not a letter, digit, space, ``-`` or ``_`` dropped, spaces made ``-``; a second
heading with the same anchor gets ``-1``, a third ``-2``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _without_code(text: str) -> str:
    """``text`` with fenced code blocks blanked (a ``# comment`` there is no heading)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the Markdown headings of ``text``.

    Args:
        text: Markdown.

    Returns:
        Every heading's anchor, without the ``#``.
    """
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in re.finditer(r"^#{1,6} +(.+?) *#*$", _without_code(text), flags=re.M):
        words = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))
        slug = re.sub(r"[^\w\- ]", "", words.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_anchors_follow_githubs_rules() -> None:
    """The checker itself, on headings like the README's."""
    text = ("# Parley\n## Backups, and restoring one\n### A damaged sessions.db\n"
            "## When a save fails: disk full, file locked\n## Notes\n## Notes\n"
            "```sh\n# not a heading\n```\n")
    assert anchors(text) == {"parley", "backups-and-restoring-one", "a-damaged-sessionsdb",
                             "when-a-save-fails-disk-full-file-locked", "notes", "notes-1"}


def test_every_link_in_the_readme_leads_somewhere() -> None:
    text = README.read_text(encoding="utf-8")
    have = anchors(text)
    targets = _LINK.findall(_without_code(text))
    assert any(t.startswith("#") for t in targets)  # the table of contents at least
    missing_anchors = [t for t in targets if t.startswith("#") and t[1:] not in have]
    missing_files = [t for t in targets if not t.startswith(("#", "http://", "https://"))
                     and not (ROOT / t.split("#")[0]).exists()]
    assert missing_anchors == [] and missing_files == []
