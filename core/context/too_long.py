"""The errors of a conversation that does not fit its model's context window.

:class:`MessageTooLong` (a new message alone is too long; nothing saved) and
:class:`HistoryTooLong` (the history still too long after compaction did what
it could; nothing sent) are raised by ``parley.core.compaction.run`` and re-exported
there; :func:`larger_model` names a model that would take it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from parley.core.compaction.types import CompactPromptTooLongError
from parley.core.errors import ParleyError
from parley.core.providers.base import ModelInfo

_ADVICE = "or pick a model with a larger context window"


def model_name(info: ModelInfo, model_ref: str) -> str:
    """The model's name for people (its display name, else the reference)."""
    return info.display_name or model_ref


class MessageTooLong(ParleyError):
    """A new message does not fit the model's context window; it was neither saved nor sent.

    Attributes:
        tokens: the message's estimated tokens (system prompt included).
        window: the model's context window, tokens.
        model_ref: ``provider:model``.
        larger: a model the person can pick whose window would hold it (the
            cheapest, :func:`larger_model`), or None.
    """

    def __init__(
        self, tokens: int, window: int, model_ref: str, *, name: str = "",
        larger: ModelInfo | None = None,
    ) -> None:
        model = name or model_ref
        other = ""
        if larger is not None:
            other = f" (such as {larger.display_name or larger.id}, {larger.context_window:,})"
        super().__init__(
            f"This message is too long for {model}: it is about {tokens:,} tokens, and the "
            f"model's context window holds {window:,} tokens in all, the reply included. "
            "Nothing was sent or saved, and your message is still in the box. Shorten it "
            f"(send only the part that matters), {_ADVICE}{other}."
        )
        self.tokens, self.window, self.model_ref, self.larger = tokens, window, model_ref, larger


class HistoryTooLong(CompactPromptTooLongError):
    """A request would not fit the model's context window even after compaction did
    what it could; it was not sent. The conversation is saved as it was.

    Three causes, each said in its own words:

    * ``newest``: the newest message, with what it answers, is too long for the window
      by itself — leaving older turns off the wire cannot help
      (``parley.core.compaction.window``);
    * ``compacted``: a summary was saved, and it with the turns kept after it is still
      too long;
    * neither: the provider refused the request and nothing more could be left out.

    Attributes:
        tokens: the request's tokens as last measured (provider count or estimate); for
            ``newest``, those of the newest message with what it answers.
        window: the model's context window, tokens.
        model_ref: ``provider:model``.
        compacted: a summary was saved during this run.
        newest: the newest message alone does not fit.
    """

    def __init__(
        self, tokens: int, window: int, model_ref: str, *, name: str = "", compacted: bool,
        newest: bool = False,
    ) -> None:
        model = name or model_ref
        if newest:
            text = (
                f"The newest message is too long for {model}: with what it answers it is "
                f"about {tokens:,} tokens, and the model's context window holds {window:,} "
                "tokens in all, so it cannot be sent even with every earlier turn left out. "
                "Nothing was sent, and nothing was lost: the whole conversation is saved. "
                f"Edit the message to shorten it, {_ADVICE}."
            )
        else:
            if compacted:
                tried = ("even after Parley compacted the earlier turns and hid older tool "
                         "output and files")
            else:
                tried = "even with older tool output and files hidden"
            text = (
                f"This conversation is about {tokens:,} tokens, more than {model}'s context "
                f"window of {window:,} tokens, {tried}. Nothing was sent, and nothing was "
                "lost: the whole conversation is saved. Edit the long message to shorten it, "
                f"start a new chat, {_ADVICE}."
            )
        ParleyError.__init__(self, text)
        self.tokens, self.window, self.model_ref = tokens, window, model_ref
        self.compacted = compacted
        self.newest = newest


