"""The context-window field of an OpenAI-compatible server's model (Settings → Providers).

Many local servers do not say their window (llama-cpp-python's server, vLLM behind a
proxy…), so Parley assumes a safe 8,192 tokens; this field lets a person give the real
one. It is stored in the ``model_overrides`` setting (``{model id: {"context_window":
tokens}}``), which :class:`parley.core.providers.hub.ProviderHub` reads on ``load``; a window the
server itself names still wins when it is smaller. Emptying the field removes the
override. The source of the number in use is said by the page's limits line.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from parley.core.settings import SettingsError
from parley.gui.settings.widgets import hint


class ProvidersHost(Protocol):
    """What the field uses of the Providers page (``parley.gui.settings.providers.
    ProvidersPage``, a QWidget: the field's parent), typed here so this module does not
    import the page that imports it."""

    @property
    def dialog(self) -> Any: ...  # the Settings dialog (settings, tasks, providers_changed)

    @property
    def hub(self) -> Any: ...  # ProviderHub

    def show_limits(self) -> None: ...

OVERRIDES = "model_overrides"
#: The smallest and largest windows the field takes, tokens.
MIN_WINDOW, MAX_WINDOW = 256, 10_000_000
BAD_WINDOW = (f"Enter the model's context window in tokens, a whole number from "
              f"{MIN_WINDOW:,} to {MAX_WINDOW:,} (empty: use what the server says or the "
              "safe default).")


def parse_window(text: str) -> int | None:
    """The window typed in the field ("2048", "2,048", "32 768"); None when empty.

    Raises:
        ValueError: not a whole number within :data:`MIN_WINDOW`..:data:`MAX_WINDOW`.
    """
    digits = text.replace(",", "").replace(" ", "").replace("_", "").strip()
    if not digits:
        return None
    value = int(digits)
    if not MIN_WINDOW <= value <= MAX_WINDOW:
        raise ValueError(digits)
    return value


class WindowField(QWidget):
    """An editable context window for one compatible server's model (see module docstring).

    Args:
        page: the Providers page (its dialog's settings, hub and tasks are used).
    """

    def __init__(self, page: ProvidersHost) -> None:
        super().__init__(cast(QWidget, page))  # the page widget
        self.page = page
        self.model: str | None = None
        self._shown = ""
        self.edit = QLineEdit(self)
        self.edit.setAccessibleName("Context window")
        self.edit.setPlaceholderText("Tokens, e.g. 2048")
        self.error = hint("", self, error=True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.edit)
        lay.addWidget(self.error)
        self.edit.editingFinished.connect(
            lambda: self.page.dialog.tasks.spawn(self.apply(), name="context window"))

    def show_for(self, model: str | None, info: Any) -> None:
        """Show the window in use for ``model`` (None: nothing to edit)."""
        self.model = model
        self._shown = f"{info.context_window}" if model and info is not None else ""
        self.edit.setText(self._shown)
        self.error.setVisible(False)

    async def apply(self) -> None:
        """Store the typed window in ``model_overrides`` (nothing when unchanged), reload
        the hub so it is used at once, and show the limits again."""
        text = self.edit.text()
        if self.model is None or text.strip() == self._shown:
            return
        try:
            window = parse_window(text)
        except ValueError:
            self.error.setText(BAD_WINDOW)
            self.error.setVisible(True)
            return
        settings = self.page.dialog.settings
        overrides = dict(await settings.get(OVERRIDES) or {})
        entry = dict(overrides.get(self.model) or {})
        if window is None:
            entry.pop("context_window", None)
        else:
            entry["context_window"] = window
        if entry:
            overrides[self.model] = entry
        else:
            overrides.pop(self.model, None)
        try:
            await settings.set(OVERRIDES, overrides)
        except SettingsError as exc:
            self.error.setText(exc.message)
            self.error.setVisible(True)
            return
        self.error.setVisible(False)
        await self.page.hub.load()
        self.page.show_limits()
        self.page.dialog.providers_changed.emit()
