"""What the command palette lists: fuzzy matching, and its rows (commands, chats, messages).

:func:`fuzzy_match` is a small subsequence matcher, as in the command
palettes people know: every character of each typed word must appear in
order; the whole label, its start, word starts and contiguous runs score
higher. (A library such as rapidfuzz scores edit distance, not this
"type a few letters of the words" matching.) The rows are plain data
(:class:`Entry`); ``parley.gui.commands.palette`` shows and runs them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from parley.core.store.models import MATCH_START
from parley.gui.commands.actions import CommandsWindow, available, native
from parley.gui.commands.keymap import Keymap
from parley.gui.commands.message_search import Found, marked_runs

if TYPE_CHECKING:
    from parley.gui.sidebar import Sidebar

Kind = Literal["action", "session", "message"]
MAX_SESSIONS = 8
RECENT_SESSIONS = 5
MAX_MESSAGES = 8


# -- matching ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Match:
    """How well a query matches a text: ``score`` (higher is better) and the
    positions of the matched characters (to show them in bold)."""

    score: float
    marks: tuple[int, ...] = ()


def _word_start(text: str, i: int) -> bool:
    return i == 0 or not text[i - 1].isalnum()


def _subsequence(token: str, text: str, prefer_starts: bool) -> list[int] | None:
    out: list[int] = []
    j = 0
    for ch in token:
        k = text.find(ch, j)
        if k < 0:
            return None
        if prefer_starts and not (out and k == out[-1] + 1):
            w = next((i for i in range(k, len(text)) if text[i] == ch and _word_start(text, i)),
                     -1)
            k = w if w >= 0 else k
        out.append(k)
        j = k + 1
    return out


def _match_token(token: str, text: str) -> Match | None:
    i = text.find(token)
    if i >= 0:
        score = 3.0 * len(token) + (6 if i == 0 else 4 if _word_start(text, i) else 0)
        return Match(score, tuple(range(i, i + len(token))))
    marks = _subsequence(token, text, True) or _subsequence(token, text, False)
    if marks is None:
        return None
    score = 0.0
    for n, k in enumerate(marks):
        score += 2.0 if n and k == marks[n - 1] + 1 else 1.5 if _word_start(text, k) else 0.5
    score -= 0.05 * (marks[-1] - marks[0] + 1 - len(token))
    return Match(score, tuple(marks))


def fuzzy_match(query: str, text: str) -> Match | None:
    """Match each word of ``query`` against ``text`` (case-insensitive).

    Returns:
        None when some word's characters do not all appear in order in
        ``text``; else a :class:`Match`. An exact match (whole text) scores
        highest, then a prefix, a word start, a substring, a subsequence;
        shorter texts win ties. An empty query matches with score 0.
    """
    words = query.casefold().split()
    if not words:
        return Match(0.0)
    folded = text.casefold()
    total, marks = 0.0, set[int]()
    for word in words:
        m = _match_token(word, folded)
        if m is None:
            return None
        total += m.score
        marks.update(m.marks)
    if " ".join(words) == folded.strip(" …."):
        total += 20
    return Match(total - 0.01 * len(text), tuple(sorted(marks)))


def keyword_match(query: str, keywords: str) -> Match | None:
    """Match ``query`` against a command's other words (``Action.keywords``): each typed
    word must start one of them ("pref" finds "preferences"). Not letters scattered over
    the whole list: "durian" found "Import conversation…" through the "d" of "claude",
    the "u" of "webui", the "r" of "history"… Scores 0.6 of a label match."""
    words = query.casefold().split()
    known = keywords.casefold().split()
    if not words or not all(any(k.startswith(w) for k in known) for w in words):
        return None
    return Match(0.6 * sum(3.0 * len(w) + 4 for w in words))


# -- entries ----------------------------------------------------------------------------
@dataclass(slots=True)
class Entry:
    """One row of the palette.

    Attributes:
        kind: ``action``, ``session`` or ``message``.
        label: the main text (a message's snippet).
        detail: the right-hand text: a command's key, a chat's space, a
            message's chat.
        ref: action id, session id, or turn id.
        session_id: the chat of a session or message entry.
        score: match score (higher first).
        marks: positions in ``label`` shown in bold.
        found: the search result of a message entry (what opening it uses).
    """

    kind: Kind
    label: str
    detail: str
    ref: str
    session_id: str | None = None
    score: float = 0.0
    marks: tuple[int, ...] = field(default=())
    found: Found | None = None

    def spoken(self) -> str:
        kind = {"action": "command", "session": "chat", "message": "message"}[self.kind]
        return f"{self.label}, {kind}" + (f", {self.detail}" if self.detail else "")


class SidebarWindow(Protocol):
    """Where the palette's chats are listed: the window's sidebar (``WindowState``;
    made after the first paint, looked for with ``getattr`` until then)."""

    @property
    def sidebar(self) -> Sidebar: ...


def action_entries(window: CommandsWindow, query: str, keymap: Keymap) -> list[Entry]:
    """The commands ``window`` can run now that match ``query`` (all of them for "")."""
    out: list[Entry] = []
    for action in keymap.actions:
        if not action.palette or not available(action, window):
            continue
        m = fuzzy_match(query, action.label)
        if m is None and action.keywords:
            m = keyword_match(query, action.keywords)
        if m is None:
            continue
        keys = keymap.keys(action.id)
        out.append(Entry("action", action.label, native(keys[0]) if keys else "", action.id,
                         score=m.score, marks=m.marks))
    return out


def sidebar_sessions(window: SidebarWindow) -> list[tuple[str, str, str]]:
    """``(session id, title, space name)`` of the chats listed in the sidebar, in order."""
    model = getattr(getattr(window, "sidebar", None), "model", None)
    if model is None or not hasattr(model, "session_ids"):
        return []
    out = []
    for sid in model.session_ids():
        index = model.index_of(sid)
        parent = index.parent()
        while parent.isValid() and parent.parent().isValid():
            parent = parent.parent()  # a fork's space is its top-level ancestor
        out.append((sid, str(index.data() or "New chat"), str(parent.data() or "")))
    return out


def session_entries(window: SidebarWindow, query: str) -> list[Entry]:
    """Chats of the sidebar whose title matches ``query`` (the recent ones for "")."""
    out: list[Entry] = []
    for sid, title, space in sidebar_sessions(window):
        m = fuzzy_match(query, title)
        if m is not None:
            out.append(Entry("session", title, f"Chat · {space}" if space else "Chat", sid, sid,
                             m.score, m.marks))
    if not query.strip():
        return out[:RECENT_SESSIONS]
    return sorted(out, key=lambda e: -e.score)[:MAX_SESSIONS]


def hit_entries(found: Iterable[Found], known: set[str]) -> list[Entry]:
    """Palette rows for message search results: title hits become chats (unless already
    listed in ``known``), message hits become messages ("in “Trip” · another branch")."""
    out: list[Entry] = []
    for f in found:
        if f.turn_id is None:
            if f.session_id not in known:
                known.add(f.session_id)
                out.append(Entry("session", f.title, "Chat", f.session_id, f.session_id))
        elif sum(e.kind == "message" for e in out) < MAX_MESSAGES:
            detail = " · ".join([*([f.author] if f.author else []), f"in “{f.title}”",
                                 *f.notes()])
            out.append(Entry("message", f.snippet, detail, f.turn_id, f.session_id, found=f))
    return out


def segments(entry: Entry) -> list[tuple[str, bool]]:
    """The label cut into (text, bold) runs: fuzzy marks or the snippet's match markers."""
    text = entry.label
    if MATCH_START in text:
        return marked_runs(text)
    marks = set(entry.marks)
    runs: list[tuple[str, bool]] = []
    for i, ch in enumerate(text):
        marked = i in marks
        if runs and runs[-1][1] == marked:
            runs[-1] = (runs[-1][0] + ch, marked)
        else:
            runs.append((ch, marked))
    return runs

