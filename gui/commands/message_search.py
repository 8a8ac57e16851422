"""One message search for every entry point (the search popup, the command palette).

It owns the path from a query to an opened message:

* **asking** — :class:`MessageSearch` runs ``Store.search`` (on the store's own
  thread: ``AsyncStore``) once typing pauses for :data:`DEBOUNCE_MS`; a newer
  query cancels the older one (still queued: never run; running: its answer
  dropped), so fast typing costs one query per pause;
* **results** — :class:`Found`, one hit as both entry points show it: the chat's
  title, the snippet with its matches marked, the fork hint and the branch label
  of a message that is not on its chat's path shown (an earlier edit or answer);
* **opening** — :func:`open_found`: switch to the chat, show the hit's branch,
  scroll to the message with its match highlighted, and focus the transcript.

Widgets stay with their entry point (``parley.gui.dialogs.search``,
``parley.gui.commands.palette``); this module uses Qt only for the debounce timer.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt, QTimer

from parley.core.errors import ParleyError
from parley.core.store.models import MATCH_END, MATCH_START, SearchHit
from parley.core.visible import strip_invisible

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.chat.controller import ChatController
    from parley.gui.startup.state import StartupView
    from parley.gui.transcript import TranscriptView

DEBOUNCE_MS = 120
LIMIT = 50
BRANCH_LABEL = "another branch"
_MARK = re.compile(f"{MATCH_START}(.*?){MATCH_END}", re.DOTALL)

#: ``(query, session_id=…, space_id=…, limit=…)`` → hits: ``Store.search`` as a window runs it.
Search = Callable[..., Awaitable[list[SearchHit]]]
Spawn = Callable[..., "asyncio.Task[Any]"]


def marked_runs(snippet: str) -> list[tuple[str, bool]]:
    """A snippet cut into ``(text, matched)`` runs at its ``\\x02…\\x03`` marks."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in _MARK.finditer(snippet):
        out += [(snippet[pos:m.start()], False), (m.group(1), True)]
        pos = m.end()
    out.append((unmarked(snippet[pos:]), False))
    return [(text, matched) for text, matched in out if text]


def first_match(snippet: str) -> str | None:
    """The text of a snippet's first marked match."""
    return next((t.strip() or None for t, matched in marked_runs(snippet) if matched), None)


def matched_words(snippet: str, query: str = "") -> str | None:
    """Every word to highlight in a message found (what the transcript marks: each
    word of it, case-insensitive), or None when there is none.

    The snippet's marked matches come first, as the message holds them (a prefix
    match marks the whole word); then the query's own words, for a match outside
    the ~160 characters of the snippet (quotes and words under 3 characters left
    out: the transcript marks substrings). A word held in one before it (the
    prefix ``alhambr`` after ``Alhambra``, case-insensitive) is left out.
    ``"x \x02second\x03 \x02Beta\x03"`` with the query ``second beta`` gives
    ``"second Beta"``.
    """
    words = [w for t, matched in marked_runs(snippet) if matched for w in t.split()]
    words += [w for w in query.replace('"', " ").split() if len(w) >= 3]  # "a": every a
    out: list[str] = []
    for word in words:
        if not any(word.casefold() in had.casefold() for had in out):  # a prefix typed
            out.append(word)
    return " ".join(out) or None


def unmarked(snippet: str) -> str:
    """A snippet without its match markers."""
    return snippet.replace(MATCH_START, "").replace(MATCH_END, "")


def author_of(hit: SearchHit, name_model: Callable[[str], str]) -> str:
    """Whose words a hit shows: "You", the model's name ("Claude Haiku 4.5"), with
    "(thinking)" or "(tool call)" when the match is there, "Tool result", "Summary";
    "" for a title match. Two hits of one chat (a message and the reply quoting it)
    are told apart by it (trial 16)."""
    if hit.turn_id is None:
        return ""
    if hit.part == "tool_result":
        return "Tool result"
    if hit.part == "compact_summary":
        return "Summary"
    if hit.role == "user":
        return "You"
    who = name_model(hit.model) if hit.model else "Reply"
    return who + {"thinking": " (thinking)", "tool_use": " (tool call)"}.get(hit.part, "")


