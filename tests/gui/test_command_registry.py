"""Commands are declared once (gui/commands/actions.py) and handled where they are
written: handlers register into the window's registry, checked against the declarations."""

from __future__ import annotations

import pytest

from parley.gui.commands.actions import ACTIONS, by_id, run
from parley.gui.commands.keymap import Keymap
from parley.gui.commands.registry import Commands


def test_a_handler_runs_only_for_a_declared_action_and_only_once() -> None:
    commands = Commands({"session.new", "session.pin"})
    calls: list[str] = []
    commands.handle("session.new", lambda: calls.append("new") or "made")
    with pytest.raises(KeyError, match="session.nwe"):
        commands.handle("session.nwe", lambda: None)  # a typo fails at once
    with pytest.raises(ValueError, match="already has a handler"):
        commands.handle("session.new", lambda: None)
    assert commands.run("session.new") == "made" and calls == ["new"]
    assert commands.run("session.pin") is False  # no handler: unavailable, nothing runs
    assert not commands.available("session.pin")
    assert commands.missing() == {"session.pin"}
    commands.handle("session.new", lambda: "again", replace=True)
    assert commands.run("session.new") == "again"


def test_when_makes_a_handler_unavailable_for_a_while() -> None:
    commands = Commands({"session.pin"})
    ready = False
    commands.handle("session.pin", lambda: "pinned", when=lambda: ready)
    assert not commands.available("session.pin")
    assert commands.run("session.pin") is False
    ready = True
    assert commands.run("session.pin") == "pinned"


def test_the_default_declarations_are_the_actions(qapp) -> None:
    commands = Commands()
    assert commands.missing() == {a.id for a in ACTIONS}
    commands.handle("session.new", lambda: None)
    assert "session.new" not in commands.missing()


def test_default_keys_are_conflict_free(qapp) -> None:
    assert Keymap().conflicts() == []


def test_every_declared_action_has_a_handler_in_the_window(driver, fake_provider) -> None:
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    assert w.commands.missing() == set()
    driver.send("hello", wait=True)
    assert run(w, by_id("message.first")) is True  # the transcript's handler, registered by it
