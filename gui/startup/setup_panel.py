"""First-run set-up: choose a provider, paste a key, pick a model, test, start.

The panel only gathers answers. Testing a connection and saving the
provider are the window's job, passed in as ``tester`` (an async function
returning the provider's models or raising a ``ParleyError`` whose message is
shown as is) and the ``completed`` signal.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from parley.core.errors import ParleyError
from parley.core.providers.capabilities import DEFAULT_URLS
from parley.core.providers.registry import ENV_API_KEY, is_openai_url
from parley.core.tasks import TaskSet
from parley.gui.header.model_picker import model_label
from parley.gui.startup.welcome import card_top
from parley.gui.text.names import add_named_item, bound_combo


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """What the panel knows about one kind of provider."""

    kind: str
    label: str
    default_url: str
    key_placeholder: str
    key_required: bool
    env_var: str | None


CHOICES: tuple[ProviderChoice, ...] = (
    ProviderChoice("anthropic", "Anthropic", DEFAULT_URLS["anthropic"], "sk-ant-…", True,
                   ENV_API_KEY["anthropic"]),
    ProviderChoice("openai", "OpenAI", DEFAULT_URLS["openai"], "sk-…", True,
                   ENV_API_KEY["openai"]),
    ProviderChoice("openai_compatible", "OpenAI-compatible", "http://localhost:11434/v1",
                   "Only if your server asks for one", False, None),
)

COMPATIBLE_HINT = ("Ollama: http://localhost:11434/v1  ·  llama.cpp: http://localhost:8080/v1"
                   "  ·  LM Studio: http://localhost:1234/v1")
#: Said under the address when "OpenAI" is given another server's address
#: (``parley.core.providers.registry.as_used``).
NOT_OPENAI_HINT = ("Not OpenAI's address: Parley uses it as an OpenAI-compatible server "
                   "(the server's own models and limits; tools only if it says it takes them).")

Tester = Callable[[str, str | None, str | None], Awaitable[Sequence[Any]]]


@dataclass(frozen=True, slots=True)
class SetupAnswers:
    """What the person chose: provider kind, server URL (None = default), key, model id;
    ``models``: what the connection test listed with these same kind, URL and key (the
    provider's ``ModelInfo``; empty when not tested with them)."""

    kind: str
    base_url: str | None
    api_key: str | None
    model: str
    models: tuple[Any, ...] = ()


#: Shown on the panel while a message sent before the set-up waits for it.
WAITING_FOR_SETUP = ("Your message is kept: it will be sent as soon as a provider is set "
                     "up here.")


class SetupPanel(QScrollArea):
    """Signals: ``completed(SetupAnswers)`` when "Start chatting" is pressed;
    ``read_first()`` when the person chose to read the chats already stored first."""

    completed = Signal(object)
    read_first = Signal()

    def note_waiting(self, text: str = "") -> None:
        """Say that a message sent before the set-up is kept and goes once it is done
        (``text``: another sentence about the message)."""
        self.waiting.setText(text or WAITING_FOR_SETUP)
        self.waiting.show()

    def offer_reading(self, chats: int) -> None:
        """Offer to read the ``chats`` stored (imported) before setting up (0: hide it)."""
        self.read_button.setText(f"Read your {chats:,} chat{'s' if chats != 1 else ''} first")
        self.read_button.setVisible(chats > 0)

    def __init__(self, tester: Tester | None = None, env: dict[str, str] | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tester = tester
        self.env = env or {}
        self._tasks = TaskSet()
        self.setObjectName("SetupPanel")
        self.setAccessibleName("Set up a provider")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        page = QWidget()
        page.setObjectName("SetupPage")
        self.setWidget(page)
        # What was typed for each kind (server URL, custom URL ticked, key): a key typed for
        # one provider never goes to another's server when the kind is switched.
        self._typed: dict[str, tuple[str, bool, str]] = {}
        self._shown_kind: str | None = None
        #: The last connection test that worked: (kind, URL, key) and what it listed.
        self._tested: tuple[tuple[str, str | None, str | None] | None, tuple[Any, ...]] = (
            None, ())
        self._build(page)
        self.kind_buttons[0].setChecked(True)
        self._kind_changed()

    # -- layout -----------------------------------------------------------
    def _build(self, page: QWidget) -> None:
        card = QFrame(page)
        logo, title, intro = card_top(card)
        #: Says that a message sent while Parley started waits for the set-up.
        self.waiting = QLabel("", card)
        self.waiting.setObjectName("SetupWaiting")
        self.waiting.setAccessibleName("Your message")
        self.waiting.setWordWrap(True)
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting.hide()

        #: Shown when the store already holds chats (an import): read them before set-up.
        self.read_button = QPushButton("", card)
        self.read_button.setObjectName("SetupReadFirst")
        self.read_button.setFlat(True)
        self.read_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.read_button.clicked.connect(self.read_first.emit)
        self.read_button.hide()

        self.kind_group = QButtonGroup(self)
        self.kind_buttons: list[QPushButton] = []
        kinds = QHBoxLayout()
        kinds.setSpacing(8)
        for i, choice in enumerate(CHOICES):
            b = QPushButton(choice.label, card)
            b.setObjectName("ProviderOption")
            b.setCheckable(True)
            b.setAccessibleName(f"Provider: {choice.label}")
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            self.kind_group.addButton(b, i)
            self.kind_buttons.append(b)
            kinds.addWidget(b)
        self.kind_group.idToggled.connect(self._kind_toggled)

        self.custom_url = QCheckBox("Use a custom server URL", card)
        self.custom_url.setAccessibleName("Use a custom server URL")
        self.custom_url.toggled.connect(self._show_fields)
        self.url_label = QLabel("Server URL", card)
        self.url_edit = QLineEdit(card)
        self.url_edit.setAccessibleName("Server URL")
        self.url_label.setBuddy(self.url_edit)
        self.url_hint = QLabel(COMPATIBLE_HINT, card)
        self.url_hint.setObjectName("FieldHint")
        self.url_hint.setWordWrap(True)
        self.url_edit.textChanged.connect(self._show_fields)

        self.key_label = QLabel("API key", card)
        self.key_edit = QLineEdit(card)
        self.key_edit.setAccessibleName("API key")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_label.setBuddy(self.key_edit)
        self.key_hint = QLabel("", card)
        self.key_hint.setObjectName("FieldHint")
        self.key_hint.setWordWrap(True)

        self.test_button = QPushButton("Test connection", card)
        self.test_button.setObjectName("SecondaryButton")
        self.test_button.setAccessibleName("Test connection")
        self.test_button.clicked.connect(self.test_connection)
        self.status = QLabel("", card)
        self.status.setObjectName("SetupStatus")
        self.status.setAccessibleName("Connection status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.model_label = QLabel("Model", card)
        self.model_combo = bound_combo(QComboBox(card))  # a long model name never widens it
        self.model_combo.setAccessibleName("Model")
        self.model_combo.setEnabled(False)
        self.model_combo.setPlaceholderText("Test the connection to list the models")
        self.model_label.setBuddy(self.model_combo)
        self.model_combo.currentTextChanged.connect(self._refresh_start)

        self.start_button = QPushButton("Start chatting", card)
        self.start_button.setObjectName("PrimaryButton")
        self.start_button.setAccessibleName("Start chatting")
        self.start_button.setDefault(True)
        self.start_button.clicked.connect(self._start)

        lay = QVBoxLayout(card)
        lay.setContentsMargins(36, 32, 36, 32)
        lay.setSpacing(8)
        lay.addWidget(logo)
        lay.addWidget(title)
        lay.addWidget(intro)
        lay.addWidget(self.waiting)
        lay.addWidget(self.read_button, 0, Qt.AlignmentFlag.AlignHCenter)
        lay.addSpacing(14)
        lay.addLayout(kinds)
        lay.addSpacing(10)
        for w in (self.custom_url, self.url_label, self.url_edit, self.url_hint):
            lay.addWidget(w)
        lay.addSpacing(4)
        for w in (self.key_label, self.key_edit, self.key_hint):
            lay.addWidget(w)
        lay.addSpacing(4)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.status, 1)
        lay.addLayout(test_row)
        lay.addSpacing(4)
        lay.addWidget(self.model_label)
        lay.addWidget(self.model_combo)
        lay.addSpacing(16)
        lay.addWidget(self.start_button)

        outer = QVBoxLayout(page)
        outer.addStretch(1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 10)
        row.addStretch(1)
        outer.addLayout(row)
        outer.addStretch(2)

    # -- state ------------------------------------------------------------
    @property
    def choice(self) -> ProviderChoice:
        """The provider kind currently chosen."""
        return CHOICES[max(0, self.kind_group.checkedId())]

    def answers(self) -> SetupAnswers:
        """Return the current answers (model as typed or chosen)."""
        c = self.choice
        url = self.url_edit.text().strip() or None
        if c.kind != "openai_compatible" and not self.custom_url.isChecked():
            url = None
        if c.kind == "openai_compatible" and url is None:
            url = c.default_url
        key = self.key_edit.text().strip() or None
        kind_url_key, models = self._tested
        return SetupAnswers(c.kind, url, key, self._model_id(),
                            models if kind_url_key == (c.kind, url, key) else ())

    def _model_id(self) -> str:
        data = self.model_combo.currentData()
        if data and self.model_combo.currentText() == self.model_combo.itemText(
            self.model_combo.currentIndex()
        ):
            return str(data)
        return self.model_combo.currentText().strip()

    def _kind_toggled(self, _id: int, on: bool) -> None:
        if on:
            self._kind_changed()

    def _kind_changed(self, *_args: object) -> None:
        c = self.choice
        self._swap_typed(c.kind)
        self._show_fields()
        env_key = self.env.get(c.env_var or "", "")
        if env_key and not self.key_edit.text():
            self.key_edit.setText(env_key)
        self.key_hint.setText(f"Found {c.env_var} in your environment." if env_key else "")
        self.key_hint.setVisible(bool(env_key))
        self.model_combo.setEditable(c.kind == "openai_compatible")
        self._set_models([])
        self._set_status("", None)

    def _swap_typed(self, kind: str) -> None:
        """Keep what was typed for the kind shown before, and show what was typed for
        ``kind`` (nothing the first time)."""
        if self._shown_kind == kind:
            return
        if self._shown_kind is not None:
            self._typed[self._shown_kind] = (
                self.url_edit.text(), self.custom_url.isChecked(), self.key_edit.text())
        url, custom, key = self._typed.get(kind, ("", False, ""))
        self._shown_kind = kind
        self.url_edit.setText(url)
        self.custom_url.setChecked(custom)
        self.key_edit.setText(key)

    def _show_fields(self, *_args: object) -> None:
        c = self.choice
        compatible = c.kind == "openai_compatible"
        self.custom_url.setVisible(not compatible)
        show_url = compatible or self.custom_url.isChecked()
        for w in (self.url_label, self.url_edit):
            w.setVisible(show_url)
        not_openai = c.kind == "openai" and show_url and self._not_openai_url()
        self.url_hint.setText(NOT_OPENAI_HINT if not_openai else COMPATIBLE_HINT)
        self.url_hint.setVisible(compatible or not_openai)
        self.url_edit.setPlaceholderText(c.default_url)
        self.key_label.setText("API key" if self._key_required() else "API key (optional)")
        self.key_edit.setPlaceholderText(c.key_placeholder)

    def _key_required(self) -> bool:
        """The chosen kind needs a key, and its address is its own (OpenAI's form at
        another server's address is a compatible server: most need none)."""
        c = self.choice
        if c.kind == "openai" and self.custom_url.isChecked() and self._not_openai_url():
            return False
        return c.key_required

    def _not_openai_url(self) -> bool:
        """True when the address typed is another server's than OpenAI's."""
        url = self.url_edit.text().strip()
        if not url:
            return False
        return not is_openai_url(url)

    def _set_models(self, models: Sequence[Any]) -> None:
        self.model_combo.clear()
        for info in models:
            add_named_item(self.model_combo, model_label(info), info.id)
        self.model_combo.setEnabled(bool(models) or self.model_combo.isEditable())
        if models:
            self.model_combo.setCurrentIndex(0)
        self._refresh_start()

    def _set_status(self, text: str, ok: bool | None) -> None:
        self.status.setText(text)
        self.status.setProperty("state", "busy" if ok is None else "ok" if ok else "error")
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)

    def _refresh_start(self, *_args: object) -> None:
        self.start_button.setEnabled(bool(self._model_id()))

    # -- actions ----------------------------------------------------------
    def test_connection(self) -> asyncio.Task[None] | None:
        """Ask the provider for its models; shows success or the error in words."""
        if self.tester is None:
            return None
        a = self.answers()
        c = self.choice
        if self._key_required() and not a.api_key:
            self._set_status(f"Paste your {c.label} API key first.", False)
            self.key_edit.setFocus()
            return None
        self._set_status("Connecting…", None)
        self.test_button.setEnabled(False)
        return self._tasks.spawn(self._test(a), name="setup-test")

    async def _test(self, a: SetupAnswers) -> None:
        assert self.tester is not None
        try:
            result = await check_connection(self.tester, a.kind, a.base_url, a.api_key)
        finally:
            self.test_button.setEnabled(True)
        if not result.ok:
            self._set_status(result.problem or "", False)
            self._set_models([])
            return
        self._tested = ((a.kind, a.base_url, a.api_key), tuple(result.models))
        self._set_status(result.summary(), True)
        if not result.models:
            self.model_combo.setEditable(True)
        self._set_models(result.models)
        self.model_combo.setFocus()

    def _start(self) -> None:
        a = self.answers()
        if not a.model:
            self._set_status("Test the connection and pick a model first.", False)
            return
        self.completed.emit(a)


@dataclass(frozen=True, slots=True)
class ConnectionCheck:
    """The outcome of :func:`check_connection`.

    Attributes:
        models: the provider's models (``ModelInfo``), empty when it failed.
        problem: what went wrong and what to do, in words (None: connected).
        error: the error behind ``problem`` (None: connected, or no answer in time).
        address: the address used when it is not the one typed (a scheme added:
            ``localhost:8080`` → ``http://localhost:8080``), else None.
    """

    models: list[Any]
    problem: str | None = None
    error: ParleyError | None = None
    address: str | None = None

    @property
    def ok(self) -> bool:
        """True when the provider answered."""
        return self.problem is None

    def summary(self) -> str:
        """One line for a connected provider: how many models it offers."""
        count = len(self.models)
        where = f" to {self.address}" if self.address else ""
        if not count:
            return f"Connected{where}, but the server lists no models: type one."
        return f"Connected{where}  ·  {count:,} model{'s' if count != 1 else ''} available"


async def check_connection(tester: Tester, kind: str, base_url: str | None,
                           api_key: str | None, *, again: str = "test again",
                           timeout_s: float | None = None) -> ConnectionCheck:
    """Try a provider's settings before they are saved (first-run set-up, Settings).

    Args:
        tester: ``ProviderHub.test_connection`` (or the like): asks the provider's
            list endpoint, raising a ``ParleyError`` when it cannot.
        kind: ``anthropic``, ``openai`` or ``openai_compatible``.
        base_url: the server address (None: the usual one).
        api_key: the key to try (None: whatever the tester finds).
        again: what the person does after fixing the fields ("test again", "save
            again"), for the problem's wording.
        timeout_s: give up after this many seconds (None: the tester's own timeouts,
            up to minutes for a server that accepts but never answers).

    Returns:
        The models, or the problem in words (:func:`setup_message`; ``error`` is None
        when ``timeout_s`` ran out, an ``InvalidServerAddress`` when ``base_url`` is
        not a valid URL, checked before anything is tried); a ``ParleyError`` is
        never raised.
    """
    from parley.core.providers.address import InvalidServerAddress, check_server_address

    typed = (base_url or "").strip()
    try:  # a malformed address is said as such, and nothing is tried
        used = check_server_address(typed) if typed else None  # as the provider will use it
    except InvalidServerAddress as exc:
        return ConnectionCheck([], exc.message, exc)
    address = used if used != typed else None
    try:
        models = list(await asyncio.wait_for(tester(kind, base_url, api_key), timeout_s))
    except TimeoutError:
        return ConnectionCheck([], f"{used or 'The provider'} did not answer within "
                               f"{timeout_s:g} s. Check the address and your connection.")
    except ParleyError as exc:
        return ConnectionCheck([], setup_message(exc, used, again=again), exc, address)
    return ConnectionCheck(models, address=address)


def setup_message(error: ParleyError, base_url: str | None, *, again: str = "test again"
                  ) -> str:
    """Say what a failed connection test means where the provider's fields are on
    screen (set-up, Settings → Providers), so the fix is "above", not elsewhere.

    Args:
        error: what the tester raised.
        base_url: the address tried (None: the provider's usual one).
        again: the step after fixing the fields ("test again", "save again").
    """
    from parley.core.providers.errors import AuthenticationFailed, NetworkError

    if isinstance(error, AuthenticationFailed):
        if error.missing:
            return f"This provider needs an API key: paste it above, then {again}."
        return ("The key was refused. Check that you pasted the whole key (or create a new "
                f"one in your provider's console), then {again}.")
    if isinstance(error, NetworkError):
        where = base_url or "the provider"
        if error.timed_out:
            return f"{where} did not answer in time. Check the address and your connection."
        return (f"Parley could not reach {where}. Check the address, and that the server is "
                "running (for a local server) or that you are online.")
    return error.message
