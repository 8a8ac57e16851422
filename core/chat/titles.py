"""Automatic session titles: a few words written by a cheap model after the first exchange.

Order of events: a run gives an untitled session a placeholder title from the first
line of the first user message (:func:`first_line_title`) as it starts; once the chat's
first reply completes, whatever started that run (a message, Retry, Regenerate,
Continue, a queued message; :func:`first_reply_titles`: no reply in the chat, on any
branch, completed before), :meth:`TitleService.on_first_exchange` asks a cheap model of
the same provider, in the background, for a better one and replaces the placeholder.

Rules:

* the title model is the setting ``chat.title_model`` when Parley declares it
  (``provider:model``, or a bare model id of the chat's provider), else the
  cheap sibling of the chat's model that its provider lists: the newest Haiku
  for Anthropic, the newest ``-mini`` for OpenAI, the same model for a local
  server or when the provider lists none (``parley.core.providers.cheap_models``);
* with ``chat.auto_title`` off, or when the call fails, returns nothing or
  only junk, the title is the first line of the first user message (no
  provider call when the setting is off);
* a title the user typed is never replaced (``Store.set_auto_title`` refuses,
  and no call is made when one is already set); a title that is not the
  placeholder of this session's first message (e.g. a fork's "X (fork)") is
  left alone too;
* an answer that is no title is refused (:func:`title_problem`): one that
  starts like a description of the chat ("The user's conversation is",
  "This conversation has been…", "Title of…"), one that answers the user
  instead ("I'm not sure what to say", "Sure", "Here is…"), one cut off mid-word (the
  model stopped at its output limit inside its first line, or the title was
  cut to :data:`MAX_TITLE_CHARS`), or one that copies the start of the reply
  ("The capital of France is Paris"), or one that only repeats the request's
  first words ("How do I plan a"): small local models write these;
* titles are plain text: markdown is taken out of the model's answer and of
  the first-line placeholder (``parley.core.chat.title_text``);
* on a local (OpenAI-compatible) server the title request is a background
  one: it waits while a chat reply or summary of the same server is in flight
  and is sent again after one that called it off (``parley.core.providers.local_traffic``);
* the title request's tokens and cost count in the session's usage totals;
* nothing here raises to the caller: failures are logged and fall back.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.core.attachments.files import parse_text_file
from parley.core.chat.title_text import echoes_request, plain_text
from parley.core.content import DocumentBlock, ImageBlock, TextBlock, Turn, Usage
from parley.core.providers.base import ChatRequest, Stop, TextDelta, UsageUpdate
from parley.core.providers.cheap_models import summary_model_ref
from parley.core.providers.local_traffic import traffic_for
from parley.core.settings import Settings, UnknownSetting

if TYPE_CHECKING:
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

KEY_AUTO_TITLE = "chat.auto_title"
KEY_TITLE_MODEL = "chat.title_model"

#: At most this many words in a generated title.
MAX_TITLE_WORDS = 6
#: At most this many characters in any automatic title.
MAX_TITLE_CHARS = 60
#: How much of the first user message and of the reply the title model reads (characters).
PROMPT_USER_CHARS = 1_500
PROMPT_REPLY_CHARS = 600
#: Output limit of the title request (tokens); reasoning models get room to think a little.
TITLE_MAX_TOKENS = 40
REASONING_MAX_TOKENS = 2_048
#: Thinking budget for OpenAI reasoning models: maps to ``reasoning_effort="low"``.
REASONING_BUDGET = 1_024
#: The title request is abandoned after this long (seconds) and the placeholder kept.
TITLE_TIMEOUT_S = 30.0

TITLE_SYSTEM = (
    "You name chat conversations. Reply with a title of at most six words that says what "
    "the conversation is about. Reply with the title only: no quotes, no trailing period, "
    "no preamble. Use the language of the user's message."
)

TitleListener = Callable[[str, str], None]

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(title|titre|titel|título)\s*[:：\-]\s*", re.IGNORECASE)
_QUOTES = "\"'`“”‘’«»„"
#: Starts of an answer that describes the chat instead of naming it.
_META = re.compile(
    r"^(the user\b|the user['’]s\b|this conversation\b|the conversation\b|this chat\b"
    r"|the chat\b|title\b|conversation title\b|in this conversation\b)",
    re.IGNORECASE,
)
#: Starts of a chat answer (the model talking to the user) instead of a title.
_CHATTER = re.compile(
    r"^(i['’]m|i am|i['’]d|i['’]ll|i will|i can(not|['’]t)?|i don['’]t|i do not|i have"
    r"|sorry|as an ai|sure|certainly|of course|here['’]s|here is|okay|ok)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)
#: The end of a sentence followed by more words: a title is at most one sentence.
_SENTENCE_END = re.compile(r"[.?!。？！](?=\s+\S)")
#: A title copying this many words or more of the reply's start is refused (fewer can be a topic).
COPY_MIN_WORDS = 3


def first_line_title(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    """Return a title from the first non-empty line of ``text`` (≤ ``limit`` chars).

    Markdown is taken out (``parley.core.chat.title_text.plain_text``: emphasis, code
    marks, heading / quote / list marks, links keep their text); a longer line
    is cut and ends with "…". ``"New chat"`` when there is no text. The run
    loop uses it for the placeholder title it sets after the first exchange.
    """
    for line in text.splitlines():
        line = plain_text(line)
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return "New chat"


def clean_title(raw: str) -> str | None:
    """Make a model's answer a title: one line, ≤ 6 words, no quotes, no trailing period.

    Args:
        raw: the model's text (may hold ``<think>`` sections, a "Title:" prefix,
            markdown, quotes, several lines).

    Returns:
        The title (≤ :data:`MAX_TITLE_WORDS` words, ≤ :data:`MAX_TITLE_CHARS`
        characters), or None when nothing usable is left.
    """
    text = _THINK.sub("", raw)
    # the first line with words once markup is out: "<user_message>" alone is no line
    line = next((p for p in (plain_text(ln) for ln in text.splitlines()) if p.strip(" .…")), "")
    line = _PREFIX.sub("", line)
    line = line.strip(_QUOTES).strip()
    first = _SENTENCE_END.search(line)
    if first is not None and len(line[: first.start() + 1].split()) >= 2:
        line = line[: first.start() + 1]  # "What's the capital of France? A…": one sentence
    words = line.split()[:MAX_TITLE_WORDS]
    title = " ".join(w.strip(_QUOTES) for w in words).strip()
    title = title.rstrip(" .。:;,-").strip(_QUOTES).strip()
    if len(title) > MAX_TITLE_CHARS:
        title = title[: MAX_TITLE_CHARS - 1].rstrip() + "…"
    return title or None


def title_problem(
    title: str, raw: str, reply_text: str, stop_reason: str | None, request: str = ""
) -> str | None:
    """Why a cleaned title is no title, or None when it may be used.

    Args:
        title: :func:`clean_title`'s result.
        raw: the model's whole answer.
        reply_text: the first reply of the chat (the title model read its start).
        stop_reason: the title request's ``Stop`` reason (None when none came).
        request: the first user message (``""``: not checked for an echo).

    Returns:
        ``"meta"`` (it starts like a description of the chat: "The user…",
        "This conversation…", "The conversation…", "Title…"), ``"chatter"`` (it
        starts like an answer to the user: "I'm not sure…", "Sure", "Here is…",
        "Sorry"), ``"cut"`` (cut
        mid-word: shortened to :data:`MAX_TITLE_CHARS`, or the model hit its
        output limit within the words kept), ``"copy"`` (the first
        :data:`COPY_MIN_WORDS`-plus words of the reply, word for word),
        ``"echo"`` (only the request's first words, cut before its end:
        ``parley.core.chat.title_text.echoes_request``), or None.
    """
    if _META.match(title):
        return "meta"
    if _CHATTER.match(title):
        return "chatter"
    if title.endswith("…"):
        return "cut"
    if stop_reason == "max_tokens":
        answer = _WORD.findall(_PREFIX.sub("", _THINK.sub("", raw)))
        kept = _WORD.findall(title)
        if kept and answer and len(answer) <= len(kept) + 1 and kept[-1] == answer[-1]:
            return "cut"  # the title ends with the answer's last word, which the limit cut
    words = [w.lower() for w in _WORD.findall(title)]
    reply_words = [w.lower() for w in _WORD.findall(reply_text[: PROMPT_REPLY_CHARS])]
    if len(words) >= COPY_MIN_WORDS and reply_words[: len(words)] == words:
        return "copy"
    if request and echoes_request(title, request):
        return "echo"
    return None


def _typed_text(turn: Turn) -> bool:
    """True for a user turn someone wrote (text, image or document), not only tool results."""
    return turn.role == "user" and any(
        isinstance(b, TextBlock | ImageBlock | DocumentBlock) for b in turn.blocks
    )


def typed_text(turn: Turn) -> str:
    """What a message says to title it by: the text the person typed, without the text
    files attached to it (their "File: notes.txt" header made titles like "File notes
    txt"); the files' text when nothing was typed."""
    typed = "".join(
        b.text for b in turn.blocks if isinstance(b, TextBlock) and parse_text_file(b) is None
    )
    return typed if typed.strip() else turn.text()


def _first_exchange(turns: list[Turn]) -> tuple[str, str] | None:
    """(first user text, start of the first reply after it), or None without user text."""
    first = next((i for i, t in enumerate(turns) if t.role == "user" and t.text().strip()), None)
    if first is None:
        return None
    reply = next(
        (t.text() for t in turns[first + 1 :] if t.role == "assistant" and t.text().strip()), ""
    )
    return typed_text(turns[first]), reply


def _prompt(user_text: str, reply_text: str) -> str:
    user = user_text.strip()[:PROMPT_USER_CHARS]
    reply = reply_text.strip()[:PROMPT_REPLY_CHARS]
    parts = ["Write a title for this conversation.", "", "<user_message>", user, "</user_message>"]
    if reply:
        parts += ["<assistant_reply_start>", reply, "</assistant_reply_start>"]
    return "\n".join(parts)


async def _setting(store: AsyncStore, key: str, default: Any) -> Any:
    """A declared setting's value; ``default`` when Parley does not declare ``key``."""
    try:
        return await Settings.of(store).get(key)
    except UnknownSetting:
        return default


async def title_model_ref(hub: ProviderHub, store: AsyncStore, model_ref: str) -> str:
    """Return the ``provider:model`` that writes titles for a chat using ``model_ref``.

    Args:
        hub: the ``ProviderHub``.
        store: an ``AsyncStore`` (settings are read through it).
        model_ref: the chat's ``provider:model``.

    Returns:
        ``chat.title_model`` (when declared and set; a bare id means that model
        of the chat's provider), else the cheap sibling of the chat's model
        that the provider lists (``parley.core.providers.cheap_models.cheap_model_ref``).

    Raises:
        InvalidModelRef: ``model_ref`` is not ``provider:model``.
        UnknownProvider: its provider is not set up.
    """
    setting = await _setting(store, KEY_TITLE_MODEL, None)
    chosen = setting.strip() if isinstance(setting, str) and setting.strip() else None
    return await summary_model_ref(hub, model_ref, chosen, key=KEY_TITLE_MODEL)


async def _ask_model(hub: ProviderHub, ref: str, prompt: str) -> tuple[str, Usage, str | None]:
    """Stream one title request.

    Returns:
        Its text (thinking ignored), usage (cost included) and ``Stop`` reason
        (None when none came).
    """
    provider, model_id = hub.resolve(ref)
    reasoning = hub.model_info(ref).thinking == "effort"
    request = ChatRequest(
        model=model_id,
        turns=[Turn("user", [TextBlock(prompt)])],
        system=TITLE_SYSTEM,
        max_tokens=REASONING_MAX_TOKENS if reasoning else TITLE_MAX_TOKENS,
        thinking_budget=REASONING_BUDGET if reasoning else None,
        cache=False,
    )
    parts: list[str] = []
    usage = Usage()
    stop: str | None = None
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, UsageUpdate):
            usage = event.usage
        elif isinstance(event, Stop):
            stop = event.reason
    if not usage.cost_usd:
        usage = replace(usage, cost_usd=hub.model_info(ref).cost_usd(usage))
    return "".join(parts), usage, stop


