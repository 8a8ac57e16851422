"""Compaction settings and the default summary model.

The keys below are declared once in ``parley.core.settings`` (type, bounds,
default, the Settings page) and read through that declaration
(:meth:`parley.core.settings.Settings.values`: a stored value that breaks it is read
as its default); the table repeats the defaults for readers:

======================  =======  ==========================================
key                     default  meaning
======================  =======  ==========================================
``compaction.auto``     True     compact automatically before a request
``compaction.threshold`` 0.8     fraction (0.2–0.95) of the context window
                                 that triggers it
``compaction.keep_turns`` 4      recent turns kept verbatim (0–100)
``compaction.model``    None     summary model (``provider:model`` of a set-up
                                 provider, or a bare id without a colon: that
                                 model of the conversation's provider); None:
                                 automatic (``parley.core.providers.cheap_models``)
``compaction.strategy`` summary  ``summary`` (write a summary) or ``tail``
                                 (hide older tool output on the wire)
======================  =======  ==========================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from parley.core.errors import ParleyError
from parley.core.providers.model_ref import format_model_ref, parse_model_ref
from parley.core.settings import Settings, SettingsError, spec

if TYPE_CHECKING:
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore

Strategy: TypeAlias = Literal["summary", "tail"]

KEY_AUTO = "compaction.auto"
KEY_THRESHOLD = "compaction.threshold"
KEY_KEEP_TURNS = "compaction.keep_turns"
KEY_MODEL = "compaction.model"
KEY_STRATEGY = "compaction.strategy"

KEYS = (KEY_AUTO, KEY_THRESHOLD, KEY_KEEP_TURNS, KEY_MODEL, KEY_STRATEGY)

DEFAULT_AUTO: bool = spec(KEY_AUTO).default
DEFAULT_THRESHOLD: float = spec(KEY_THRESHOLD).default
DEFAULT_KEEP_TURNS: int = spec(KEY_KEEP_TURNS).default
DEFAULT_STRATEGY: Strategy = spec(KEY_STRATEGY).default


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """The compaction settings in effect.

    Attributes:
        auto: compact automatically before a request that reaches the threshold.
        threshold: fraction of the model's context window (tokens) at which
            auto-compaction fires, within the declared 0.2–0.95.
        keep_turns: recent turns kept verbatim, within the declared 0–100.
        model: the summary model as set, or None for the default.
        strategy: ``summary`` or ``tail``.
    """

    auto: bool = DEFAULT_AUTO
    threshold: float = DEFAULT_THRESHOLD
    keep_turns: int = DEFAULT_KEEP_TURNS
    model: str | None = None
    strategy: Strategy = DEFAULT_STRATEGY


async def load_settings(store: AsyncStore) -> CompactionSettings:
    """Read the compaction settings in one store read, each through its declaration.

    A stored value of the wrong type or out of its declared bounds is read as
    its default (the rule of :func:`parley.core.settings.read`).

    Args:
        store: an ``AsyncStore`` (``all_settings`` awaited).
    """
    return from_values(await Settings.of(store).values(KEYS))


def from_values(v: Mapping[str, Any]) -> CompactionSettings:
    """The compaction settings of a snapshot read with
    :meth:`parley.core.settings.Settings.values` (its ``KEYS`` included).

    Raises:
        KeyError: the snapshot lacks one of :data:`KEYS`.
    """
    return CompactionSettings(
        auto=v[KEY_AUTO],
        threshold=v[KEY_THRESHOLD],
        keep_turns=v[KEY_KEEP_TURNS],
        model=v[KEY_MODEL],
        strategy=v[KEY_STRATEGY],
    )


class ModelProviderNotSetUp(SettingsError):
    """A model setting being saved names a provider that is not set up; nothing is stored.

    Attributes:
        key: the setting (``compaction.model``, ``chat.title_model``).
        ref: the value as typed.
        provider_id: the provider part of ``ref``.
    """

    def __init__(self, key: str, ref: str, provider_id: str, set_up: Sequence[str]) -> None:
        label = spec(key).label
        hint = ""
        if provider_id not in ("anthropic", "openai") and set_up:
            hint = (f" A model id with a colon needs its provider in front, "
                    f"e.g. '{set_up[0]}:{ref}'.")
        super().__init__(
            f"“{label}” names the provider '{provider_id}', which is not set up: pick a "
            f"model from the list, or set '{provider_id}' up in Settings → Providers "
            f"first.{hint} The setting was not changed."
        )
        self.key, self.ref, self.provider_id = key, ref, provider_id


class UnusableModelSetting(ParleyError):
    """A stored model setting names a provider that is not set up (found when it is used).

    Attributes:
        key: the setting (``compaction.model``, ``chat.title_model``).
        ref: the stored value.
        provider_id: the provider part of ``ref``.
    """

    def __init__(self, key: str, ref: str, provider_id: str) -> None:
        s = spec(key)
        name = s.label[0].lower() + s.label[1:]
        super().__init__(
            f"The {name} {ref} names a provider that is not set up ('{provider_id}'), so "
            f"nothing was sent to it and nothing was changed. Set '{provider_id}' up in "
            f"Settings → Providers, or change the {name} in Settings → {s.section}."
        )
        self.key, self.ref, self.provider_id = key, ref, provider_id


def _provider_part(setting: str) -> str | None:
    """The provider id a model setting names; None for a bare id (no colon)."""
    head, sep, _rest = setting.strip().partition(":")
    return head if sep else None


def check_model_setting(key: str, value: str | None, provider_ids: Sequence[str]) -> None:
    """Refuse a model setting whose provider is not set up (the dialog calls it on save).

    Args:
        key: a ``model`` setting of ``parley.core.settings`` (``compaction.model`` …).
        value: its value after ``parley.core.settings.validate``: None (automatic), a
            bare model id without a colon (that model of the chat's provider),
            or ``provider:model``.
        provider_ids: the ids of the providers that are set up (``hub.configs``).

    Raises:
        ModelProviderNotSetUp: ``value`` has a colon and the part before it is
            not one of ``provider_ids`` (``llama3.2:3b`` therefore needs its
            provider in front: ``ollama:llama3.2:3b``).
    """
    pid = _provider_part(value) if value else None
    if pid is not None and pid not in provider_ids:
        raise ModelProviderNotSetUp(key, value or "", pid, list(provider_ids))


def chosen_model_ref(
    hub: ProviderHub, conversation_ref: str, setting: str | None, *, key: str = KEY_MODEL
) -> str | None:
    """Return the ``provider:model`` a model setting names, or None when it is automatic.

    Args:
        hub: the ``ProviderHub`` (``configs`` are the set-up providers).
        conversation_ref: the conversation's model reference.
        setting: the model setting (``compaction.model``): ``provider:model``
            whose provider is set up; a bare model id without a colon, meaning
            that model of the conversation's provider; None (or blank) for
            automatic (``parley.core.providers.cheap_models.cheap_model_ref``).
        key: which setting ``setting`` is (for the error's wording).

    Raises:
        InvalidModelRef: ``conversation_ref`` is not ``provider:model``.
        UnusableModelSetting: ``setting`` has a colon and names a provider that
            is not set up; it is never sent to another provider.
    """
    pid, _model_id = parse_model_ref(conversation_ref)
    setting = setting.strip() if setting else None
    if not setting:
        return None
    head = _provider_part(setting)
    if head is None:
        return format_model_ref(pid, setting)
    if any(c.id == head for c in hub.configs):
        return setting
    raise UnusableModelSetting(key, setting, head)
