"""Every user setting, declared once: key, type, default, description, experimental flag.

The Settings dialog is generated from :data:`SETTINGS`; code that reads a
setting goes through :class:`Settings` (typed values, defaults, validation)
rather than raw ``store.get_setting`` calls, so a key, its default and its
rules live in one place (as qutebrowser declares its settings).
Values are stored as JSON in the ``settings`` table of sessions.db; an unset
key means its default. What Parley keeps for itself rather than what the person
chose (drafts, the window's place…) is ``app_state``, declared in
:mod:`parley.core.app_state`; ``tests/core/test_settings_reads.py`` fails on a raw
``store.get_setting`` outside this module and the store.
"""

from __future__ import annotations

import logging
import math
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from parley.core.errors import ParleyError

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

Kind: TypeAlias = Literal["bool", "int", "float", "text", "choice", "model", "json"]
Section: TypeAlias = Literal["Providers", "Chat", "Appearance", "Tools", "Compaction", "Backups",
                             "Storage", "Keyboard", "Experimental"]
ChangeListener = Callable[[str, Any], None]

#: The Settings dialog's pages, in order.
SECTIONS: tuple[Section, ...] = ("Providers", "Chat", "Appearance", "Tools", "Compaction",
                                 "Backups", "Storage", "Keyboard", "Experimental")


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting.

    Attributes:
        key: dotted key in the ``settings`` table (``compaction.threshold``).
        kind: value type: ``bool``, ``int``, ``float``, ``text``, ``choice``
            (one of ``choices``), ``model`` (a ``provider:model`` reference) or
            ``json`` (internal structured data edited by its own page).
        default: the value when unset.
        label: the dialog's label, a short phrase.
        description: one sentence for people: what it does.
        section: the dialog page it appears on.
        experimental: shown on the Experimental page, off by default.
        choices: for ``choice``: ``(value, label)`` pairs.
        minimum, maximum: inclusive bounds of ``int`` / ``float`` values.
        optional: None is allowed (``model``: None means "automatic").
        bare_model: ``model`` also takes a bare model id, meaning that model
            of the chat's own provider (``compaction.model``).
        unit: what the number counts ("seconds", "turns"), shown after it.
        multiline: ``text`` edited in a multi-line box.
        in_dialog: False for keys a page of its own manages (provider list).
    """

    key: str
    kind: Kind
    default: Any
    label: str
    description: str
    section: Section
    experimental: bool = False
    choices: tuple[tuple[str, str], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    optional: bool = False
    unit: str = ""
    multiline: bool = False
    in_dialog: bool = True
    bare_model: bool = False


class SettingsError(ParleyError):
    """A setting could not be read or changed (the message says which and why)."""


class InvalidSetting(SettingsError):
    """A value breaks a setting's rules; the stored value is unchanged."""

    def __init__(self, setting: Setting, value: Any, rule: str) -> None:
        shown = repr(value) if not isinstance(value, str) else f"'{value}'"
        super().__init__(
            f"“{setting.label}” {rule}; {shown} is not. The setting was not changed."
        )
        self.key = setting.key
        self.value = value