async def generate_title(
    hub: ProviderHub, store: AsyncStore, session_id: str, *, model_ref: str
) -> str | None:
    """Title a session after its first exchange, and save the title as automatic.

    Args:
        hub: the ``ProviderHub`` (``resolve``, ``model_info``, ``configs``, ``config``).
        store: an ``AsyncStore``.
        session_id: the session whose first exchange just finished.
        model_ref: the ``provider:model`` the chat used (its provider writes the title).

    Returns:
        The title saved: generated by the title model (≤ 6 words, no quotes,
        no trailing period) or, when ``chat.auto_title`` is off or the model
        call fails, times out (:data:`TITLE_TIMEOUT_S`) or brings nothing
        usable, the first line of the first user message (≤ 60 characters).
        None when nothing was saved: the user titled the session (before or
        during the call), its title is not this session's placeholder (a
        fork's or an edit's), it has no user text, or the store failed.

    Raises:
        Nothing: every failure is logged (cancellation still propagates).
    """
    try:
        session = await store.get_session(session_id)
        if session.title_source == "user":
            return None
        exchange = _first_exchange(await store.get_turns(session_id))
        if exchange is None:
            return None
        user_text, reply_text = exchange
        fallback = first_line_title(user_text)
        if session.title is not None and session.title != fallback:
            return None  # someone else's automatic title (a fork's, an edit's): keep it
        title = None
        if await _setting(store, KEY_AUTO_TITLE, True):
            title = await _generated(hub, store, session_id, model_ref, user_text, reply_text)
        title = title or fallback
        if title == session.title:
            return title  # already saved (the run loop's placeholder, setting off)
        return title if await store.set_auto_title(session_id, title) else None
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("automatic title for session %s failed", session_id)
        return None


