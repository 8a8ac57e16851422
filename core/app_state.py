"""Every ``app_state`` key, declared once: name, key shape, value type, owner, meaning.

``app_state`` (a table of sessions.db, beside the ``settings`` that
:mod:`parley.core.settings` declares) keeps what Parley remembers for itself
rather than what the person chose: drafts, the window's place, model lists, the
frozen system prompt of a chat… A key is either one row (``window.geometry``) or
a family of rows, one per session, space or provider (``draft:<session id>``).

Code reads and writes a key through its :class:`StateKey` (``DRAFT.get(store,
session_id)``), never by spelling it: the table below is the one place a key's
name appears (``tests/core/test_app_state.py`` fails on a key spelled elsewhere).
Values are JSON; a value read may come from an older Parley, so its owner checks
its shape (``get`` returns it as stored).

Rows of a deleted session or space go with it
(``parley.core.store.settings_repo.forget_owners``: keys ``<prefix><id>``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeAlias, TypeVar

from parley.core.machine import this_machine

T = TypeVar("T")

#: Whose value a row is, among machines sharing one database (``parley.core.machine``):
#: ``shared`` — one value for every machine;
#: ``machine`` — this machine's own, ``<key>@<machine name>``;
#: ``machine, was shared`` — this machine's own; read falls back to the shared
#: ``<key>`` an older Parley wrote, until this machine writes its own;
#: ``machine on a server`` — this machine's own in a PostgreSQL database, the
#: shared ``<key>`` in a sessions.db file (used by one Parley at a time).
Whose: TypeAlias = Literal["shared", "machine", "machine, was shared", "machine on a server"]
#: What the id after a family's prefix names ("" for a single key).
Per: TypeAlias = Literal["", "session", "space", "provider"]


class StateStore(Protocol):
    """What a key needs of the store: ``parley.core.store.StateStore`` (not imported
    here, so the store's own modules can use this table)."""

    @property
    def on_server(self) -> bool: ...

    async def get_state(self, key: str, default: Any = None) -> Any: ...

    async def set_state(self, key: str, value: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class StateKey(Generic[T]):
    """One ``app_state`` key, or one family of keys ``<name><id>``.

    ``T`` is the type of the values written (:meth:`set`); reads return the JSON as
    stored (Any), checked by the owner.

    Attributes:
        name: the key, or the family's prefix (``"draft:"``).
        shape: the key as stored, for people (``draft:<session id>``).
        value: the value's JSON shape, for people.
        owner: the module that reads and writes it (others go through that module).
        meaning: one sentence: what it keeps and why.
        per: what the id after the prefix names; "" for a single key.
        whose: whose value it is among machines sharing a database (:data:`Whose`).
    """

    name: str
    shape: str
    value: str
    owner: str
    meaning: str
    per: Per = ""
    whose: Whose = "shared"

    def key(self, of: str | None = None) -> str:
        """The key without its machine part: ``name``, or ``name + of`` for a family.

        Raises:
            ValueError: ``of`` is missing for a family, or given for a single key.
        """
        if bool(self.per) != (of is not None):
            raise ValueError(f"app_state key {self.shape}: id {'missing' if self.per else 'given'}")
        return self.name + (of or "")

    def row(self, store: StateStore | None, of: str | None = None) -> str:
        """The key of this machine's row (``key@<machine>`` for a per-machine key).

        Args:
            store: the store (whether it is on a server matters for ``machine on a
                server``; None counts as a sessions.db file).
            of: the session, space or provider id of a family.
        """
        key = self.key(of)
        if self.whose in ("machine", "machine, was shared") or (
                self.whose == "machine on a server" and store is not None and store.on_server):
            return this_machine(key)
        return key

    async def get(self, store: StateStore, of: str | None = None, default: Any = None) -> Any:
        """This machine's value (JSON as stored), or ``default`` when unset.

        Raises:
            StoreError: the store could not be read.
        """
        value = await store.get_state(self.row(store, of), None)
        if value is None and self.whose == "machine, was shared":
            value = await store.get_state(self.key(of), None)  # as an older Parley kept it
        return default if value is None else value

    async def set(self, store: StateStore, value: T | None, of: str | None = None) -> None:
        """Write this machine's value (None removes the row).

        Raises:
            StoreError: the store could not be written.
        """
        await store.set_state(self.row(store, of), value)


# --- the table ---------------------------------------------------------------------------

DRAFT: StateKey[str | dict[str, str]] = StateKey(
    "draft:", "draft:<session id> (draft:new for the new chat)",
    'str, or {"text": str, "edits": turn id} while it edits a sent message',
    "parley.gui.composer.drafts",
    "What was typed in a chat but not sent, kept across switches and restarts.",
    per="session")
LAST_SESSION: StateKey[str] = StateKey(
    "session.last", "session.last@<machine>", "session id",
    "parley.gui.chat.opening", "The chat open when Parley last closed, reopened at start.",
    whose="machine, was shared")
LAST_MODEL: StateKey[str] = StateKey(
    "model.last", "model.last", "provider:model",
    "parley.gui.chat.models", "The model last picked in the model menu (written only).")
SEVERAL_MODELS: StateKey[list[str]] = StateKey(
    "several.models", "several.models", "[provider:model, …]",
    "parley.gui.chat.several", "The models last chosen to answer one message together.")
WINDOW_GEOMETRY: StateKey[str] = StateKey(
    "window.geometry", "window.geometry@<machine>", "base64 of Qt's saveGeometry()",
    "parley.gui.window.layout", "The main window's size and place on this computer's screen.",
    whose="machine, was shared")
WINDOW_SPLITTER: StateKey[list[int]] = StateKey(
    "window.splitter", "window.splitter@<machine>", "[sidebar px, chat px]",
    "parley.gui.window.layout", "The widths of the sidebar and the chat.",
    whose="machine, was shared")
MODELS: StateKey[dict[str, Any]] = StateKey(
    "models:", "models:<provider id>",
    '{"kind", "base_url", "models": [ModelInfo fields]}', "parley.core.providers.hub",
    "The models a provider listed last, shown at start before any server is asked.",
    per="provider")
UNSEEN: StateKey[dict[str, Any]] = StateKey(
    "unseen:", "unseen:<session id>", "Unseen.to_json()", "parley.core.compaction.unseen",
    "Turns the model no longer sees although no summary covers them, and why.",
    per="session")
FROZEN_PROMPT: StateKey[dict[str, Any]] = StateKey(
    "frozen_prompt:", "frozen_prompt:<session id>",
    '{"text": str, "fingerprint": {...}, "frozen_at": epoch ms, "documents": Given.to_json()}',
    "parley.core.tools.system_prompt",
    "A chat's system prompt as last sent, kept byte-identical for the provider's cache.",
    per="session")
TOOLS_ENABLED: StateKey[bool] = StateKey(
    "tools_enabled:", "tools_enabled:<space id>", "bool (absent: the provider's default)",
    "parley.core.tools.executor", "The space's switch of Parley's own tools.", per="space")
TOOLS_UNSUPPORTED: StateKey[list[str]] = StateKey(
    "tools_unsupported", "tools_unsupported", "[provider:model]",
    "parley.core.tools.executor", "Models whose server rejected tools: none are sent to them.")
MEMORY: StateKey[dict[str, Any]] = StateKey(
    "memory:", "memory:<space id>", '{"text": str, "limit": tokens, "updated_at": epoch ms}',
    "parley.core.tools.memory", "The space's memory, put in its chats' system prompt.",
    per="space")
MCP_ALLOWED: StateKey[list[dict[str, str]]] = StateKey(
    "mcp_allowed:", "mcp_allowed:<session id>@<machine>",
    '[{"server", "tool", "program": sha256}]', "parley.core.mcp.approvals",
    "MCP tools allowed without asking in a chat (\u201cAlways for this chat\u201d).",
    per="session", whose="machine")
MCP_ALWAYS: StateKey[list[dict[str, str]]] = StateKey(
    "mcp_always", "mcp_always@<machine>", '[{"server", "tool", "program": sha256}]',
    "parley.core.mcp.approvals",
    "The program each \u201cAlways for this tool\u201d approval was given for.", whose="machine")
MCP_OFF: StateKey[list[str]] = StateKey(
    "mcp_off:", "mcp_off:<space id>", "[server name]", "parley.core.mcp.tools",
    "The MCP servers turned off in a space (every other one is on).", per="space")
MCP_TOOLS: StateKey[dict[str, Any]] = StateKey(
    "mcp_tools:", "mcp_tools:<session id>",
    '{"summary": turn id, "off": [server], "tools": [{"name", "description", '
    '"input_schema", "server", "tool"}]}', "parley.core.mcp.tools",
    "A chat's frozen MCP tool list, kept the same between requests for the cache.",
    per="session")
STOPPED: StateKey[str] = StateKey(
    "stopped:", "stopped:<session id>", "turn id", "parley.core.chat.stopped",
    "The chat's last message, stopped by the person before any reply came (not a crash's).",
    per="session")
RUN_MARKER: StateKey[dict[str, int]] = StateKey(
    "recovery.run", "recovery.run (@<machine> on a server)",
    '{"pid": int, "started_at": epoch ms}', "parley.core.recovery.previous_run",
    "Set while Parley runs: found at start, the previous run did not close.",
    whose="machine on a server")
COMPACTING: StateKey[dict[str, int]] = StateKey(
    "recovery.compacting", "recovery.compacting (@<machine> on a server)",
    "{session id: started_at epoch ms}", "parley.core.recovery.previous_run",
    "The chats a compaction works in, to report one cut short by a crash.",
    whose="machine on a server")
WHOLE_CHECK: StateKey[dict[str, int]] = StateKey(
    "store.whole_check", "store.whole_check", '{"sound_at": epoch ms}',
    "parley.core.store.async_store",
    "When the whole sessions.db was last checked and found sound: checked again a day later.")
SIDEBAR_FOLDS: StateKey[dict[str, list[str]]] = StateKey(
    "sidebar.folds", "sidebar.folds@<machine>",
    '{"spaces": [space id, …], "forks": [session id, …]}', "parley.gui.sidebar.folds",
    "The spaces folded and the chats whose forks are unfolded in the sidebar, kept across "
    "restarts.", whose="machine")
V3_SETTINGS: StateKey[Any] = StateKey(
    "v3_settings", "v3_settings", "the v3 settings text as it was",
    "parley.core.store.upgrade.steps",
    "A v3 settings value that was not a JSON object, kept rather than lost.")

#: The table: every app_state key Parley writes.
APP_STATE: tuple[StateKey[Any], ...] = (
    DRAFT, LAST_SESSION, LAST_MODEL, SEVERAL_MODELS, WINDOW_GEOMETRY, WINDOW_SPLITTER, MODELS,
    UNSEEN, FROZEN_PROMPT, TOOLS_ENABLED, TOOLS_UNSUPPORTED, MEMORY, MCP_ALLOWED, MCP_ALWAYS,
    MCP_OFF, MCP_TOOLS, STOPPED, RUN_MARKER, COMPACTING, WHOLE_CHECK, SIDEBAR_FOLDS, V3_SETTINGS,
)