class UnknownSetting(SettingsError):
    """No setting has this key (a bug in the caller, or a key from a newer Parley)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"Parley has no setting called '{key}'. Nothing was changed.")
        self.key = key


SETTINGS: tuple[Setting, ...] = (
    # Providers: the list and keys are managed by the Providers page (parley.core.providers.hub).
    Setting("providers", "json", [], "Providers",
            "The providers you set up (API keys are kept in the keyring, not here).",
            "Providers", in_dialog=False),
    Setting("default_model", "model", None, "Model for new chats",
            "The provider:model new chats start with.", "Providers", optional=True,
            in_dialog=False),
    Setting("model_overrides", "json", {}, "Model catalog overrides",
            "Context window, output limit or prices of models, by model id.", "Providers",
            in_dialog=False),
    Setting("cache.anthropic_ttl", "choice", "5m", "Anthropic prompt cache lifetime",
            "How long Anthropic keeps a chat's prompt cache after each request; "
            "1 hour costs twice the input price to write.", "Providers",
            choices=(("5m", "5 minutes"), ("1h", "1 hour"))),
    Setting("cache.openai_ttl_estimate_s", "int", 300, "OpenAI prompt cache estimate",
            "OpenAI does not say how long its prompt cache lasts; Parley assumes this long.",
            "Providers", minimum=60, maximum=86_400, unit="seconds"),
    # Chat
    Setting("chat.auto_title", "bool", True, "Name new chats automatically",
            "Give a new chat a title from its first message.", "Chat"),
    Setting("chat.title_model", "model", None, "Title model",
            "The model that names new chats (provider:model, or a model id of the chat's "
            "provider); empty uses a cheap model the chat's provider lists (else the "
            "chat's own).", "Chat",
            optional=True, bare_model=True),
    # Appearance (applied by parley.gui.look.view_prefs)
    Setting("appearance.theme", "choice", "system", "Theme",
            "Light or dark; System follows your desktop (or PARLEY_THEME when it is set).",
            "Appearance", choices=(("system", "System"), ("light", "Light"), ("dark", "Dark"))),
    Setting("appearance.text_size", "choice", "default", "Text size",
            "The size of all text in Parley's windows.", "Appearance",
            choices=(("small", "Small"), ("default", "Default"), ("large", "Large"),
                     ("larger", "Larger"))),
    Setting("appearance.zoom", "int", 100, "Conversation zoom",
            "The conversation's text size, in percent of the rest (Ctrl++, Ctrl+−, Ctrl+0).",
            "Appearance", minimum=50, maximum=300, unit="%", in_dialog=False),
    Setting("tools.max_rounds", "int", 8, "Tool rounds per message",
            "How many times the model may call tools (memory, skills, search) before it "
            "must answer.", "Tools", minimum=1, maximum=100, unit="rounds"),
    Setting("tools.mcp_timeout_s", "float", 60.0, "MCP tool time limit",
            "How long a tool of an MCP server may work before the call is abandoned and the "
            "model is told (a server's own \"timeout\" in mcp.json wins).", "Tools",
            minimum=1, maximum=3600, unit="seconds"),
    Setting("spaces.documents_max_share", "float", 0.25, "Space documents: largest share",
            "A space's documents are sent with every message while, together, they take at "
            "most this share of the model's context window (e.g. 0.25, or 25%); above it "
            "the model searches them instead.", "Chat", minimum=0.01, maximum=0.9),
    Setting("chat.system_prompt", "text", "", "System prompt for new chats",
            "Instructions sent to the model in every new chat; leave empty for none.",
            "Chat", multiline=True, maximum=100_000),
    # Compaction (read by parley.core.compaction.compact)
    Setting("compaction.auto", "bool", True, "Compact long chats automatically",
            "When a chat nears the model's context window, summarize its older turns.",
            "Compaction"),
    Setting("compaction.threshold", "float", 0.8, "Compact when the context is this full",
            "A fraction of the model's context window, e.g. 0.8 (or 80%).", "Compaction",
            minimum=0.2, maximum=0.95),
    Setting("compaction.keep_turns", "int", 4, "Turns kept word for word",
            "The most recent turns stay as they are after a compaction.", "Compaction",
            minimum=0, maximum=100, unit="turns"),
    Setting("compaction.model", "model", None, "Summary model",
            "The model that writes summaries (provider:model, or a model id of the chat's "
            "provider); it is always the one used when set. Empty: while the chat is still "
            "in the provider's prompt cache, the model that answered last writes the "
            "summary, reading the chat from the cache; otherwise a cheap model the chat's "
            "provider lists (else the chat's own).", "Compaction",
            optional=True, bare_model=True),
    Setting("compaction.strategy", "choice", "summary", "Strategy",
            "How automatic compaction makes room: Summary replaces older turns with a "
            "summary; Tail only hides old tool output. Compact now always writes a summary.",
            "Compaction",
            choices=(("summary", "Summary"), ("tail", "Tail (hide old tool output)"))),
    # Backups (read by parley.core.recovery.backup_schedule; the page also shows where they are)
    Setting("backups.interval_minutes", "int", 30, "Back up at most every",
            "While you use Parley, a copy of your chats is made in the backups folder at "
            "most this often (and when you quit), if anything changed.", "Backups",
            minimum=5, maximum=1440, unit="minutes"),
    # Keyboard: edited by its own page (gui/settings/keyboard.py); unset actions use their defaults.
    Setting("keyboard.bindings", "json", {}, "Keyboard shortcuts",
            "The shortcuts you changed: action id → list of key combinations.",
            "Keyboard", in_dialog=False),
    # Experimental
    Setting("experimental.compact_before_cache_expiry", "bool", False,
            "Compact before the cache expires",
            "When a long chat sits idle, compact it about a minute before the provider's "
            "prompt cache expires, so picking it up later costs less. A chat is long when "
            "its last request sent at least 100,000 tokens (or half the automatic-"
            "compaction point, if that is more); the context meter then shows when it "
            "will be compacted. Typing in the chat pauses it until you stop for a few "
            "seconds; sending calls it off until the reply.",
            "Experimental", experimental=True),
)

_BY_KEY: dict[str, Setting] = {s.key: s for s in SETTINGS}


def spec(key: str) -> Setting:
    """Return the declaration of ``key``.

    Raises:
        UnknownSetting: no such setting.
    """
    try:
        return _BY_KEY[key]
    except KeyError:
        raise UnknownSetting(key) from None


def in_section(section: Section) -> list[Setting]:
    """Return the dialog's settings of one page, in declaration order."""
    return [s for s in SETTINGS if s.section == section and s.in_dialog]


