"""Compaction settings and the default summary model.

The keys below are read with ``store.get_setting(key, default)``; their
declaration (type, description, the Settings page) belongs to
``core.settings``, which uses the same keys and defaults:

======================  =======  ==========================================
key                     default  meaning
======================  =======  ==========================================
``compaction.auto``     True     compact automatically before a request
``compaction.threshold`` 0.8     fraction of the context window that triggers it
``compaction.keep_turns`` 4      recent turns kept verbatim
``compaction.model``    None     summary model (``provider:model`` or a bare
                                 id of the conversation's provider); None: a
                                 cheap model of the conversation's provider
``compaction.strategy`` summary  ``summary`` (write a summary) or ``tail``
                                 (hide older tool output on the wire)
======================  =======  ==========================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from core.providers.catalog import known_models
from core.providers.model_ref import format_model_ref, parse_model_ref

Strategy: TypeAlias = Literal["summary", "tail"]

KEY_AUTO = "compaction.auto"
KEY_THRESHOLD = "compaction.threshold"
KEY_KEEP_TURNS = "compaction.keep_turns"
KEY_MODEL = "compaction.model"
KEY_STRATEGY = "compaction.strategy"

DEFAULT_AUTO = True
DEFAULT_THRESHOLD = 0.8
DEFAULT_KEEP_TURNS = 4
DEFAULT_STRATEGY: Strategy = "summary"


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """The compaction settings in effect.

    Attributes:
        auto: compact automatically before a request that reaches the threshold.
        threshold: fraction (0 < t <= 1) of the model's context window
            (tokens) at which auto-compaction fires.
        keep_turns: recent turns kept verbatim (>= 0).
        model: the summary model as set, or None for the default.
        strategy: ``summary`` or ``tail``.
    """

    auto: bool = DEFAULT_AUTO
    threshold: float = DEFAULT_THRESHOLD
    keep_turns: int = DEFAULT_KEEP_TURNS
    model: str | None = None
    strategy: Strategy = DEFAULT_STRATEGY


def _number(value: Any, default: float, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return default if not low <= value <= high else float(value)


async def load_settings(store: Any) -> CompactionSettings:
    """Read the compaction settings; a value of the wrong type or range gets its default.

    Args:
        store: an ``AsyncStore`` (``get_setting`` awaited).
    """
    auto = await store.get_setting(KEY_AUTO, DEFAULT_AUTO)
    threshold = await store.get_setting(KEY_THRESHOLD, DEFAULT_THRESHOLD)
    keep = await store.get_setting(KEY_KEEP_TURNS, DEFAULT_KEEP_TURNS)
    model = await store.get_setting(KEY_MODEL, None)
    strategy = await store.get_setting(KEY_STRATEGY, DEFAULT_STRATEGY)
    return CompactionSettings(
        auto=auto if isinstance(auto, bool) else DEFAULT_AUTO,
        threshold=_number(threshold, DEFAULT_THRESHOLD, 0.05, 1.0),
        keep_turns=int(_number(keep, DEFAULT_KEEP_TURNS, 0, 10_000)),
        model=model.strip() if isinstance(model, str) and model.strip() else None,
        strategy="tail" if strategy == "tail" else "summary",
    )


def cheap_model_id(kind: str, model_id: str) -> str:
    """Return the catalog's cheap sibling of a model, for summaries.

    Anthropic: the newest Haiku in the catalog (the model itself if it is a
    Haiku); OpenAI: the newest ``mini`` (the model itself if it is a mini or
    nano); a local server: the same model (it may serve only that one).
    """
    if kind == "anthropic":
        if "haiku" in model_id:
            return model_id
        return next((m.id for m in known_models("anthropic") if "haiku" in m.id), model_id)
    if kind == "openai":
        if "mini" in model_id or "nano" in model_id:
            return model_id
        return next((m.id for m in known_models("openai") if m.id.endswith("-mini")), model_id)
    return model_id


def summary_model_ref(hub: Any, conversation_ref: str, setting: str | None) -> str:
    """Return the ``provider:model`` that writes a fallback summary.

    Args:
        hub: the ``ProviderHub`` (``config(provider_id)`` gives the API kind).
        conversation_ref: the conversation's model reference.
        setting: ``compaction.model``: a full reference (its provider part
            names a set-up provider) or a bare model id of the conversation's
            provider; None for :func:`cheap_model_id`.

    Raises:
        InvalidModelRef: ``conversation_ref`` is not ``provider:model``.
        UnknownProvider: its provider is not set up.
    """
    pid, model_id = parse_model_ref(conversation_ref)
    if setting:
        head, sep, _rest = setting.partition(":")
        if sep and any(c.id == head for c in hub.configs):
            return setting
        return format_model_ref(pid, setting)
    kind = hub.config(pid).kind
    return format_model_ref(pid, cheap_model_id(kind, model_id))
