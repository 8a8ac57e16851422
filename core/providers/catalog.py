"""The model catalog: context window, output limit, prices and thinking style per model.

Sources (read November 2026): Anthropic's models overview and pricing pages
(prices per million tokens; 5-minute cache writes cost 1.25x input, 1-hour
writes 2x, cache reads 0.1x) and OpenAI's pricing page (cached input; no
charge for cache writes). Figures marked "assumed" were not on those pages
and copy the model's nearest sibling. Settings can override any entry or add
models (:func:`lookup`'s ``overrides``), so a price change needs no release.

Unknown models get safe defaults: an unknown Claude model the newest
generation's limits without prices; an unknown OpenAI model 128k/16k; a local
(OpenAI-compatible) model 8,192 tokens of context and 4,096 of output.

The catalog is the last word only when nothing better is known: the limits a
provider reports for its models (Anthropic's model list, a local server's
``/props`` or ``/api/show``) come first (:func:`with_reported`), then the
user's overrides. Each :class:`ModelInfo` says where its window and output
limit came from (``window_source`` / ``output_source``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from parley.core.providers.base import ModelInfo, ThinkingMode
from parley.core.providers.capabilities import ProviderKind

M = 1_000_000
K = 1_000


def _claude(
    id_: str,
    name: str,
    ctx: int,
    out: int,
    price_in: float,
    price_out: float,
    thinking: ThinkingMode = "budget",
    temperature: bool = True,
) -> ModelInfo:
    return ModelInfo(
        id_,
        ctx,
        out,
        price_in,
        price_out,
        round(price_in * 0.1, 4),
        round(price_in * 1.25, 4),
        name,
        thinking,
        temperature,
    )


def _gpt(
    id_: str,
    name: str,
    ctx: int,
    out: int,
    price_in: float,
    price_out: float,
    cached: float,
    thinking: ThinkingMode = "none",
    temperature: bool = True,
) -> ModelInfo:
    return ModelInfo(
        id_,
        ctx,
        out,
        price_in,
        price_out,
        cached,
        0.0,
        name,
        thinking,
        temperature,
    )


ANTHROPIC_MODELS: dict[str, ModelInfo] = {
    m.id: m
    for m in [
        _claude("claude-fable-5-1", "Claude Fable 5.1", M, 128 * K, 10, 50, "adaptive", False),
        _claude("claude-opus-5-5", "Claude Opus 5.5", M, 128 * K, 4, 20, "adaptive", False),
        _claude("claude-sonnet-5-5", "Claude Sonnet 5.5", M, 128 * K, 2, 10, "adaptive", False),
        _claude("claude-haiku-5-5", "Claude Haiku 5.5", M, 128 * K, 0.10, 0.50, "adaptive", False),
        _claude("claude-fable-5", "Claude Fable 5", M, 128 * K, 10, 50, "adaptive", False),
        _claude("claude-opus-5", "Claude Opus 5", M, 128 * K, 5, 25, "adaptive", False),
        _claude("claude-sonnet-5", "Claude Sonnet 5", M, 128 * K, 2, 10, "adaptive", False),
        _claude("claude-opus-4-8", "Claude Opus 4.8", M, 128 * K, 5, 25, "adaptive"),  # assumed
        _claude("claude-opus-4-7", "Claude Opus 4.7", M, 128 * K, 5, 25, "adaptive"),  # assumed
        _claude("claude-opus-4-6", "Claude Opus 4.6", M, 128 * K, 5, 25, "adaptive"),
        _claude("claude-sonnet-4-6", "Claude Sonnet 4.6", M, 128 * K, 3, 15, "adaptive"),
        _claude("claude-opus-4-5", "Claude Opus 4.5", 200 * K, 64 * K, 5, 25),
        _claude("claude-sonnet-4-5", "Claude Sonnet 4.5", 200 * K, 64 * K, 3, 15),
        _claude("claude-haiku-4-5", "Claude Haiku 4.5", 200 * K, 64 * K, 1, 5),
        _claude("claude-opus-4-1", "Claude Opus 4.1", 200 * K, 32 * K, 15, 75),
        _claude("claude-opus-4-0", "Claude Opus 4", 200 * K, 32 * K, 15, 75),
        _claude("claude-sonnet-4-0", "Claude Sonnet 4", 200 * K, 64 * K, 3, 15),
        _claude("claude-3-7-sonnet-latest", "Claude Sonnet 3.7", 200 * K, 64 * K, 3, 15),
        _claude("claude-3-5-haiku-latest", "Claude Haiku 3.5", 200 * K, 8_192, 0.80, 4, "none"),
    ]
}

OPENAI_MODELS: dict[str, ModelInfo] = {
    m.id: m
    for m in [
        _gpt("gpt-5.4", "GPT-5.4", 400 * K, 128 * K, 2.50, 15, 0.25, "effort", False),
        _gpt("gpt-5.4-mini", "GPT-5.4 mini", 400 * K, 128 * K, 0.75, 4.50, 0.075, "effort", False),
        _gpt("gpt-5.1", "GPT-5.1", 400 * K, 128 * K, 1.25, 10, 0.125, "effort", False),
        _gpt("gpt-5", "GPT-5", 400 * K, 128 * K, 1.25, 10, 0.125, "effort", False),
        _gpt("gpt-5-mini", "GPT-5 mini", 400 * K, 128 * K, 0.25, 2, 0.025, "effort", False),
        _gpt("gpt-5-nano", "GPT-5 nano", 400 * K, 128 * K, 0.05, 0.40, 0.005, "effort", False),
        _gpt("gpt-4.1", "GPT-4.1", 1_047_576, 32_768, 2, 8, 0.50),
        _gpt("gpt-4.1-mini", "GPT-4.1 mini", 1_047_576, 32_768, 0.40, 1.60, 0.10),
        _gpt("gpt-4.1-nano", "GPT-4.1 nano", 1_047_576, 32_768, 0.10, 0.40, 0.025),
        _gpt("gpt-4o", "GPT-4o", 128 * K, 16_384, 2.50, 10, 1.25),
        _gpt("gpt-4o-mini", "GPT-4o mini", 128 * K, 16_384, 0.15, 0.60, 0.075),
        _gpt("o3", "o3", 200 * K, 100 * K, 2, 8, 0.50, "effort", False),
        _gpt("o4-mini", "o4-mini", 200 * K, 100 * K, 1.10, 4.40, 0.275, "effort", False),
    ]
}

_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")

# Aliases the API accepts for the same model.
_ALIASES = {"claude-opus-4": "claude-opus-4-0", "claude-sonnet-4": "claude-sonnet-4-0"}


def _base_id(model_id: str) -> str:
    bare = _DATED.sub("", model_id)
    return _ALIASES.get(bare, bare)


def _default(kind: ProviderKind, model_id: str) -> ModelInfo:
    unknown: dict[str, Any] = {
        "display_name": model_id, "known": False,
        "window_source": "default", "output_source": "default",
    }
    if kind == "anthropic":
        return ModelInfo(model_id, 200 * K, 64 * K, thinking="budget", **unknown)
    if kind == "openai":
        return ModelInfo(model_id, 128 * K, 16_384, **unknown)
    return ModelInfo(model_id, 8_192, 4_096, **unknown)


_SOURCE_FIELDS = {"known", "window_source", "output_source"}


def _apply(info: ModelInfo, override: Mapping[str, Any]) -> ModelInfo:
    names = {f.name for f in fields(ModelInfo)} - {"id"} - _SOURCE_FIELDS
    changes = {k: v for k, v in override.items() if k in names}
    if "context_window" in changes:
        changes["window_source"] = "settings"
    if "max_output_tokens" in changes:
        changes["output_source"] = "settings"
    return replace(info, known=True, **changes) if changes else info


def _positive(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok else None


def with_reported(info: ModelInfo, window: Any = None, output: Any = None) -> ModelInfo:
    """Return ``info`` with the limits a provider reported for the model.

    The provider's numbers come first: they replace the catalog's and the
    defaults (the source becomes ``provider``). A limit the user set
    (``model_overrides``, source ``settings``) is kept only when it is
    smaller, since a request over the provider's own limit is refused anyway.

    Args:
        info: what Parley knows (:func:`lookup`).
        window: the context window the provider reported, tokens (None, 0 or
            a non-integer: not reported).
        output: the output limit it reported, tokens.

    Returns:
        The updated info (``known`` True once the provider gave a window).
    """
    changes: dict[str, Any] = {}
    reported = _positive(window)
    if reported and not (info.window_source == "settings" and info.context_window <= reported):
        changes.update(context_window=reported, window_source="provider", known=True)
    reported = _positive(output)
    if reported and not (info.output_source == "settings" and info.max_output_tokens <= reported):
        changes.update(max_output_tokens=reported, output_source="provider")
    return replace(info, **changes) if changes else info


def lookup(
    kind: ProviderKind, model_id: str, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> ModelInfo:
    """Return what the catalog knows about a model.

    Args:
        kind: the provider's API family.
        model_id: the bare model id; dated snapshots (``claude-sonnet-4-5-20250929``,
            ``gpt-4.1-2025-04-14``) resolve to their alias's entry.
        overrides: from settings, ``{model_id: {field: value}}`` with
            :class:`ModelInfo` field names (``context_window``,
            ``max_output_tokens``, ``input_usd_per_mtok`` …); an override for a
            model the catalog lacks defines it.

    Returns:
        A :class:`ModelInfo` whose ``id`` is ``model_id`` as given; ``known``
        is False when it is a default for an unknown model.
    """
    table = ANTHROPIC_MODELS if kind == "anthropic" else OPENAI_MODELS
    base = _base_id(model_id)
    # A compatible server may serve an OpenAI model name; local ids get local defaults.
    info = table.get(base) if kind != "openai_compatible" else None
    info = replace(info, id=model_id) if info is not None else _default(kind, model_id)
    if overrides:
        for key in (base, model_id):
            if key in overrides:
                info = _apply(info, overrides[key])
    return info


def known_models(kind: ProviderKind) -> list[ModelInfo]:
    """Return the catalog's models of a provider kind, newest first (none for local servers)."""
    if kind == "anthropic":
        return list(ANTHROPIC_MODELS.values())
    if kind == "openai":
        return list(OPENAI_MODELS.values())
    return []


def builtin_model(model_ref: str) -> ModelInfo | None:
    """What the catalog knows of ``model_ref`` when its provider is a built-in one.

    For use before the providers are loaded (their SDKs take seconds to import):
    ``anthropic:…`` and ``openai:…`` references, by the built-in provider ids,
    resolve to their catalog entry; anything else (another provider id, a model
    the catalog does not know, a malformed reference) gives None.
    """
    from parley.core.providers.model_ref import InvalidModelRef, parse_model_ref

    try:
        provider_id, model_id = parse_model_ref(model_ref)
    except InvalidModelRef:
        return None
    if provider_id not in ("anthropic", "openai"):
        return None
    info = lookup(provider_id, model_id)  # type: ignore[arg-type]
    return info if info.known else None
