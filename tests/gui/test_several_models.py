"""Ask several models in the real window: Ctrl+Shift+Enter, the picker, the columns
streaming side by side, one answer chosen to continue from; one model failing.

Real window, real store file, real Anthropic SDK against the fake provider server (which
answers each model from its own script).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from parley.gui.transcript.compare import STREAMING

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def _ask_three(driver: Any, text: str = "Where to?") -> tuple[Any, list[str]]:
    """A configured window; ``text`` sent with Ctrl+Shift+Enter and the first three models
    checked in the picker with 1, 2, 3 and Enter. Returns the window and those models."""
    w = driver.configured()
    driver.until(lambda: len(w.model_picker.choices) >= 3, timeout=10)
    refs = [ref for _label, ref in w.chat.regen.model_choices()][:3]
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return, CTRL_SHIFT)
    several = w.chat.several
    driver.until(lambda: getattr(several, "picker", None) is not None
                 and several.picker.isVisible())
    picker = several.picker
    for key in (Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3):
        driver.qtbot.keyClick(picker.models, key)
    assert picker.checked() == refs
    driver.qtbot.keyClick(picker.models, Qt.Key.Key_Return)
    return w, refs


def test_three_models_answer_side_by_side_and_one_is_chosen(driver: Any) -> None:
    fake = driver.fake
    names = ["claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"]
    for name in names:  # ~25 chunks 30 ms apart: long enough to see them stream together
        fake.script(f"{name} says: " + "word " * 40, model=name, token_delay_ms=30)
    w, refs = _ask_three(driver)
    assert [r.split(":", 1)[1] for r in sorted(refs)] == sorted(names)
    several = w.chat.several
    driver.until(lambda: several.view is not None and len(several.view.columns) == 3)
    view = several.view

    # All three stream at once: each column has text while another is still writing.
    driver.until(lambda: all(c.text for c in view.columns)
                 and any(c.footer.text() == STREAMING for c in view.columns), timeout=20)
    driver.until(lambda: all(c.usable for c in view.columns), timeout=20)
    driver.settle(w)
    for col in view.columns:  # each with its model's name, its text, its tokens
        model_id = col.model_ref.split(":", 1)[1]
        assert col.body.toPlainText().startswith(f"{model_id} says: word")
        assert "tokens in" in col.footer.text()
    assert view.columns[0].title.text().endswith("·  shown")

    sid = w.chat.session_id
    tree = driver.run(w.store.get_tree(sid))
    prompt = tree[0].turn
    kids = [t for t in tree if t.parent_id == prompt.id]
    assert [t.turn.model for t in kids] == refs  # siblings, each labelled with its model
    first, third = kids[0].turn.id, kids[2].turn.id
    assert [t.id for t in w.chat.turns] == [prompt.id, first]
    driver.until(lambda: w.transcript.branch_of(first) == (1, 3))

    # The third is chosen with the keyboard: the chat continues from it.
    view.activateWindow()
    driver.qtbot.keyClick(view, Qt.Key.Key_3)
    driver.until(lambda: [t.id for t in w.chat.turns] == [prompt.id, third])
    driver.settle(w)
    fake.script("More about it.")
    driver.send("Tell me more", w, wait=True)
    tree = {t.turn.id: t for t in driver.run(w.store.get_tree(sid))}
    path = driver.run(w.store.get_turns(sid))
    assert [t.text() for t in path][2:] == ["Tell me more", "More about it."]
    assert tree[path[2].id].parent_id == third


def test_one_model_failing_leaves_the_other_two(driver: Any) -> None:
    fake = driver.fake
    fake.script("Sonnet answers.", model="claude-sonnet-4-6", token_delay_ms=10)
    fake.fail("bad_request", model="claude-opus-4-6", message="this model is unavailable")
    fake.script("Haiku answers.", model="claude-haiku-4-5", token_delay_ms=10)
    w, refs = _ask_three(driver)
    several = w.chat.several
    driver.until(lambda: several.view is not None and len(several.view.columns) == 3)
    view = several.view
    driver.until(lambda: sum(c.usable for c in view.columns) == 2, timeout=20)
    driver.settle(w)
    failed = next(c for c in view.columns if c.model_ref == "anthropic:claude-opus-4-6")
    assert "unavailable" in failed.footer.text() and not failed.button.isEnabled()
    sid = w.chat.session_id
    answers = sorted(t.turn.text() for t in driver.run(w.store.get_tree(sid))
                     if t.turn.role == "assistant")
    assert answers == ["Haiku answers.", "Sonnet answers."]
    assert w.chat.turns[-1].role == "assistant" and not w.composer_bar.busy


def test_answer_with_several_models_from_the_link_under_the_reply(driver: Any) -> None:
    from parley.gui.transcript.specs import REGENERATE_SEVERAL_HREF

    fake = driver.fake
    w = driver.configured()
    fake.script("The first answer.")
    driver.send("Name a colour", w, wait=True)
    sid, first = w.chat.session_id, w.chat.turns[-1].id
    driver.until(lambda: len(w.model_picker.choices) >= 3, timeout=10)
    fake.script("Opus: blue.", model="claude-opus-4-6")
    fake.script("Haiku: red.", model="claude-haiku-4-5")
    point = w.transcript.anchor_point(first, REGENERATE_SEVERAL_HREF)
    assert point is not None, "no 'with several models…' link under the reply"
    driver.qtbot.mouseClick(w.transcript.list_view.viewport(), Qt.MouseButton.LeftButton,
                            pos=point)
    several = w.chat.several
    driver.until(lambda: several.picker is not None and several.picker.isVisible())
    picker = several.picker
    refs = {picker.models.item(i).data(Qt.ItemDataRole.UserRole): i
            for i in range(picker.models.count())}
    picker.models.setFocus()
    for ref in ("anthropic:claude-opus-4-6", "anthropic:claude-haiku-4-5"):
        driver.qtbot.keyClick(picker.models, Qt.Key.Key_1 + refs[ref])
    driver.qtbot.keyClick(picker.models, Qt.Key.Key_Return)
    driver.until(lambda: several.view is not None
                 and sum(c.usable for c in several.view.columns) == 2, timeout=20)
    driver.settle(w)
    prompt = driver.run(w.store.get_turns(sid))[0]
    kids = [t.turn.text() for t in driver.run(w.store.get_tree(sid))
            if t.parent_id == prompt.id]
    assert kids == ["The first answer.", "Opus: blue.", "Haiku: red."]  # the old one kept
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (2, 3))


def test_a_message_sent_while_they_answer_is_queued_and_follows_the_answer_shown(
        driver: Any) -> None:
    fake = driver.fake
    for name in ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"):
        fake.script(f"{name}: " + "word " * 40, model=name, token_delay_ms=30)
    w, refs = _ask_three(driver)
    several = w.chat.several
    driver.until(lambda: several.view is not None and any(c.text for c in several.view.columns),
                 timeout=20)
    sid = w.chat.session_id
    w.activateWindow()
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "And in winter?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: [m.text for m in w.chat.runs.queue.messages(sid)]
                 == ["And in winter?"] or len(driver.run(w.store.get_turns(sid))) > 2)
    assert w.composer.text() == ""
    # Its own script: the new chat's title request (after the first answer) takes the
    # shared queue's next reply.
    fake.script("Winter answer.", model=refs[0].split(":", 1)[1])
    driver.until(lambda: len(driver.run(w.store.get_turns(sid))) == 4, timeout=30)
    driver.settle(w)
    path = driver.run(w.store.get_turns(sid))
    assert [t.text() for t in path][2:] == ["And in winter?", "Winter answer."]
    assert path[1].model == refs[0]  # it follows the first model's answer, shown
    tree = {t.turn.id: t for t in driver.run(w.store.get_tree(sid))}
    assert tree[path[2].id].parent_id == path[1].id
    assert len([t for t in tree.values() if t.parent_id == path[0].id]) == 3


def test_esc_stops_every_answer_keeping_what_arrived(driver: Any) -> None:
    fake = driver.fake
    for name in ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"):
        fake.script(f"{name}: " + "word " * 400, model=name, token_delay_ms=30)
    w, refs = _ask_three(driver)
    several = w.chat.several
    driver.until(lambda: several.view is not None and len(several.view.columns) == 3
                 and all(c.text for c in several.view.columns), timeout=20)
    w.activateWindow()
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    view = several.view
    driver.until(lambda: all(c.footer.text() == "Stopped" for c in view.columns), timeout=20)
    driver.settle(w)
    assert all(c.usable for c in view.columns)  # what arrived can still be chosen
    sid = w.chat.session_id
    kept = [t.turn for t in driver.run(w.store.get_tree(sid)) if t.turn.role == "assistant"]
    assert len(kept) == 3 and all(t.aborted and t.text().startswith("claude") for t in kept)
    assert not w.composer_bar.busy
