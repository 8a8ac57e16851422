"""The sidebar's folds are kept across restarts (parley.gui.sidebar.folds): a folded space
stays folded, a chat whose forks were unfolded shows them, the rest opens as on a first
start (spaces open, forks folded under their chat); a kept value from elsewhere that makes
no sense is ignored."""

from __future__ import annotations

import pytest

from parley.core.app_state import SIDEBAR_FOLDS
from parley.core.content import TextBlock, Turn

pytestmark = pytest.mark.timeout(90)


def _chat_with_fork(driver, w, title):
    """A saved chat of one exchange with one fork of it; returns (chat id, fork id)."""
    session = driver.run(w.store.create_session(title=title, model=w.chat.current_model()))
    first = driver.run(w.store.append_turn(session.id, Turn("user", [TextBlock("Hello")])))
    driver.run(w.store.append_turn(session.id, Turn("assistant", [TextBlock("Hi.")])))
    fork = driver.run(w.store.fork(session.id, first.id))
    return session.id, fork.id


def _expanded(w, ident):
    model = w.sidebar.model
    return w.sidebar.tree.isExpanded(model.index_of(ident))


def test_folds_made_are_there_after_a_restart(driver):
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    driver.run(w.store.create_session(title="Planning", space_id=work.id))
    unfolded, unfolded_fork = _chat_with_fork(driver, w, "Unfolded by the person")
    left, left_fork = _chat_with_fork(driver, w, "Left as it was")
    driver.run(w.chat.load_sidebar())
    model, tree = w.sidebar.model, w.sidebar.tree
    assert not _expanded(w, unfolded) and not _expanded(w, left)  # forks start folded
    work_row = model.space_index(work.id)
    assert tree.isExpanded(work_row)  # spaces start open

    tree.expand(model.index_of(unfolded))  # as a click on its arrow does
    tree.collapse(work_row)
    driver.until(lambda: w.tasks.pending == 0)
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.sidebar.model.index_of(left_fork).isValid())
    model, tree = w.sidebar.model, w.sidebar.tree
    assert _expanded(w, unfolded)
    assert model.index_of(unfolded_fork).parent() == model.index_of(unfolded)
    assert not _expanded(w, left)
    assert not tree.isExpanded(model.space_index(work.id))

    tree.collapse(model.index_of(unfolded))  # folded again: kept too
    tree.expand(model.space_index(work.id))
    driver.until(lambda: w.tasks.pending == 0)
    kept = driver.run(SIDEBAR_FOLDS.get(w.store))
    assert kept == {"spaces": [], "forks": []}


def test_a_kept_value_that_makes_no_sense_is_ignored(driver):
    w = driver.configured()
    chat, _fork = _chat_with_fork(driver, w, "A chat")
    driver.run(SIDEBAR_FOLDS.set(w.store, {"spaces": "all", "forks": [3, None, chat]}))
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.sidebar.model.index_of(chat).isValid())
    assert _expanded(w, chat)  # the one id that is an id
    assert w.sidebar.folded == set()