def _range_rule(s: Setting, what: str) -> str:
    if s.minimum is not None and s.maximum is not None:
        lo = int(s.minimum) if s.kind == "int" else s.minimum
        hi = int(s.maximum) if s.kind == "int" else s.maximum
        return f"must be {what} from {lo} to {hi}" + (f" {s.unit}" if s.unit else "")
    return f"must be {what}"


def _check_range(s: Setting, value: float, original: Any, what: str) -> None:
    if (s.minimum is not None and value < s.minimum) or (
        s.maximum is not None and value > s.maximum
    ):
        raise InvalidSetting(s, original, _range_rule(s, what))


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _as_bool(s: Setting, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise InvalidSetting(s, value, "must be on or off")


def _as_int(s: Setting, value: Any) -> int:
    rule = _range_rule(s, "a whole number")
    if isinstance(value, bool):
        raise InvalidSetting(s, value, rule)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InvalidSetting(s, value, rule) from None
    if not isinstance(value, int):
        raise InvalidSetting(s, value, rule)
    _check_range(s, value, value, "a whole number")
    return value


def _as_float(s: Setting, value: Any) -> float:
    rule = _range_rule(s, "a number")
    original = value
    if isinstance(value, bool):
        raise InvalidSetting(s, value, rule)
    if isinstance(value, str):
        text = value.strip().replace(",", ".")
        percent = text.endswith("%")
        text = text.removesuffix("%").strip()
        try:
            value = float(text) / 100 if percent else float(text)
        except ValueError:
            raise InvalidSetting(s, original, rule) from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidSetting(s, original, rule)
    _check_range(s, float(value), original, "a number")
    return float(value)


def _as_text(s: Setting, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidSetting(s, value, "must be text")
    if s.maximum is not None and len(value) > s.maximum:
        raise InvalidSetting(
            s, value[:40] + "…", f"must be at most {int(s.maximum):,} characters long"
        )
    return value


def _as_choice(s: Setting, value: Any) -> str:
    values = [v for v, _ in s.choices]
    if value in values:
        return str(value)
    labels = {label.lower(): v for v, label in s.choices}
    if isinstance(value, str) and value.strip().lower() in labels:
        return labels[value.strip().lower()]
    raise InvalidSetting(s, value, "must be one of " + ", ".join(f"'{v}'" for v in values))


def _as_model(s: Setting, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if s.optional:
            return None
        raise InvalidSetting(s, value, "must name a model")
    rule = "must be a model as 'provider:model', e.g. 'anthropic:claude-haiku-4-5'"
    if s.bare_model:
        rule = "must be a model id, or 'provider:model'"
    if not isinstance(value, str) or any(c.isspace() for c in value.strip()):
        raise InvalidSetting(s, value, rule)
    value = value.strip()
    if s.bare_model and ":" not in value:
        return value  # a model of the chat's own provider
    # The reference rules live with the providers (imported late: the SDKs are heavy).
    from parley.core.providers.model_ref import InvalidModelRef, format_model_ref, parse_model_ref

    try:
        return format_model_ref(*parse_model_ref(value))
    except InvalidModelRef:
        raise InvalidSetting(s, value, rule) from None


def _as_json(s: Setting, value: Any) -> Any:
    if not isinstance(value, type(s.default)):
        kind = "a list" if isinstance(s.default, list) else "an object"
        raise InvalidSetting(s, value, f"must be {kind}")
    return value


_COERCE: dict[Kind, Callable[[Setting, Any], Any]] = {
    "bool": _as_bool,
    "int": _as_int,
    "float": _as_float,
    "text": _as_text,
    "choice": _as_choice,
    "model": _as_model,
    "json": _as_json,
}


def validate(key: str, value: Any) -> Any:
    """Check a value against its setting's rules and return it in its stored form.

    Text from a field is accepted where it is unambiguous: ``"on"``/``"off"``
    for booleans, ``"12"`` for whole numbers, ``"0.8"`` or ``"80%"`` for
    fractions, a choice's label for its value, ``""`` for an optional model.

    Args:
        key: a declared setting key.
        value: the proposed value (JSON type or text).

    Returns:
        The value to store (``bool``, ``int``, ``float``, ``str``, None, list, dict).

    Raises:
        UnknownSetting: no such key.
        InvalidSetting: the value breaks the setting's rules (type, range,
            choices, model reference); the message says the rule.
    """
    s = spec(key)
    return _COERCE[s.kind](s, value)


_MISSING: Any = object()


def read(key: str, raw: Any = _MISSING) -> Any:
    """Return the value a stored setting has in effect, by its one declaration.

    Every reader of a setting goes through here (directly, or through
    :meth:`Settings.get` / :meth:`Settings.values`), so the type, bounds,
    choices and default used when reading are the ones :data:`SETTINGS`
    declares and the dialog enforces when writing.

    The rule: an unset value (``raw`` omitted or None) is the default; a
    stored value that breaks the declaration (wrong type, out of bounds, not a
    choice: a hand-edited file or an older Parley's value) is also read as the
    default, and logged; the stored value itself is left as it is.

    Args:
        key: a declared setting key.
        raw: the value as stored (JSON type); omitted when unset.

    Returns:
        The value in its declared type (see :func:`validate`).

    Raises:
        UnknownSetting: no such key.
    """
    s = spec(key)
    if raw is _MISSING or raw is None:
        return s.default
    try:
        return validate(key, raw)
    except InvalidSetting as exc:
        log.warning("ignoring stored %s=%r (%s); using the default", key, raw, exc)
        return s.default


class Settings:
    """Typed access to the settings of one store, with change notification.

    Args:
        store: an ``AsyncStore`` (``get_setting``, ``set_setting``, ``all_settings``).

    Use :meth:`of` to share one instance per store, so that a change made in
    the dialog reaches every listener (e.g. the cache timer) at once.
    """

    _shared: weakref.WeakKeyDictionary[Any, Settings] = weakref.WeakKeyDictionary()

    def __init__(self, store: AsyncStore) -> None:
        self.store = store
        self._listeners: list[ChangeListener] = []

    @classmethod
    def of(cls, store: AsyncStore) -> Settings:
        """Return the shared :class:`Settings` of ``store`` (created on first use)."""
        found = cls._shared.get(store)
        if found is None:
            found = cls._shared[store] = cls(store)
        return found

    def on_change(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(key, value)`` after each change; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def get(self, key: str) -> Any:
        """Return a setting's value, or its default when unset or no longer valid.

        Raises:
            UnknownSetting: no such key.
        """
        spec(key)
        return read(key, await self.store.get_setting(key, _MISSING))

    async def values(self, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Return ``{key: value}`` for ``keys`` (default: every declared setting).

        One store read however many keys: a request takes its settings as one
        snapshot. Each value is read by :func:`read` (unset or invalid: default).

        Raises:
            UnknownSetting: a key is not declared.
        """
        wanted = [s.key for s in SETTINGS] if keys is None else [spec(k).key for k in keys]
        stored = await self.store.all_settings()
        return {key: read(key, stored.get(key, _MISSING)) for key in wanted}

    async def set(self, key: str, value: Any) -> Any:
        """Validate, store and announce a new value; returns the stored form.

        Raises:
            UnknownSetting: no such key.
            InvalidSetting: the value breaks the rules; nothing is written.
            StoreError: sessions.db could not be written; the old value stays.
        """
        clean = validate(key, value)
        await self.store.set_setting(key, clean)
        self._announce(key, clean)
        return clean

    async def reset(self, key: str) -> Any:
        """Remove the stored value so the default applies again; returns the default."""
        s = spec(key)
        await self.store.set_setting(key, None)
        self._announce(key, s.default)
        return s.default

    def _announce(self, key: str, value: Any) -> None:
        for listener in list(self._listeners):
            try:
                listener(key, value)
            except Exception:  # one listener's bug must not stop the others
                log.exception("settings listener failed for %s", key)