async def _generated(
    hub: ProviderHub, store: AsyncStore, session_id: str, model_ref: str, user_text: str,
    reply_text: str,
) -> str | None:
    """The title model's title, or None (logged) when it cannot be had.

    The request's tokens and cost are added to the session's usage totals.
    """
    ref = model_ref
    try:
        ref = await title_model_ref(hub, store, model_ref)
        provider, _ = hub.resolve(ref)
        prompt = _prompt(user_text, reply_text)
        # A local server's chat requests go first (parley.core.providers.local_traffic); the
        # timeout runs from when the title request is sent.
        raw, usage, stop = await traffic_for(hub).background(
            provider, lambda: asyncio.wait_for(_ask_model(hub, ref, prompt), TITLE_TIMEOUT_S)
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # provider errors, timeouts, a bad setting: keep the placeholder
        log.warning("the title model %s failed (%s); using the first line", ref, exc)
        return None
    if usage != Usage():
        await store.add_usage(session_id, usage)
    title = clean_title(raw)
    if title is None:
        log.info("the title model %s gave no usable title; using the first line", ref)
        return None
    problem = title_problem(title, raw, reply_text, stop, user_text)
    if problem is not None:
        log.info("the title model %s gave no title (%s: %r); using the first line",
                 ref, problem, title)
        return None
    return title


def is_first_exchange(turns: list[Turn]) -> bool:
    """True while the session has had no complete reply before its last user message.

    Args:
        turns: the session's turns, oldest first.

    Returns:
        True for a session's first exchange: no assistant turn before the last
        user turn someone wrote (tool results don't count as written) is a
        complete reply. Replies cut off (``aborted``: Stop pressed, Parley
        quit mid-reply) don't count, so a chat whose first reply never
        finished is titled after the first one that does. False without a
        written user turn.
    """
    last = next((i for i in range(len(turns) - 1, -1, -1) if _typed_text(turns[i])), None)
    if last is None:
        return False
    return not any(t.role == "assistant" and not t.aborted for t in turns[:last])


def answered(turns: Iterable[Turn]) -> bool:
    """True when ``turns`` hold a complete reply: an assistant turn not aborted that did
    not stop to call tools (a tool round's step is no answer the person read).

    Args:
        turns: a session's turns, on any branch (``Store.get_tree``'s), any order.
    """
    return any(t.role == "assistant" and not t.aborted and t.stop_reason != "tool_use"
               for t in turns)


def first_reply_titles(turns: list[Turn], *, was_untitled: bool, answered_before: bool) -> bool:
    """Whether a reply finishing now should have the session titled (:class:`TitleService`).

    Args:
        turns: the session's turns when the run started (its user turn included).
        was_untitled: the session had no title when the run started.
        answered_before: the session held a complete reply, on any branch, when the run
            started (:func:`answered` of its tree).

    Returns:
        True for the session's first complete reply (:func:`is_first_exchange`) when the
        title it has is only the first-line placeholder: it had none before this run, or
        no reply in it ever completed (every earlier one was stopped or cut off, whatever
        starts this run: a message, Retry, which sets the cut reply aside as a branch,
        Regenerate, Continue, a queued message). False once a reply completed anywhere
        in the chat: the title was asked for after that one (a regeneration or an edit
        of the first message leaves it on a branch), so a chat is titled once.
    """
    if not is_first_exchange(turns):
        return False
    return was_untitled or not answered_before


class TitleService:
    """Titles sessions in the background after their first exchange.

    Args:
        store: an ``AsyncStore``.
        hub: the ``ProviderHub``.
        on_titled: called as ``on_titled(session_id, title)`` on the event
            loop after a title was saved (the GUI renames the sidebar row).

    The caller runs :meth:`on_first_exchange` as a background task (the window's
    ``TaskSet``, which cancels it when the window closes, before the store).
    """

    def __init__(
        self, store: AsyncStore, hub: ProviderHub, *, on_titled: TitleListener | None = None
    ) -> None:
        self.store = store
        self.hub = hub
        self.on_titled = on_titled

    async def on_first_exchange(
        self, session_id: str, model_ref: str, *, on_titled: TitleListener | None = None
    ) -> str | None:
        """Title the session if the exchange just finished was its first.

        Args:
            session_id: the session whose run just finished.
            model_ref: the ``provider:model`` the run used.
            on_titled: also called as ``on_titled(session_id, title)`` after a
                title was saved (e.g. to emit the run's ``SessionTitled``).

        Returns:
            The title saved, or None. Does nothing (no provider call) when the
            session already had a complete reply before its last user message
            (:func:`is_first_exchange`). Otherwise as :func:`generate_title`,
            then the service's ``on_titled`` and this call's are called.
            Never raises (cancellation aside).
        """
        try:
            turns = await self.store.get_turns(session_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("automatic title: cannot read session %s", session_id)
            return None
        if not is_first_exchange(turns):
            return None
        title = await generate_title(self.hub, self.store, session_id, model_ref=model_ref)
        if title is None:
            return None
        for listener in (self.on_titled, on_titled):
            if listener is None:
                continue
            try:
                listener(session_id, title)
            except Exception:
                log.exception("title listener failed for session %s", session_id)
        return title
