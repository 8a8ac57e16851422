"""Model references: ``"provider_id:model_id"`` strings naming one model of one provider.

Kept apart from :mod:`parley.core.providers.registry` so that code which only reads or
writes references (the sidebar, settings) does not import the provider SDKs,
which take seconds to import on a cold start.
"""

from __future__ import annotations

from parley.core.errors import ParleyError

__all__ = ["InvalidModelRef", "format_model_ref", "parse_model_ref"]


class InvalidModelRef(ParleyError):
    """A model reference is not ``provider:model``."""

    def __init__(self, ref: str) -> None:
        super().__init__(
            f"'{ref}' does not name a model as 'provider:model' "
            "(for example 'anthropic:claude-sonnet-4-5'). Pick a model in the "
            "model picker."
        )
        self.ref = ref


def parse_model_ref(ref: str) -> tuple[str, str]:
    """Split ``"provider_id:model_id"`` at the first colon.

    A bare Claude or GPT id (``claude-…``, ``gpt-…``, ``o3``…) is accepted and
    given the built-in provider.

    Raises:
        InvalidModelRef: empty parts, or a bare id of no known family.
    """
    ref = ref.strip()
    provider_id, sep, model_id = ref.partition(":")
    if sep and provider_id and model_id:
        return provider_id, model_id
    if not sep and ref:
        if ref.startswith("claude-"):
            return "anthropic", ref
        if ref.startswith(("gpt-", "chatgpt-", "o1", "o3", "o4")):
            return "openai", ref
    raise InvalidModelRef(ref)


def format_model_ref(provider_id: str, model_id: str) -> str:
    """Return ``"provider_id:model_id"``."""
    return f"{provider_id}:{model_id}"
