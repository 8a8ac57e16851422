"""Search on the real window: as you type, ranked results with highlighted matches,
scopes, Enter opens the chat at the message with the match highlighted (even far back
in a long chat), and queries that are not plain words never raise."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.gui.commands.message_search import first_match
from parley.gui.dialogs.search import HIT, hit_html, snippet_html
from tests.gui.helpers import search_for

pytestmark = pytest.mark.timeout(60)


def _chat(driver, w, title, texts, space_id=None):
    s = driver.run(w.store.create_session(title=title, space_id=space_id))
    turns = [Turn("user" if i % 2 == 0 else "assistant", [TextBlock(t)])
             for i, t in enumerate(texts)]
    async def fill() -> None:
        for t in turns:
            await w.store.append_turn(s.id, t)

    driver.run(fill(), timeout=20)
    return s.id, turns


def test_enter_opens_the_chat_at_the_message_far_back(driver, qtbot):
    w = driver.configured()
    texts = [f"filler message number {i}" for i in range(260)]
    texts[6] = "We talked about the Alhambra in Granada once."
    sid, turns = _chat(driver, w, "Long chat", texts)
    other, _ = _chat(driver, w, "Other", ["nothing to see", "here"])
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(other)
    driver.until(lambda: w.session_id == other)
    popup = search_for(driver, w, qtbot, "alhambr")  # a prefix, as typed so far
    hits = popup.hits
    assert [h.turn_id for h in hits] == [turns[6].id]
    assert "\x02Alhambra\x03" in hits[0].snippet
    assert "match" in popup.status.text()
    qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id == sid and not popup.isVisible())
    driver.until(lambda: w.transcript.focused_turn_id() == turns[6].id)
    assert w.transcript.list_view.delegate.highlight == (turns[6].id, "Alhambra")
    assert len(w.chat.turns) == 260  # the whole chat was read to reach the message


def test_results_are_ranked_and_scoped(driver, qtbot):
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    a, _ = _chat(driver, w, "Kubernetes notes", ["kubernetes pods and kubernetes services",
                                                 "ok"])
    b, _ = _chat(driver, w, "Misc", ["I once read about kubernetes", "fine"],
                 space_id=work.id)
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(b)
    driver.until(lambda: w.session_id == b)
    popup = search_for(driver, w, qtbot, "kubernetes")
    assert {h.session_id for h in popup.hits} == {a, b}
    assert popup.hits[0].session_id == a  # title and body match: ranked first
    popup.scope_buttons["space"].click()
    driver.until(lambda: popup.search.settled)
    assert {h.session_id for h in popup.hits} == {b}
    assert "in this space" in popup.status.text()
    popup.scope_buttons["session"].click()
    driver.until(lambda: popup.search.settled)
    assert {h.session_id for h in popup.hits} == {b}
    qtbot.keyClick(popup.edit, Qt.Key.Key_Escape)
    assert not popup.isVisible()


def test_a_message_and_the_reply_quoting_it_say_who_wrote_them(driver, qtbot):
    # Trial 16 (shot-88): Ctrl+F "needle150" listed two hits with the same title and the
    # same snippet "…sierra oscar lima foxtrot alpha kilo needle150", nothing saying which
    # was the person's message and which the reply.
    w = driver.configured()
    model = w.chat.current_model()
    s = driver.run(w.store.create_session(title="Imported chat 150 charlie"))
    words = "quebec bravo sierra oscar lima foxtrot alpha kilo needle150"
    asked = Turn("user", [TextBlock(words)])
    answered = Turn("assistant", [TextBlock(f"Answer to: {words}")], model=model)
    driver.run(w.store.append_turn(s.id, asked))
    driver.run(w.store.append_turn(s.id, answered))
    driver.run(w.chat.load_sidebar())
    popup = search_for(driver, w, qtbot, "needle150")
    found = {f.turn_id: f for f in (popup.model.item(r).data(HIT)
                                    for r in range(popup.model.rowCount()))}
    name = w.model_picker.label_of(model)
    assert name and ":" not in name  # a display name, not the provider:model reference
    assert {t: f.author for t, f in found.items()} == {asked.id: "You", answered.id: name}
    # short messages are shown whole: the two snippets differ
    assert found[asked.id].snippet == "quebec bravo sierra oscar lima foxtrot alpha kilo " \
        "\x02needle150\x03"
    assert found[answered.id].snippet.startswith("Answer to: quebec")
    assert "<b" in hit_html(found[asked.id]) and "You:</b>" in hit_html(found[asked.id])
    assert f"{name}:</b>" in hit_html(found[answered.id])
    assert found[answered.id].spoken().startswith(f"Imported chat 150 charlie: {name}: Answer")


ODD_QUERIES = ['"exact phrase', "C++ *", "-minus", "key:value", "(paren", "Привет мир", "東京",
               "🙂", "🙂🙂 !!!", '"" ) OR NOT', "NEAR(a b)", "a" * 1200]


def test_odd_queries_answer_or_explain_never_raise(driver, qtbot):
    w = driver.configured()
    _chat(driver, w, "Mixed", ["Привет мир from 東京 with C++ and key:value 🙂", "ok"])
    driver.run(w.chat.load_sidebar())
    assert w.window_commands.open_search()
    popup = w.search_popup
    said = {}
    for query in ODD_QUERIES:
        popup.edit.setText(query)
        driver.until(lambda: popup.search.settled)
        said[query] = (len(popup.hits), popup.status.text())
    assert all(text for _n, text in said.values())  # a count, "no matches", or the reason
    for query in ("Привет мир", "東京", "key:value", "C++ *"):
        assert said[query][0] == 1, (query, said[query])
    assert "Cannot search" in said["🙂"][1]  # only emoji: the store's reason, in words
    assert "longer than" in said["a" * 1200][1]


def test_search_ignores_a_chat_whose_delete_can_still_be_undone(driver, qtbot):
    from parley.gui import dialogs

    w = driver.configured()
    a, _ = _chat(driver, w, "Zanzibar trip", ["zanzibar beaches", "nice"])
    driver.run(w.chat.load_sidebar())
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(a)
    driver.until(lambda: w.undo.pending)
    popup = search_for(driver, w, qtbot, "zanzibar")
    assert popup.hits == [] and "No matches" in popup.status.text()


def test_snippet_html_escapes_and_marks():
    html = snippet_html("a <b> \x02match\x03 & \x02more\x03…", "#ffee00")
    assert "&lt;b&gt;" in html and "&amp;" in html
    assert html.count('<span style="background:#ffee00; font-weight:600">') == 2
    assert first_match("x \x02Héllo\x03 y") == "Héllo" and first_match("none") is None


def _pasted(n: int, word: str, at: int) -> str:
    """~56 bytes a line, ``word`` on line ``at`` only."""
    return "".join(f"line {i:06d} {word + ' ' if i == at else ''}of the pasted text, "
                   "some words to wrap on\n" for i in range(n))


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_a_word_deep_in_a_huge_message_is_shown_and_opened_where_it_is(driver, qtbot, role):
    """Fresh-user trial: Ctrl+F for a word only deep inside a ~1 MB pasted message (shown
    folded after its first part) showed the message's start as the hit's words, and
    opening it landed at the message's top. The snippet has the words around the match;
    opening it shows the part holding the match, scrolled to it and highlighted."""
    w = driver.configured()
    text = _pasted(18_000, "zebracorn", 15_000)  # ~1 MB, the word at ~840,000
    at = text.index("zebracorn")
    sid = driver.run(w.store.create_session(title="Big paste")).id
    turns = [Turn("user", [TextBlock("read this")]), Turn("assistant", [TextBlock("ok")]),
             Turn(role, [TextBlock(text)]), Turn("user", [TextBlock("thanks")])]

    async def fill() -> None:
        for t in turns:
            await w.store.append_turn(sid, t)

    driver.run(fill(), timeout=20)
    driver.run(w.chat.load_sidebar())
    popup = search_for(driver, w, qtbot, "zebracorn")
    hits = popup.hits
    assert [h.turn_id for h in hits] == [turns[2].id]
    assert "line 015000 \x02zebracorn\x03 of the pasted" in hits[0].snippet
    assert "line 000000" not in hits[0].snippet

    qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id == sid and not popup.isVisible())
    view = w.transcript
    driver.until(lambda: view.focused_turn_id() == turns[2].id)
    assert view.list_view.delegate.highlight == (turns[2].id, "zebracorn")
    row = view.model.row_of(turns[2].id)
    lv = view.list_view
    lv.settle()
    layout = lv.layout_of(row)
    top = lv.visualRect(view.model.index(row)).top()
    found = [(p, p.piece.doc.find("zebracorn")) for p in layout.pieces]
    found = [(p, c) for p, c in found if not c.isNull()]
    assert found, "the part shown does not hold the match"
    placed, cursor = found[0]
    y = top + placed.rect.top() + int(
        placed.piece.doc.documentLayout().blockBoundingRect(cursor.block()).top())
    assert 0 <= y < lv.viewport().height(), "the match is not in view"
    shown = (view.model.rows[row].parts or {}).get(0, 0)
    assert 0 < shown <= at  # a later part, from a little before the match
