"""The bar's "Not saved: …" goes as soon as a message is saved again (real window, real
PostgreSQL server stopped and started again)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt


def _bar(window: Any) -> str:
    bar = window.chat.save_status.bar
    return str(bar.label.text()) if bar.isVisible() else ""


def test_not_saved_goes_once_the_message_is_saved(postgres_own_server, driver,
                                                  fake_provider):
    url = postgres_own_server.new_database()
    window = driver.open(env={"PARLEY_DATABASE_URL": url})
    driver.set_up_anthropic(window)
    postgres_own_server.pause()
    try:
        driver.send("typed while the server is away")
        driver.until(lambda: "PostgreSQL server cannot be reached" in _bar(window), 20)
    finally:
        postgres_own_server.resume()
    fake_provider.script("Saved now.")
    window.composer.setFocus()
    driver.qtbot.keyClick(window.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text(window) == "Saved now.", 20)
    assert "Not saved" not in _bar(window)  # at once, not 5-15 s later
