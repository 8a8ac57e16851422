"""Which model writes summaries and titles: the one set, else a cheap one the provider lists.

Rules (README, Compaction):

* a model setting (``compaction.model``, ``chat.title_model``) is honoured
  as set (:func:`parley.core.compaction.settings.chosen_model_ref`);
* without one, the *cheap sibling* of the chat's model is the first of
  :func:`cheap_candidates` that the provider's own model list
  (``GET /v1/models``) holds — a dated listing (``claude-haiku-4-5-20251001``)
  counts for its undated id; the newest Haiku for Anthropic, the newest
  ``-mini`` for OpenAI; the chat's model itself when it is already a cheap one,
  when it runs on a local server (which may serve only that model), when the
  list holds none of the candidates, or when the list cannot be had (the
  request would go to that provider anyway; a model it does not serve would
  only fail there).

The list is the one the hub keeps (``ProviderHub.listed_ids``: read once
per provider, e.g. before the chat's first request); it is asked for only
when the hub has none.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from parley.core.compaction.settings import KEY_MODEL, chosen_model_ref
from parley.core.errors import ParleyError
from parley.core.providers.catalog import known_models
from parley.core.providers.model_ref import format_model_ref, parse_model_ref

if TYPE_CHECKING:
    from parley.core.providers.hub import ProviderHub

log = logging.getLogger(__name__)

_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def is_cheap(kind: str, model_id: str) -> bool:
    """True when ``model_id`` is already a cheap model of its kind (Haiku, mini, nano)."""
    if kind == "anthropic":
        return "haiku" in model_id
    if kind == "openai":
        return "mini" in model_id or "nano" in model_id
    return True  # a local server: the model it serves is the one to use


def cheap_candidates(kind: str, model_id: str) -> list[str]:
    """The cheap models to try for a chat on ``model_id``, best first.

    Args:
        kind: the provider's API kind (``anthropic``, ``openai``, ``openai_compatible``).
        model_id: the chat's bare model id.

    Returns:
        ``[model_id]`` when it is cheap already or the provider is a local
        server; else the catalog's Haikus (Anthropic) or ``-mini`` models
        (OpenAI), newest first.
    """
    if is_cheap(kind, model_id):
        return [model_id]
    if kind == "anthropic":
        return [m.id for m in known_models("anthropic") if "haiku" in m.id]
    return [m.id for m in known_models("openai") if m.id.endswith("-mini")]


async def listed_models(hub: ProviderHub, provider_id: str) -> tuple[str, ...]:
    """The model ids a provider lists: the hub's, else asked for now (and kept by the hub).

    Raises:
        ProviderError: the list could not be read.
        UnknownProvider: the provider is not set up.
    """
    listed: tuple[str, ...] | None = hub.listed_ids(provider_id)
    if listed is None:
        listed = tuple(m.id for m in await hub.list_models(provider_id))
    return listed


def pick_listed(candidates: list[str], listed: tuple[str, ...]) -> str | None:
    """The first candidate the list holds (its own id, or a dated id of it as listed)."""
    exact = set(listed)
    undated = {_DATED.sub("", i): i for i in listed}
    for candidate in candidates:
        if candidate in exact:
            return candidate
        if candidate in undated:
            return undated[candidate]
    return None


async def cheap_model_ref(hub: ProviderHub, conversation_ref: str) -> str:
    """The default summary / title model for a chat on ``conversation_ref``.

    Args:
        hub: the ``ProviderHub`` (``config``, ``list_models``).
        conversation_ref: the chat's ``provider:model``.

    Returns:
        ``provider:model`` of the same provider: the first cheap candidate the
        provider lists, else the chat's own model (see the module's rules).

    Raises:
        InvalidModelRef: ``conversation_ref`` is not ``provider:model``.
        UnknownProvider: its provider is not set up.
    """
    pid, model_id = parse_model_ref(conversation_ref)
    kind = hub.config(pid).kind
    candidates = cheap_candidates(kind, model_id)
    if candidates == [model_id]:
        return conversation_ref
    try:
        listed = await listed_models(hub, pid)
    except ParleyError as exc:
        log.info("no model list from %s (%s): the chat's model writes it", pid, exc)
        return conversation_ref
    chosen = pick_listed(candidates, listed)
    if chosen is None:
        log.info("%s lists none of %s: the chat's model writes it", pid, candidates)
        return conversation_ref
    return format_model_ref(pid, chosen)


async def summary_model_ref(
    hub: ProviderHub, conversation_ref: str, setting: str | None, *, key: str = KEY_MODEL
) -> str:
    """The ``provider:model`` that writes a separate summary (or a title).

    Args:
        hub: the ``ProviderHub``.
        conversation_ref: the chat's ``provider:model``.
        setting: the model setting as stored (None: automatic).
        key: which setting it is (for the error's wording).

    Returns:
        The setting resolved (:func:`parley.core.compaction.settings.chosen_model_ref`),
        else :func:`cheap_model_ref`.

    Raises:
        InvalidModelRef, UnknownProvider: the chat's model cannot be used.
        UnusableModelSetting: the setting names a provider that is not set up.
    """
    chosen = chosen_model_ref(hub, conversation_ref, setting, key=key)
    return chosen if chosen is not None else await cheap_model_ref(hub, conversation_ref)
