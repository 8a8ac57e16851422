"""parley.gui.transcript.rows: which turns are rows, where compaction cards go (no Qt needed)."""

from __future__ import annotations

from parley.core.content import (
    CompactSummaryBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.core.store.outline import Span
from parley.gui.transcript.rows import Transcript, card_count, merge_turns


def t(role: str, tid: str, *blocks) -> Turn:
    return Turn(role, list(blocks) or [TextBlock(tid)], id=tid)


def summary(tid: str, first: str | None, last: str | None, n: int = 0, **kw) -> Turn:
    return Turn("user", [CompactSummaryBlock(f"summary {tid}", n, first, last, **kw)], id=tid)


def keys(rows) -> list[str]:
    return [n.key for n in rows]


def test_plain_turns_are_rows_in_order():
    tr = Transcript([t("user", "u1"), t("assistant", "a1")])
    assert keys(tr.visible_rows()) == ["u1", "a1"]


def test_a_result_only_user_turn_is_folded_into_its_tool_call():
    use = ToolUseBlock("x", "search", {"q": "cats"})
    result = ToolResultBlock("x", (TextBlock("3 cats"),))
    tr = Transcript([t("user", "u1"), t("assistant", "a1", use), t("user", "r1", result),
                     t("assistant", "a2")])
    assert keys(tr.visible_rows()) == ["u1", "a1", "a2"]
    assert tr.result_for("x") is result
    assert tr.row_node("r1") is tr.nodes["a1"]


def test_a_user_turn_with_results_and_text_stays_a_row():
    use = ToolUseBlock("x", "search", {})
    mixed = t("user", "r1", ToolResultBlock("x", ()), TextBlock("also, hurry"))
    tr = Transcript([t("assistant", "a1", use), mixed])
    assert keys(tr.visible_rows()) == ["a1", "r1"]


def test_an_orphan_result_is_shown_where_it_is():
    tr = Transcript([t("user", "r1", ToolResultBlock("nowhere", ()))])
    assert keys(tr.visible_rows()) == ["r1"] and not tr.owns("nowhere")


def test_summary_card_sits_where_its_range_began_and_holds_the_range():
    turns = [t("user", "o1"), t("assistant", "o2"), t("user", "k1"), summary("s", "o1", "o2", 2),
             t("assistant", "k2")]
    tr = Transcript(turns)
    assert keys(tr.visible_rows()) == ["s", "k1", "k2"]
    card = tr.nodes["s"]
    assert card.kind == "card" and keys(card.children) == ["o1", "o2"]
    assert tr.nodes["o1"].depth == 1 and tr.ancestors(tr.nodes["o2"]) == [card]
    card.expanded = True
    assert keys(tr.visible_rows()) == ["s", "o1", "o2", "k1", "k2"]


def test_a_recompaction_nests_the_earlier_card():
    turns = [t("user", "o1"), t("assistant", "o2"), summary("s1", "o1", "o2"),
             t("user", "m1"), t("assistant", "m2"), summary("s2", "o1", "m2"),
             t("user", "k1")]
    tr = Transcript(turns)
    assert keys(tr.visible_rows()) == ["s2", "k1"]
    outer = tr.nodes["s2"]
    # The older card stands where its own range began, inside the newer one.
    assert keys(outer.children) == ["s1", "m1", "m2"]
    inner = tr.nodes["s1"]
    assert inner.parent is outer and keys(inner.children) == ["o1", "o2"]
    assert tr.ancestors(tr.nodes["o1"]) == [outer, inner]


def test_a_recompaction_soon_after_nests_the_earlier_card_stored_after_its_range():
    # Compacted keeping k1..k4; one exchange later compacted again keeping k3..k4, m, r:
    # the new range (o1..k2) ends before where the first summary was stored.
    turns = [t("user", "o1"), t("assistant", "o2"), t("user", "k1"), t("assistant", "k2"),
             t("user", "k3"), t("assistant", "k4"), summary("s1", "o1", "o2", 2),
             t("user", "m"), t("assistant", "r"), summary("s2", "o1", "k2", 4),
             ]
    tr = Transcript(turns)
    assert keys(tr.visible_rows()) == ["s2", "k3", "k4", "m", "r"]
    outer, inner = tr.nodes["s2"], tr.nodes["s1"]
    assert keys(outer.children) == ["s1", "k1", "k2"]
    assert inner.parent is outer and keys(inner.children) == ["o1", "o2"]
    # the same placed by stored positions and spans (a window read from the store)
    seqs = {x.id: i for i, x in enumerate(turns)}
    spans = {"s1": Span("s1", 6, 0, 1, 2, 2, "s2"), "s2": Span("s2", 9, 0, 3, 4, 5)}
    tr = Transcript(turns, seqs=seqs, spans=spans)
    assert keys(tr.visible_rows()) == ["s2", "k3", "k4", "m", "r"]
    assert keys(tr.nodes["s2"].children) == ["s1", "k1", "k2"]
    assert tr.nodes["s2"].missing == 0


def test_legacy_and_dangling_summaries_are_cards_without_turns():
    tr = Transcript([summary("v3", None, None, 12, legacy=True), summary("gone", "x", "y"),
                     t("user", "u1")])
    assert keys(tr.visible_rows()) == ["v3", "gone", "u1"]
    assert tr.nodes["v3"].children is None and tr.nodes["gone"].children is None


def span(sid: str, summary_seq: int, first: int, last: int, outer: str | None = None) -> Span:
    n = last - first + 1
    return Span(sid, summary_seq, first, last, n, n, outer)


def test_a_card_whose_turns_are_not_read_sits_where_its_range_began():
    # read: t2 … t4 and the summary (stored at 5) of a range t0 … t1 that was not read
    turns = [t("user", "t2"), t("assistant", "t3"), t("user", "t4"), summary("s", "t0", "t1", 2)]
    tr = Transcript(turns, seqs={"t2": 2, "t3": 3, "t4": 4, "s": 5},
                    spans={"s": span("s", 5, 0, 1)})
    assert keys(tr.visible_rows()) == ["s", "t2", "t3", "t4"]
    card = tr.nodes["s"]
    assert card.kind == "card" and card.children == [] and card.missing == 2
    assert card_count(card) == 2
    # without positions (the same turns as a plain list) the card had no range: "not kept"
    assert Transcript(turns).nodes["s"].children is None


def test_a_card_in_the_middle_and_its_nested_card_are_placed_by_their_spans():
    spans = {"s2": span("s2", 9, 0, 6), "s1": span("s1", 3, 0, 2, outer="s2")}
    seqs = {"t7": 7, "t8": 8, "s2": 9, "t10": 10}
    turns = [t("user", "t7"), t("assistant", "t8"), summary("s2", "t0", "t6"), t("user", "t10")]
    tr = Transcript(turns, seqs=seqs, spans=spans)
    assert keys(tr.visible_rows()) == ["s2", "t7", "t8", "t10"]
    assert tr.nodes["s2"].missing == 7
    inside = [t("user", "t0"), t("assistant", "t1"), t("user", "t2"), summary("s1", "t0", "t2"),
              t("assistant", "t4"), t("user", "t5"), t("assistant", "t6")]
    more = {"t0": 0, "t1": 1, "t2": 2, "s1": 3, "t4": 4, "t5": 5, "t6": 6}
    tr.nodes["s2"].expanded = True
    merged = merge_turns(turns, inside, {**seqs, **more})
    assert [x.id for x in merged] == [
        "t0", "t1", "t2", "s1", "t4", "t5", "t6", "t7", "t8", "s2", "t10"]
    full = Transcript(merged, previous=tr, seqs={**seqs, **more}, spans=spans)
    assert keys(full.visible_rows()) == ["s2", "s1", "t4", "t5", "t6", "t7", "t8", "t10"]
    assert full.nodes["s2"].missing == 0
    assert keys(full.nodes["s1"].children) == ["t0", "t1", "t2"]


def test_merging_keeps_a_turn_not_saved_yet_at_the_end():
    held = [t("user", "t5"), t("assistant", "live")]
    merged = merge_turns(held, [t("user", "t3"), t("user", "t5")], {"t3": 3, "t5": 5})
    assert [x.id for x in merged] == ["t3", "t5", "live"]


def test_appending_a_result_touches_its_tool_call():
    tr = Transcript([t("assistant", "a1", ToolUseBlock("x", "run", {}))])
    rev = tr.nodes["a1"].rev
    turn = t("user", "r1", ToolResultBlock("x", ()))
    assert not tr.needs_rebuild(turn)
    node, changed = tr.append(turn)
    assert node.hidden and changed == [tr.nodes["a1"]] and tr.nodes["a1"].rev != rev


def test_a_new_summary_needs_a_rebuild_an_update_does_not():
    tr = Transcript([t("user", "u1"), t("assistant", "a1")])
    assert tr.needs_rebuild(summary("s", "u1", "a1"))
    assert not tr.needs_rebuild(Turn("assistant", [TextBlock("longer")], id="a1"))


def test_row_geometry_positions_and_visible_range():
    from parley.gui.transcript.geometry import RowGeometry

    geo = RowGeometry()
    geo.reset([10, 20, 30])
    assert geo.tops == [0, 10, 30, 60] and geo.total == 60
    assert geo.visible(15, 20) == (1, 2) and geo.row_at(-1) == -1 and geo.row_at(99) == 3
    assert geo.set(1, 25) and not geo.set(1, 25)
    geo.recompute()
    assert geo.tops[-1] == 65 and geo.measured == bytearray([0, 1, 0])
    geo.insert(0, [5])
    geo.remove(3, 3)
    assert geo.heights == [5, 10, 25] and geo.tops[-1] == 40
    geo.invalidate()
    assert not any(geo.measured)