class SentMessageTooLong(HistoryTooLong):
    """The message just sent is too long for the model's context window by itself (the
    provider refused it, and compacting earlier turns cannot help); it is saved in the
    chat but was not answered.

    Attributes: those of :class:`HistoryTooLong` (``tokens``: the request's tokens as
    the provider counted them, else estimated; ``compacted`` is False).
    """

    def __init__(self, tokens: int, window: int, model_ref: str, *, name: str = "") -> None:
        model = name or model_ref
        ParleyError.__init__(
            self,
            f"Your message is too long for {model}: the request is about {tokens:,} tokens, "
            f"and the model's context window holds {window:,} tokens in all, the reply "
            "included. It was not answered; it is kept in the chat. Edit it to shorten it "
            f"(send only the part that matters), {_ADVICE}.",
        )
        self.tokens, self.window, self.model_ref = tokens, window, model_ref
        self.compacted = False
        self.newest = True


class WindowTooSmall(SentMessageTooLong):
    """The model's context window is too small for even the newest message: the system
    prompt, the tools and the message alone are over it in the provider's tokens, so no
    summary of earlier turns and no narrowing can help. The message is saved in the
    chat but was not answered (at most one request was refused for it: ``sent``; else
    nothing was sent).

    Attributes: those of :class:`SentMessageTooLong`, and
        system_tokens, tool_tokens, message_tokens: what takes the room, in the
            provider's tokens (local estimates scaled by the provider's count).
    """

    def __init__(
        self, tokens: int, window: int, model_ref: str, *, name: str = "",
        system_tokens: int = 0, tool_tokens: int = 0, message_tokens: int = 0,
        sent: bool = False,
    ) -> None:
        model = name or model_ref
        parts = [f"the system prompt about {system_tokens:,}"] if system_tokens else []
        if tool_tokens:
            parts.append(f"the tools about {tool_tokens:,}")
        parts.append(f"the message with what it answers about {message_tokens:,}")
        helps = ["pick a model with a larger context window"]
        if tool_tokens * 2 >= tokens:
            helps.append("turn off tools for this chat (they take most of the room)")
        helps.append("edit the message to shorten it")
        what = "The provider refused it, so it was not answered" if sent else "Nothing was sent"
        ParleyError.__init__(
            self,
            f"The newest message is too long for {model}: with the system prompt and tools "
            f"it is about {tokens:,} tokens ({', '.join(parts)}), and the model's context "
            f"window holds {window:,} tokens in all, so it cannot be sent even with every "
            f"earlier turn left out; starting a new chat would not help either. {what}, and "
            "nothing was lost: the whole conversation is saved, your message included. To go "
            f"on, {', or '.join(helps)}.",
        )
        self.tokens, self.window, self.model_ref = tokens, window, model_ref
        self.compacted = False
        self.newest = True
        self.system_tokens, self.tool_tokens = system_tokens, tool_tokens
        self.message_tokens = message_tokens


def larger_model(hub: Any, tokens: int) -> ModelInfo | None:
    """The cheapest model the person can pick whose window exceeds ``tokens``.

    Only models of the providers set up, as the model menu lists them (each provider's
    last listed models, ``ProviderHub.cached_models``; a provider not listed yet offers
    none here), with their windows as the hub knows them (``ProviderHub.model_info``:
    the provider's, a learnt one, else the catalog's); models whose window is not
    known are not suggested.

    Args:
        hub: the ``ProviderHub``.
        tokens: the message's estimated tokens.

    Returns:
        The model (``ModelInfo`` with its effective window), or None when no model
        the person can pick would take it.
    """
    fitting: list[ModelInfo] = []
    for config in hub.configs:
        for listed in hub.cached_models(config.id) or []:
            try:
                info = hub.model_info(f"{config.id}:{listed.id}")
            except ParleyError:
                continue
            if info.known and info.context_window > tokens:
                fitting.append(replace(info, display_name=info.display_name
                                       or listed.display_name))
    return min(fitting, key=lambda m: m.input_usd_per_mtok or 0.0, default=None)
