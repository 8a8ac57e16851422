"""Which model answers in the open chat, the model picker, and the chat's title.

:class:`ChatModels` answers "which ``provider:model`` answers the next message"
(a saved chat: its own; a new chat: the one picked for it, else its space's
default, else the last one picked, else the app's default), says why none does,
fills the model picker (the lists kept from last time at once, then what every
provider lists now), keeps a model picked for the open chat, and shows the window
title and the header's heading and greeting, which name the chat and its model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from parley.core.app_state import LAST_MODEL
from parley.core.errors import ParleyError
from parley.core.tools.space_documents import given_text, given_to, to_be_given_text
from parley.core.visible import strip_invisible
from parley.gui.chat.regenerate import NO_MODEL as NO_MODEL_TEXT
from parley.gui.header.model_picker import cached_choices, model_choices

if TYPE_CHECKING:
    from parley.core.tasks import TaskSet
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.header.chat_heading import ChatHeading
    from parley.gui.header.greeting import Greeting
    from parley.gui.header.model_picker import ModelPicker

def name_models(text: str, provider_ids: Iterable[str], name: Callable[[str], str]) -> str:
    """``text`` with every ``provider:model`` id of a set-up provider replaced by the
    model's display name (``name``)."""
    ids = sorted({p for p in provider_ids if p}, key=len, reverse=True)
    if not ids:
        return text
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in ids) + r"):[^\s,;()]+")

    def sub(match: re.Match[str]) -> str:
        ref = match.group(0)
        tail = ""
        while ref and ref[-1] in ".:":
            ref, tail = ref[:-1], ref[-1] + tail
        return name(ref) + tail

    return pattern.sub(sub, text)


