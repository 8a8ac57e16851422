"""The context meter of the open chat: how much of the model's window its next request fills.

:class:`ChatMeter` counts the open chat's turns with the system prompt and tools its
next request sends (``parley.gui.header.context_meter.measure``). A chat opened in
part (a long one: only its last items are read) is counted as its next request will
be: the turns that request is built from (``AsyncStore.context_turns``: not those its
latest summary replaced) are read and counted off the GUI thread; after a message, an
answer, an edit or a regeneration they are worked out from the last read and the turns
shown (no read queued before the request's own). The system prompt
and tools are those of the chat's last request when the run loop sent one since
Parley started, else worked out once in the background. The meter also shows when the
chat's prompt cache expires.

The meter shows what the model sees. When the run left the chat's oldest turns off the
wire (its ``Unseen`` record, ``parley.core.compaction.unseen``, held in
``OpenChatState.unseen``), only the turns from the first one the model still sees are
counted — the narrowed request, measured from the last reply's reported usage where
there is one — the same before and after a restart. When a request was refused because
even the newest message does not fit (``WindowTooSmall``), the meter shows the refusal's
count (the provider's tokens) until the chat changes.

After a compaction the last reply's figure measured a history no longer sent: until
the next reply, the meter asks the provider to count the compacted request once
(``count_tokens``, where the API has one; ``parley.core.context.size.Counted``) and
measures from that count, so the figure does not rest on the local estimate alone and
then fall when the next reply brings the provider's count.

From the moment another chat is chosen until it is shown, the meter says it is
counting (:meth:`ChatMeter.opening`): no figure of the chat left stays on show, and
asks for the meter meanwhile (a model list, a count still running for the chat
left) show nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.core.content import CompactSummaryBlock, Turn
from parley.gui.header.context_meter import measure

if TYPE_CHECKING:
    from collections.abc import Callable

    from parley.core.compaction.cache_timer import CacheTimer
    from parley.core.context.size import Counted
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.header.context_meter import ContextMeter


class ChatMeter:
    """The meter of one window's open chat (see the module docstring).

    Args:
        chat: the open chat's controller.
        context_meter: the header's meter it fills.
        tasks: the window's background tasks (counting a long chat).
        ready: True once start-up finished (before, a long chat's turns are read once).
        cache_timer: the prompt cache timer, once there is one (the cache's expiry).
    """

    def __init__(self, chat: OpenChat, context_meter: ContextMeter, tasks: TaskSet, *,
                 ready: Callable[[], bool],
                 cache_timer: Callable[[], CacheTimer | None]) -> None:
        self.context_meter, self.tasks = context_meter, tasks
        self._ready, self._cache_timer = ready, cache_timer
        self.chat = chat
        # (chat, model) -> what its next request sends besides the turns.
        self._shapes: dict[tuple[str, str], Any] = {}
        #: (space, model) -> the prompt section of its documents a new chat gets.
        self._documents: dict[tuple[str, str], str | None] = {}
        #: session id -> (its last turn's id, tokens) of a request refused as too long for
        #: the window by itself (:meth:`refused`): shown while that turn is the last.
        self._refused: dict[str, tuple[str, int]] = {}
        chat.state.unseen_changed.connect(self.update)  # a narrowed request counts less
        #: Every turn of the chat opened in part, read once while starting (_measure_all).
        self._all_turns: tuple[tuple[str, int, int, str], asyncio.Future[list[Turn]]] | None \
            = None
        #: (chat, its context turns) as last counted by _measure_all (see _grown).
        self._context: tuple[str, list[Turn]] | None = None
        #: The chat being opened (:meth:`opening`) until it is shown, else None.
        self._opening: str | None = None
        #: Counts the figures asked for: a count that ends after a newer one was asked
        #: (its turns, tools or system prompt older) is not shown.
        self._asked_n = 0
        #: session id -> the provider's count of its request after a compaction (_count).
        self._counted: dict[str, Counted] = {}
        #: (session, last turn, model) counted or being counted (asked once).
        self._asked: set[tuple[str, str, str]] = set()
        #: The counts of :attr:`_asked` still running (:meth:`settled` waits for them).
        self._counting: dict[tuple[str, str, str], asyncio.Task[None]] = {}

    def opening(self, sid: str) -> None:
        """Chat ``sid`` was chosen and is being read: the meter says "counting…" until
        it is shown (:meth:`update` with it open) or its opening ends (:meth:`opened`)."""
        self._opening = sid
        self._context = None  # read again: it may have been compacted meanwhile
        self.context_meter.set_counting()

    def reread(self) -> None:
        """The open chat was read again (a compaction saved a summary, another program
        changed it): the turns it sends are read again too, not worked out from those
        read before (:meth:`_grown` sees a summary only among the turns shown, and the
        last items shown of a chat opened in part may not hold it)."""
        self._context = None

    def opened(self, sid: str) -> None:
        """The opening of chat ``sid`` ended (shown, failed or overtaken by another):
        when it was not shown (the chat before stays), the meter shows that one again."""
        if self._opening != sid:
            return  # shown already, or another chat is opening now
        self._opening = None
        if self.chat.session_id != sid:
            self.update()

    def _waiting(self, sid: str | None) -> bool:
        """True while another chat than ``sid`` is being opened (nothing of ``sid`` shows)."""
        if self._opening is None:
            return False
        if self._opening == sid:
            self._opening = None  # shown: its figures from now on
            return False
        return True

    def update(self) -> None:
        """Show the open chat's figures (every turn counted, also those not read yet)."""
        if self._waiting(self.chat.session_id):
            return
        self._asked_n += 1
        if self.chat.older > 0 and self.chat.session_id is not None:
            self.tasks.spawn(self._measure_all(self.chat.session_id, self._asked_n),
                             name="measure")
            return
        self._show(self.chat.turns)

    async def _measure_all(self, sid: str, asked: int) -> None:
        """The meter of a chat opened in part counts what its next request sends; reading
        and counting those turns (what the model window holds, not the whole history)
        happen off the GUI thread. While the window
        starts (the meter is asked again when the providers load) the turns are read
        once: the same chat with the same turns shown reuses them."""
        shown = self.chat.turns
        key = (sid, self.chat.older, len(shown), shown[-1].id if shown else "")
        kept = self._all_turns
        grown = self._grown(sid, shown) if self._ready() else None
        if grown is not None:
            turns = grown  # no read: a message being sent is not kept waiting behind one
        elif self._ready():
            self._all_turns = None
            turns = await self.chat.store.context_turns(sid)
        elif kept is not None and kept[0] == key:
            turns = await asyncio.shield(kept[1])  # read (or being read) already
        else:
            reading = asyncio.ensure_future(self.chat.store.context_turns(sid))
            self._all_turns = (key, reading)
            turns = await asyncio.shield(reading)
        self._context = (sid, turns)
        request = self._request(sid)
        seen = self._seen(turns)
        figures = await asyncio.to_thread(self._measure, sid, seen, request)
        self._ask_count(sid, seen, *request, measured=figures[4])
        if sid == self.chat.session_id and self._opening is None and asked == self._asked_n:
            self._set_usage(sid, turns, figures, request[1])

    def _grown(self, sid: str, shown: Sequence[Turn]) -> list[Turn] | None:
        """The chat's context turns (``AsyncStore.context_turns``) worked out without a
        read: those read last for this chat up to the first turn shown among them, then
        the turns shown from there. A message sent, its answer, an edit or a
        regeneration change only the path's end, which is shown. None when they must be
        read: another chat or none read yet, no turn shown among them, turns shown that
        the read left out, or a new summary (a compaction changes what is sent)."""
        last = self._context
        if last is None or last[0] != sid:
            return None
        read = last[1]
        known = {t.id: i for i, t in enumerate(read)}
        start = next((i for i, t in enumerate(shown) if t.id in known), None)
        if start is None:
            return None
        tail = list(shown[start:])
        at = known[tail[0].id]
        same = 0  # the turns shown from there as read, then only new ones
        while same < len(tail) and at + same < len(read) and tail[same].id == read[at + same].id:
            same += 1
        new = tail[same:]
        if any(t.id in known or any(isinstance(b, CompactSummaryBlock) for b in t.blocks)
               for t in new):
            return None  # turns the summary replaced shown (a card opened), or a summary
        return [*read[:at], *tail]

    def _show(self, turns: Sequence[Turn]) -> None:
        sid = self.chat.session_id
        request = self._request(sid)
        seen = self._seen(turns)
        figures = self._measure(sid, seen, request)
        self._ask_count(sid, seen, *request, measured=figures[4])
        self._set_usage(sid, turns, figures, request[1])

    def _request(self, sid: str | None) -> tuple[str | None, str | None, Any]:
        """What chat ``sid``'s next request is counted with: (its system prompt, the
        model, its shape: :meth:`next_request_shape`)."""
        return self._system_prompt(sid), self.chat.current_model(), self.next_request_shape(sid)

    def _measure(self, sid: str | None, seen: Sequence[Turn],
                 request: tuple[str | None, str | None, Any]) -> Any:
        """:func:`measure`'s figures of ``seen`` sent as ``request`` (:meth:`_request`),
        with the provider's count kept for ``sid``, if any."""
        system, model, shape = request
        return measure(seen, system, model, self.chat.hub, shape, self._counted.get(sid or ""))

    def _set_usage(self, sid: str | None, turns: Sequence[Turn], figures: Any,
                   model: str | None) -> None:
        """Show ``figures`` (:func:`measure`'s, for ``model``) on the meter; while the
        providers load and the chat's model is not known, "counting…" stays rather than
        a figure for no model ("0 tokens", trial 20c)."""
        if model is None and self.chat.hub is None:
            self.context_meter.set_counting()
            return
        self.context_meter.set_usage(*self._with_refusal(sid, turns, figures))
        self.show_cache_expiry()

    def _ask_count(self, sid: str | None, turns: Sequence[Turn], system: str | None,
                   model: str | None, shape: Any, *, measured: bool) -> asyncio.Task[None] | None:
        """After a compaction (a summary among ``turns`` and no reply measured since),
        ask the provider's count of the request once (:meth:`_count`). Returns the count
        while it runs (asked now or before), else None."""
        if measured or sid is None or model is None or not turns or self.chat.hub is None:
            return None
        if not any(isinstance(b, CompactSummaryBlock) for t in turns for b in t.blocks):
            return None  # no compaction: the estimate until the first reply, as always
        if shape is None and self._shapes.get((sid, model)) is _LEARNING:
            return None  # its tools are being learnt (_learn_shape): asked with them, then
        key = (sid, turns[-1].id, model)
        if key not in self._asked:
            self._asked.add(key)
            task = self.tasks.spawn(self._count(sid, list(turns), system, model, shape),
                                    name="meter-count")
            self._counting[key] = task
            task.add_done_callback(lambda _t: self._counting.pop(key, None))
        return self._counting.get(key)

    def shown(self, sid: str) -> int | None:
        """The figure (tokens) the meter shows now for chat ``sid``; None when it shows
        another chat or says it is counting."""
        if sid != self.chat.session_id or self._opening is not None \
                or self.context_meter.counting:
            return None
        return int(self.context_meter.used)

    async def settled(self, sid: str) -> int | None:
        """The figure (tokens) the meter shows for the open chat ``sid`` once what it
        sends is read again and, after a compaction, the provider has counted it: worked
        out as :meth:`update` does, sharing its count (the meter then shows the same
        figure). None when ``sid`` is not the open chat (then or once read).

        Used by "Compact now" to tell the context before and after in the meter's own
        figures (trial 21: the toast's local estimate and the meter disagreed)."""
        if sid != self.chat.session_id:
            return None
        turns = self._seen(await self.chat.store.context_turns(sid))
        if sid != self.chat.session_id or not turns:
            return None
        request = self._request(sid)
        figures = await asyncio.to_thread(self._measure, sid, turns, request)
        counting = self._ask_count(sid, turns, *request, measured=figures[4])
        if counting is not None:
            await asyncio.shield(counting)
            figures = await asyncio.to_thread(self._measure, sid, turns, request)
        return int(figures[0]) if sid == self.chat.session_id else None

    async def _count(self, sid: str, turns: list[Turn], system: str | None, model: str,
                     shape: Any) -> None:
        """Have the provider count the request built from ``turns`` (the system prompt and
        tools as the meter counts them), keep it, show the meter again. Nothing when the
        model's provider is not loaded yet (asked again at the next update) or its API
        has no count, or the count fails."""
        from parley.core.context.size import Counted
        from parley.core.errors import ParleyError
        from parley.core.providers.base import ChatRequest

        hub = self.chat.hub
        try:
            if hub is None or not hub.is_prepared(model):
                # its adapter still being prepared (start-up): asked again at a later update (the
                # model list the provider gives shows the meter again)
                self._asked.discard((sid, turns[-1].id, model))
                return
            provider, model_id = hub.resolve(model)
            if not provider.caps.has_count_tokens:
                return
            request = ChatRequest(model_id, turns, system) if shape is None else ChatRequest(
                model_id, turns, shape.request.system, tools=shape.request.tools)
            tokens = await provider.count_tokens(request)
        except ParleyError:
            return
        if not tokens:
            return
        self._counted[sid] = Counted(turns[-1].id, model, int(tokens))
        if sid == self.chat.session_id:
            self.update()

    def refused(self, sid: str, error: Any) -> None:
        """A run of chat ``sid`` failed: when the error says even the newest message does
        not fit (``newest`` with ``tokens``, ``parley.core.context.too_long``), the meter
        shows those tokens while the chat's last turn stays the same."""
        tokens = getattr(error, "tokens", 0)
        turns = self.chat.turns if sid == self.chat.session_id else []
        if getattr(error, "newest", False) and isinstance(tokens, int) and tokens and turns:
            self._refused[sid] = (turns[-1].id, tokens)

    def _with_refusal(self, sid: str | None, turns: Sequence[Turn],
                      figures: tuple[Any, ...]) -> tuple[Any, ...]:
        refused = self._refused.get(sid or "")
        if refused is None or not turns or turns[-1].id != refused[0]:
            self._refused.pop(sid or "", None)
            return figures
        used, window, cache_read, source, _ = figures
        return max(used, refused[1]), window, cache_read, source, True

    def _seen(self, turns: Sequence[Turn]) -> Sequence[Turn]:
        """The turns the chat's next request sends when the run leaves its oldest ones off
        the wire (the open chat's ``Unseen`` record): from the first turn the model still
        sees (searched from the newest; it is near the end). All turns otherwise."""
        unseen = self.chat.state.unseen
        if unseen is None or unseen.session_id != self.chat.session_id:
            return turns
        first = unseen.first_seen_turn_id
        at = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].id == first), None)
        return turns if at is None else turns[at:]

    def next_request_shape(self, sid: str | None) -> Any:
        """The chat's last request as the run loop sent it, else the system prompt and
        tools its next request will send as far as known (both count in the meter), or
        None; a missing one is worked out in the background (:meth:`_learn_shape`)."""
        sent = getattr(self.chat.runner, "sent", None)
        found = sent.get(sid or "") if isinstance(sent, dict) else None
        if found is not None or sid is None:
            return found
        model = self.chat.current_model()
        key = (sid, model or "")
        if key not in self._shapes and getattr(self.chat.runner, "tools", None) is not None:
            self._shapes[key] = _LEARNING  # asked once
            self.tasks.spawn(self._learn_shape(sid, model), name="meter-shape")
        shape = self._shapes.get(key)
        return None if shape is _LEARNING else shape

    async def _learn_shape(self, sid: str, model: str | None) -> None:
        """Find the frozen system prompt and the tools a chat's next request sends (when
        no request was sent since Parley started), then show the meter again."""
        from parley.core.errors import ParleyError
        from parley.core.providers.base import ChatRequest

        runner, hub = self.chat.runner, self.chat.hub
        tools = runner.tools if runner is not None else None
        session = self.chat.sessions.get(sid)
        if session is None or model is None or hub is None or tools is None:
            self._shapes[(sid, model or "")] = None  # not known: the meter goes without
            return
        try:
            kind = hub.config(model.split(":", 1)[0]).kind
            proven = hub.model_info(model).tools is True  # the server said so
            on = await tools.enabled(session.space_id, kind, model, proven=proven)
            system = await tools.prompts.frozen(sid) or session.system_prompt
        except ParleyError:
            self._shapes[(sid, model)] = None
            if sid == self.chat.session_id:
                self.update()
            return
        request = ChatRequest("", [], system, tools=tools.specs() if on else [])
        self._shapes[(sid, model)] = _Shape(request)
        if sid == self.chat.session_id:
            self.update()

    def _system_prompt(self, sid: str | None) -> str | None:
        """The system prompt a chat's next request sends: its own, or for a new chat not
        saved yet, its space's (the store gives it to the chat when it is created) with
        the space's documents (:meth:`_space_documents`)."""
        session = self.chat.sessions.get(sid or "")
        if session is not None:
            return session.system_prompt
        space = self.chat.organizer.spaces.get(self.chat.space_id or "")
        if space is None:
            return None
        documents = self._space_documents(space)
        return "\n\n".join(p for p in (space.system_prompt, documents) if p) or None

    def _space_documents(self, space: Any) -> str | None:
        """The section of the prompt a new chat of ``space`` will be given for its
        documents (``parley.core.tools.space_documents.render``, for the chat's model's
        window), or None; rendered once per space and model in the background, then the
        meter is shown again. :meth:`documents_changed` forgets it."""
        model = self.chat.current_model() or ""
        key = (space.id, model)
        if key not in self._documents and self.chat.store is not None:
            self._documents[key] = None  # asked once
            self.tasks.spawn(self._render_documents(space, model), name="meter-documents")
        return self._documents.get(key)

    async def _render_documents(self, space: Any, model: str) -> None:
        from parley.core.errors import ParleyError
        from parley.core.tools.space_documents import render

        hub = self.chat.hub
        try:
            window = hub.model_info(model).context_window if hub is not None and model else None
        except (ParleyError, KeyError, ValueError):  # a provider removed, a malformed ref
            window = None
        section, _ = await render(self.chat.store, space.id, space.name, window, tools_on=True)
        self._documents[(space.id, model)] = section
        if self.chat.session_id is None and self.chat.space_id == space.id and section:
            self.update()

    def documents_changed(self, space_id: str) -> None:
        """A space's documents changed: a new chat shown in it counts them again."""
        for key in [k for k in self._documents if k[0] == space_id]:
            del self._documents[key]
        if self.chat.session_id is None and self.chat.space_id == space_id:
            self.update()

    def show_cache_expiry(self) -> None:
        """Show when the open chat's prompt cache expires (from the cache timer)."""
        timer = self._cache_timer()
        sid = self.chat.session_id
        if self._opening is not None:
            return  # another chat is being opened
        if timer is None or sid is None:
            self.context_meter.set_cache_expiry(None)
            return
        self.context_meter.set_cache_expiry(timer.expiry(sid), timer.armed(sid))


class _Shape:
    """A request's system prompt and tools, for
    :func:`parley.gui.header.context_meter.measure` (which reads ``request``; it answered
    no reply, so it has no ``stored_turns``)."""

    stored_turns: tuple[Any, ...] = ()

    def __init__(self, request: Any) -> None:
        self.request = request
        self.model_ref = None


#: In ``ChatMeter._shapes`` while a chat's request shape is being learnt
#: (``_learn_shape``): the provider's count waits for it (else it counts no tools).
_LEARNING = _Shape(None)