def _model_id(ref: str) -> str:
    return ref.split(":", 1)[-1]


@dataclass(frozen=True, slots=True)
class Found:
    """One search hit as the entry points show it (``hit`` is the store's own;
    ``query`` what was searched, stripped; ``author`` whose words: :func:`author_of`)."""

    hit: SearchHit
    query: str = ""
    author: str = ""

    @property
    def session_id(self) -> str:
        return self.hit.session_id

    @property
    def turn_id(self) -> str | None:
        """The message found; None when the chat's title matched."""
        return self.hit.turn_id

    @property
    def title(self) -> str:
        """The chat's title as shown (invisible characters left out; "New chat")."""
        return strip_invisible(self.hit.session_title or "") or "New chat"

    @property
    def snippet(self) -> str:
        """About 160 characters around the match, matches in ``\\x02…\\x03``."""
        return strip_invisible(self.hit.snippet)

    @property
    def highlight(self) -> str | None:
        """The words to mark in the opened message, space-separated (every matched
        word of the query: :func:`matched_words`); None for a title match."""
        if self.hit.turn_id is None:
            return None
        return matched_words(self.hit.snippet, self.query)

    def notes(self) -> list[str]:
        """The quiet labels beside the title: :data:`BRANCH_LABEL` for a message off its
        chat's path shown, "also in 3 forks" for a message forks copied."""
        n = self.hit.fork_copies
        return ([BRANCH_LABEL] if self.hit.off_path else []) + \
            ([f"also in {n} fork{'s' if n > 1 else ''}"] if n > 0 else [])

    def spoken(self) -> str:
        """What a screen reader says: "Trip (another branch): You: …the castles…"."""
        notes = ", ".join(self.notes())
        who = f"{self.author}: " if self.author else ""
        return f"{self.title}{f' ({notes})' if notes else ''}: {who}{unmarked(self.snippet)}"


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to one query: its results, best first, or why there are none.

    Attributes:
        query: the query as typed (stripped).
        found: the results ([] for an empty query, none found, or a problem).
        problem: the store's reason when it could not search the query ('' if none).
    """

    query: str
    found: list[Found]
    problem: str = ""


class MessageSearch:
    """Asks the store as typing goes on: one query per pause, stale ones cancelled.

    Args:
        parent: owns the debounce timer (the entry point's widget).
        search: ``Store.search``-like coroutine function (:func:`window_search`).
        spawn: starts a coroutine and returns its task (the window's ``TaskSet.spawn``).
        show: called with each :class:`Answer` to the latest query, on the GUI thread.
        limit: at most this many hits.
        name_model: a model's display name from its ``provider:model`` (the window's
            :func:`model_names`); the model id when not given.
    """

    def __init__(self, parent: QObject, search: Search, spawn: Spawn,
                 show: Callable[[Answer], None], *, limit: int = LIMIT,
                 name_model: Callable[[str], str] = _model_id) -> None:
        self._search, self._spawn, self._show, self.limit = search, spawn, show, limit
        self._name_model = name_model
        self._timer = QTimer(parent)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
        self._query = ""
        self._scope: dict[str, str | None] = {}
        self._task: asyncio.Task[Any] | None = None
        self.asked = 0  # the number of the latest query
        self.answered = 0  # the number of the query whose answer was shown last

    @property
    def settled(self) -> bool:
        """True when the answer shown is the latest query's (nothing waits or runs)."""
        return self.answered == self.asked and not self._timer.isActive()

    @property
    def waiting(self) -> bool:
        """True while a query waits for typing to pause."""
        return self._timer.isActive()

    def ask(self, query: str, *, session_id: str | None = None,
            space_id: str | None = None) -> None:
        """Search ``query`` once typing pauses; an older query still waiting or running
        is cancelled."""
        self.cancel()
        self.asked += 1
        self._query = query
        self._scope = {"session_id": session_id, "space_id": space_id}
        self._timer.start()

    def cancel(self) -> None:
        """Drop the query waiting or running (its answer is never shown)."""
        self._timer.stop()
        if self._task is not None:
            self._task.cancel()  # queued on the store's thread: never run
            self._task = None

    async def now(self) -> Answer:
        """Search the latest query at once (Enter before its answer came) and show it."""
        self.cancel()
        return await self._answer(self.asked)

    def _start(self) -> None:
        self._task = self._spawn(self._answer(self.asked), name="message-search")

    async def _answer(self, asked: int) -> Answer:
        query = self._query.strip()
        answer = Answer(query, [])
        if query:
            try:
                hits = await self._search(query, limit=self.limit, **self._scope)
                answer = Answer(query, [Found(h, query, author_of(h, self._name_model))
                                        for h in hits])
            except ParleyError as exc:  # InvalidSearchQuery, store errors: said in words
                answer = Answer(query, [], exc.message)
        if asked == self.asked:
            self.answered = asked
            self._task = None
            self._show(answer)
        return answer


class SearchWindow(Protocol):
    """What a window's search reads (``parley.gui.window.state.WindowState``): start-up
    (the store opened), the open chat (the chats being deleted) and the store."""

    @property
    def startup(self) -> StartupView: ...

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def store(self) -> AsyncStore | None: ...


class OpenWindow(Protocol):
    """What opening a hit uses of the window (``WindowState``): the open chat, the
    transcript (focused then) and the tasks it runs in."""

    @property
    def chat(self) -> ChatController | None: ...

    @property
    def transcript(self) -> TranscriptView | None: ...

    @property
    def tasks(self) -> TaskSet: ...


def model_names(window: object) -> Callable[[str], str]:
    """``window``'s names of models (its model picker's ``label_of``: "Claude Haiku 4.5"),
    read when a hit is shown; the model id when it has no picker."""

    def name(ref: str) -> str:
        picker = getattr(window, "model_picker", None)
        return str(picker.label_of(ref)) if picker is not None else _model_id(ref)

    return name


def window_search(window: SearchWindow) -> Search:
    """``window``'s store search: it waits for the store to open (a search typed while
    Parley starts), and leaves out the chats whose delete can still be undone (by the
    store, so a message they hold still shows in a fork that copied it)."""

    async def search(query: str, **kwargs: Any) -> list[SearchHit]:
        startup = getattr(window, "startup", None)  # the window's start-up part
        if startup is not None:
            await startup.store_opened.wait()
        chat = getattr(window, "chat", None)
        hidden: Collection[str] = set(chat.organizer.deleting) if chat is not None else ()
        if hidden:
            kwargs["exclude_session_ids"] = sorted(hidden)
        store = window.store
        if store is None:  # closed meanwhile (a damaged file: the recovery page shows)
            return []
        hits: list[SearchHit] = await store.search(query, **kwargs)
        return [h for h in hits if h.session_id not in hidden]

    return search


class _Path(Protocol):
    def holds(self, turn_id: str | None) -> bool: ...


class Opener(Protocol):
    """What opening a hit uses of the chat controller (``ChatController``)."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def state(self) -> _Path: ...

    def open_at(self, session_id: str, turn_id: str | None, highlight: str | None) -> None: ...


class _Focusable(Protocol):
    def setFocus(self, reason: Qt.FocusReason) -> None: ...  # noqa: N802


async def open_found(chat: Opener, transcript: _Focusable, found: Found,
                     timeout_s: float = 5.0) -> bool:
    """Open a hit: its chat, on the branch through the message (``ChatController.open_at``,
    which switches the path shown when the message is off it), scrolled to the message
    with its match highlighted; then the transcript takes the focus. A title hit opens
    the chat.

    Returns:
        False when the message was not shown within ``timeout_s`` seconds (the chat
        could not be read, or another was opened meanwhile).
    """
    chat.open_at(found.session_id, found.turn_id, found.highlight)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while chat.session_id != found.session_id or \
            (found.turn_id is not None and not chat.state.holds(found.turn_id)):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    await asyncio.sleep(0)  # let the chat finish showing (draft, focus) first
    transcript.setFocus(Qt.FocusReason.OtherFocusReason)
    return True


def spawn_open(window: OpenWindow, found: Found) -> None:
    """Open ``found`` in ``window`` (:func:`open_found` as one of its tasks)."""
    if window.chat is not None and window.transcript is not None:
        window.tasks.spawn(open_found(window.chat, window.transcript, found),
                           name="open-search-hit")