class ChatModels:
    """The models of one window's chats (see the module docstring).

    Args:
        chat: the open chat's controller.
        model_picker: the header's model picker.
        tasks: the window's background tasks (the choice saved).
        set_title: sets the window's title; heading, greeting: the header's title of the
            chat and the new chat's greeting, which name it and its model.
    """

    def __init__(self, chat: OpenChat, model_picker: ModelPicker, tasks: TaskSet, *,
                 set_title: Callable[[str], None], heading: ChatHeading,
                 greeting: Greeting) -> None:
        self.model_picker, self.tasks = model_picker, tasks
        self.set_title, self.heading, self.greeting = set_title, heading, greeting
        self.chat = chat
        #: The model picked last (new chats take it when nothing else says otherwise).
        self.new_chat_model: str | None = None
        #: The model picked for the new chat shown (None: none picked for it).
        self.picked_for_new: str | None = None
        picker = model_picker
        picker.model_chosen.connect(self.choose_model)
        picker.set_describe(self._catalog_name)  # names before the providers load
        # The greeting names the model (a new one picked, or names listed later).
        picker.model_chosen.connect(lambda _ref: self.update_title())
        picker.choices_changed.connect(self.update_title)

    def attach(self) -> None:
        """The providers are loaded: the picker names their models, and lists them as kept
        from last time (no server asked yet); the greeting names the model, or says why
        none answers."""
        picker = self.model_picker
        picker.set_describe(self._catalog_name)
        picker.set_choices(cached_choices(self.chat.hub))
        self.show_current()
        if self.chat.session_id is None:
            self.update_title()

    def show_current(self) -> None:
        """The picker shows the open chat's model (:meth:`current_model`); with none known
        while the providers load, no name rather than "No model" (trial 20c: it flashed
        on every restart showing a new chat)."""
        ref = self.current_model()
        if ref is None and self.chat.hub is None:
            self.model_picker.set_pending()
        else:
            self.model_picker.set_current(ref)

    def named(self, text: str) -> str:
        """``text`` (an error's words) with every ``provider:model`` of a set-up provider
        given by the name the model picker shows for it."""
        hub = self.chat.hub
        ids = [c.id for c in hub.configs] if hub is not None else []
        return name_models(text, ids, self.model_picker.label_of)

    def current_model(self) -> str | None:
        """The ``provider:model`` that answers the next message in the open chat.

        A saved chat: its own model. A new chat: the one picked for it, else
        its space's default model, else the last one picked, else the app's default.
        """
        session = self.chat.sessions.get(self.chat.session_id or "")
        if session is not None and session.model:
            return str(session.model)
        if session is None:
            space = self.chat.organizer.spaces.get(self.chat.space_id or "")
            space_model = space.default_model if space is not None else None
            if self.picked_for_new or space_model:
                return str(self.picked_for_new or space_model)
        if self.new_chat_model or self.chat.hub is None:
            return self.new_chat_model
        ref = self.chat.hub.default_model_ref()
        return str(ref) if ref else None
    async def refresh_models(self) -> None:
        """Fill the model picker: the lists kept from last time at once, then what every
        configured provider lists now (asked from the provider process)."""
        self.model_picker.set_choices(cached_choices(self.chat.hub))
        self.model_picker.set_choices(await model_choices(self.chat.hub))
        if self.model_picker.current != self.current_model():
            # A server with no default model (OPENAI_BASE_URL) has one now: its first listed.
            self.show_current()
        self.chat.meter.update()  # the windows the providers listed (not a default)
        if self.chat.session_id is None:
            self.update_title()  # the greeting names the model, or why there is none

    def _catalog_name(self, ref: str) -> str | None:
        """The catalog's name for a model the providers have not listed (yet), if it knows
        it (before the providers are loaded: for the built-in providers' models)."""
        from parley.core.providers.catalog import builtin_model

        if self.chat.hub is None:
            info = builtin_model(ref)
            return info.display_name if info is not None and info.display_name else None
        try:
            info = self.chat.hub.model_info(ref)
        except ParleyError:
            return None
        return info.display_name if info.known and info.display_name else None

    def no_model_reason(self) -> str:
        """Why no model answers (for a send with none): a server that cannot be reached
        is named with its address and what to do; else "choose a model"."""
        if not self.model_picker.problems:  # the registry (and keyring, ~100 ms) not imported
            return NO_MODEL_TEXT  # on the GUI thread while the first chat shows (issue 33)
        from parley.core.providers.registry import ENV_BASE_URL, env_kind, resolve_base_url

        by_group = {(c.name or c.id): c for c in (self.chat.hub.configs if self.chat.hub else [])}
        for choice in self.model_picker.problems:
            config = by_group.get(choice.group)
            if choice.ref or not choice.note.startswith("can't connect") or config is None:
                continue
            url = resolve_base_url(config, getattr(self.chat.hub, "environ", None))
            var = ENV_BASE_URL.get(env_kind(config))
            where = url.value or choice.group
            if url.source == "environment" and var:
                where += f" (from {var})"
            return (f"Parley could not reach {where}, so no model can answer. Check the "
                    "address, and that the server is running (for a local server) or that "
                    "you are online. Your message is kept: send it again once the server "
                    "answers.")
        return NO_MODEL_TEXT

    def model_for(self, sid: str) -> str | None:
        """The model that answers the next message in saved chat ``sid`` (open or not)."""
        session = self.chat.sessions.get(sid)
        if session is not None and session.model:
            return str(session.model)
        if sid == self.chat.session_id:
            return self.current_model()
        ref = self.chat.hub.default_model_ref() if self.chat.hub is not None else None
        return str(ref) if ref else None

    def choose_model(self, ref: str) -> None:
        """Use ``ref`` for the open chat (and as the default of new chats)."""
        self.new_chat_model = ref
        sid = self.chat.session_id
        if sid is not None:
            self.tasks.spawn(self._set_session_model(sid, ref), name="set-model")
        else:
            self.picked_for_new = ref
        self.tasks.spawn(LAST_MODEL.set(self.chat.store, ref), name="save-model")
        self.chat.meter.update()

    async def _set_session_model(self, sid: str, ref: str) -> None:
        self.chat.sessions[sid] = await self.chat.store.set_session_model(sid, ref)

    def space_changed(self, space_id: str) -> None:
        """A space's defaults changed: a new chat shown in it takes them."""
        if self.chat.session_id is None and self.chat.space_id == space_id:
            self.show_current()
            self.chat.meter.update()

    def show_documents(self) -> None:
        """Show the space documents the open chat was given in the header (read in the
        background from its frozen prompt)."""
        self.tasks.spawn(self._show_documents(self.chat.session_id), name="chat-documents")

    async def _show_documents(self, sid: str | None) -> None:
        """The header's line of the space documents the open chat was given ("older
        set" when its space's have changed since), or for a chat given none yet (a new
        one) those its space will give it."""
        store = self.chat.store
        if store is None:
            return
        session = self.chat.sessions.get(sid or "")
        space_id = session.space_id if session is not None else self.chat.space_id
        given = await given_to(store, sid) if sid else None
        now = await store.space_documents(space_id) if space_id else []
        if sid != self.chat.session_id:
            return
        self.heading.set_documents(*(given_text(given, now) if given is not None
                                     else to_be_given_text(now)))

    def update_title(self) -> None:
        """The window title and the header's heading (title, space) of the open chat."""
        sessions = self.chat.sessions
        session = sessions.get(self.chat.session_id or "")
        title = session.title if session is not None and session.title else "New chat"
        self.set_title(f"{strip_invisible(title) or 'New chat'} — Parley")
        space = self.chat.organizer.spaces.get(
            (session.space_id if session is not None else None) or self.chat.space_id or "")
        self.heading.set_chat(title, getattr(space, "name", None), editable=session is not None)
        self.show_documents()
        # the greeting shows while the conversation is empty (a new chat)
        space = self.chat.organizer.spaces.get(self.chat.space_id or "")
        model = self.current_model()
        pending = model is None and self.chat.hub is None  # the providers are loading
        self.greeting.set_chat(getattr(space, "name", None),
                               self.model_picker.label_of(model) if model else None,
                               problem=None if model or pending else self.no_model_reason(),
                               pending=pending)
