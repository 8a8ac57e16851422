"""Full-text search: ranking, snippets, scripts, scopes, and whatever a person types."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.core.content import (
    CompactSummaryBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.core.store import Store
from parley.core.store.errors import InvalidSearchQuery
from parley.core.store.postgres.store import PgStore
from parley.core.store.query import parse
from parley.core.store.schema import SCOPE_MARK
from parley.core.store.snippets import compile_phrases, first_match, make_snippet, plain_words


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def corpus(request, tmp_path_factory):
    """One store with a varied corpus, shared by the read-only tests of this module
    (once on a sessions.db file, once on PostgreSQL)."""
    if request.param == "postgresql":
        store = PgStore.open_url(request.getfixturevalue("postgres_server").new_database())
    else:
        store = Store.open(tmp_path_factory.mktemp("search") / "sessions.db")
    work = store.create_space("Work")
    ids = {}

    def add(key, text, title=None, space=None, role="user", blocks=None):
        s = store.create_session(title=title, space_id=space)
        t = store.append_turn(s.id, Turn(role, blocks or [TextBlock(text)]))
        ids[key] = (s.id, t.id)

    add("cafe", "The best café in Lisbon serves pastéis de nata.", title="Lisbon trip")
    add("cafe2", "A cafe, a cafe, a cafe: cafe everywhere.", space=work.id)
    add("zh", "我喜欢吃苹果，也喜欢东京的寿司。")
    add("ja", "東京都に住んでいます。ラーメンが好きです。")
    add("ko", "서울에서 만나요")
    add("ar", "كَتَبَ الطالبُ الدرسَ في المكتبة")
    add("hi", "मुझे हिन्दी भाषा पसंद है")
    add("ru", "Новогодняя ёлка стоит в зале")
    add("th", "สวัสดีครับ ยินดีต้อนรับ")
    add(
        "tool",
        "",
        blocks=[
            ToolUseBlock("call_1", "shell", {"command": "grep -rn needle haystack/"}),
        ],
        role="assistant",
    )
    add(
        "result",
        "",
        blocks=[
            ToolResultBlock("call_1", (TextBlock("found the needleinresult here"),), is_error=True),
            ImageBlock("image/png", data="QmFzZTY0c2VjcmV0"),
        ],
    )
    add("think", "", blocks=[ThinkingBlock("pondering quaternions deeply")], role="assistant")
    add("summary", "", blocks=[CompactSummaryBlock("we discussed zeppelins at length")])
    add("long", "word " * 200 + "the hidden treasure is here " + "filler " * 200)
    add("title-only", "nothing relevant", title="Quarterly budget review", space=work.id)
    add("phrase", "red apple and green pear; green apple and red pear")
    yield store, ids, work
    store.close()


def hit_keys(ids, hits):
    by_turn = {t: k for k, (_, t) in ids.items()}
    by_session = {s: k for k, (s, _) in ids.items()}
    return [by_turn[h.turn_id] if h.turn_id else "title:" + by_session[h.session_id] for h in hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cafe", {"cafe", "cafe2"}),
        ("café", {"cafe", "cafe2"}),
        ("CAFÉ Lisbon", {"cafe"}),
        ("pasteis", {"cafe"}),
        ("苹果", {"zh"}),
        ("东京", {"zh"}),
        ("東京", {"ja"}),
        ("ラーメン", {"ja"}),
        ("서울", {"ko"}),
        ("كتب", {"ar"}),
        ("الطالب", {"ar"}),
        ("हिन्दी", {"hi"}),
        ("елка", {"ru"}),
        ("ёлка", {"ru"}),
        ("ยินดี", {"th"}),
        ("needle", {"tool"}),
        ("needleinresult", {"result"}),
        ("QmFzZTY0c2VjcmV0", set()),
        ("quaternions", {"think"}),
        ("zeppelins", {"summary"}),
        ("treasure", {"long"}),
    ],
)
def test_finds_text_in_any_script_and_block(corpus, query, expected):
    store, ids, _ = corpus
    keys = {k for k in hit_keys(ids, store.search(query + " ")) if not k.startswith("title:")}
    assert keys == expected


def test_ranking_prefers_titles_and_frequent_terms(corpus):
    store, ids, _ = corpus
    assert hit_keys(ids, store.search("cafe "))[:2] == ["cafe2", "cafe"]
    assert hit_keys(ids, store.search("lisbon "))[0] == "title:cafe"
    hits = store.search("cafe ")
    assert [h.rank for h in hits] == sorted(h.rank for h in hits)


def test_title_hits_have_no_turn(corpus):
    store, ids, _ = corpus
    [hit] = store.search("quarterly")
    assert hit.turn_id is None
    assert hit.session_id == ids["title-only"][0]
    assert hit.session_title == "Quarterly budget review"
    assert hit.snippet == "\x02Quarterly\x03 budget review"


def test_snippets_mark_matches_and_cut_long_text(corpus):
    store, _, _ = corpus
    [hit] = store.search("treasure")
    assert "\x02treasure\x03" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 200
    [cafe] = [h for h in store.search("cafe lisbon") if h.turn_id]
    assert "\x02café\x03" in cafe.snippet and "\x02Lisbon\x03" in cafe.snippet
    [zh] = store.search("苹果")
    assert "\x02苹果\x03" in zh.snippet
    [ar] = store.search("كتب")
    assert "\x02كَتَبَ\x03" in ar.snippet


def test_last_word_is_a_prefix_while_typing(corpus):
    store, ids, _ = corpus
    assert set(hit_keys(ids, store.search("quatern"))) == {"think"}
    assert store.search("quatern ") == []
    assert store.search('"quatern"') == []


def test_quoted_phrase_needs_adjacent_words(corpus):
    store, ids, _ = corpus
    assert hit_keys(ids, store.search('"green apple"')) == ["phrase"]
    assert store.search('"apple green"') == []
    assert hit_keys(ids, store.search("apple green")) == ["phrase"]


def test_scopes(corpus):
    store, ids, work = corpus
    sid = ids["cafe"][0]
    assert hit_keys(ids, store.search("cafe", session_id=sid)) == ["cafe"]
    assert hit_keys(ids, store.search("lisbon", session_id=sid)) == ["title:cafe", "cafe"]
    assert hit_keys(ids, store.search("cafe", space_id=work.id)) == ["cafe2"]
    assert hit_keys(ids, store.search("quarterly", space_id=work.id)) == ["title:title-only"]
    assert store.search("quarterly", space_id="default") == []
    assert len(store.search("cafe", limit=1)) == 1
    assert store.search("cafe", limit=0) == []


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_finds_nothing(corpus, query):
    assert corpus[0].search(query) == []


@pytest.mark.parametrize(
    "query",
    [
        'cafe"',
        '"cafe',
        'ca"fe',
        "cafe*",
        "*cafe",
        "-cafe",
        "cafe -x",
        "title:cafe",
        "(cafe",
        "cafe)",
        "cafe AND",
        "OR cafe",
        "NOT cafe",
        "NEAR(cafe lisbon)",
        "^cafe",
        "cafe'",
        "c\\afe",
        "{cafe}",
        "cafe 😀",
        "cafe%_",
        "café+",
        "cafe;DROP TABLE turns",
    ],
)
def test_punctuation_and_operators_are_plain_text(corpus, query):
    store, ids, _ = corpus
    hits = store.search(query)
    # No FTS5 operator took effect: nothing but the two chats saying "cafe" can match
    # (a NOT, a column filter or a bare * would reach the other chats or fail).
    assert {h.session_id for h in hits} <= {ids["cafe"][0], ids["cafe2"][0]}
    if query in _JUST_CAFE:  # punctuation around the one word: the word's own hits
        assert {h.session_id for h in hits} == {ids["cafe"][0], ids["cafe2"][0]}
        assert [(h.session_id, h.turn_id) for h in hits] == [
            (h.session_id, h.turn_id) for h in store.search("cafe")
        ]
    assert store.get_turns(ids["cafe"][0])  # nothing was dropped


_JUST_CAFE = {'cafe"', '"cafe', "cafe*", "*cafe", "-cafe", "(cafe", "cafe)", "^cafe",
              "cafe'", "{cafe}", "cafe 😀", "cafe%_", "café+"}


@pytest.mark.parametrize("query", ['"', "((", "*", "-", ":", "😀", "🎉🎉", '""', "…", "x" * 1001])
def test_nothing_searchable_is_a_clear_error(corpus, query):
    with pytest.raises(InvalidSearchQuery) as info:
        corpus[0].search(query)
    assert "Cannot search for" in str(info.value)


def test_parse_builds_only_quoted_phrases():
    parsed = parse('say "hello world" NOT (x) 東京 cafe')
    assert parsed is not None
    assert parsed.match == '"say" "hello world" "NOT" "x" "東 京" "cafe"*'
    # A 3-letter last word is a prefix only where the index has a 3-character prefix index.
    assert parse("say caf").match == '"say" "caf"'  # type: ignore[union-attr]
    assert parse("say caf", min_prefix=3).match == '"say" "caf"*'  # type: ignore[union-attr]
    assert parse("東京") is not None and parse("東京").match == '"東 京"'  # type: ignore[union-attr]
    assert parse("a").match == '"a"'  # type: ignore[union-attr]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=30))
def test_any_text_is_a_result_or_invalid_query(corpus, query):
    try:
        hits = corpus[0].search(query)
    except InvalidSearchQuery:
        return
    assert all("\x02" not in h.snippet or "\x03" in h.snippet for h in hits)


def _rename_edit_delete(store):
    """Rename a chat, edit its turn and delete it, checking search follows each step."""
    s = store.create_session(title="Alpha plans")
    t = store.append_turn(s.id, Turn("user", [TextBlock("bravo charlie")]))
    store.rename_session(s.id, "Delta plans")
    assert store.search("alpha") == []
    assert store.search("delta")[0].turn_id is None
    store.set_auto_title(s.id, "never")
    store.upsert_turn(s.id, Turn("user", [TextBlock("echo")], id=t.id))
    assert store.search("bravo") == []
    assert store.search("echo")[0].turn_id == t.id
    store.delete_session(s.id)
    assert store.search("echo") == [] and store.search("delta") == []


def test_index_follows_renames_edits_and_deletes(any_db):
    _rename_edit_delete(any_db)


def test_index_follows_deleted_turns_branches_and_compactions(any_db):
    store = any_db
    s = store.create_session(title="Garden")
    ask = store.append_turn(s.id, Turn("user", [TextBlock("which tulips for spring")]))
    reply = store.append_turn(s.id, Turn("assistant", [TextBlock("plant crocuses early")]))
    later = store.append_turn(s.id, Turn("user", [TextBlock("and daffodils")]))
    assert store.delete_turns(s.id, [later.id]) == 1
    assert store.search("daffodils") == []
    store.branch_before(s.id, reply.id)  # Regenerate: the reply stays, on its branch
    new = store.append_turn(s.id, Turn("assistant", [TextBlock("plant irises instead")]))
    [hit] = store.search("crocuses")
    assert (hit.turn_id, hit.session_id) == (reply.id, s.id)  # itself: nothing copied
    store.record_compaction(s.id, Turn("user", [CompactSummaryBlock("we chose irises")]),
                            first_turn_id=ask.id, last_turn_id=new.id, replaced_count=2)
    assert {h.turn_id for h in store.search("irises")} >= {new.id}  # the turns stay found
    [summary] = [h for h in store.search("chose") if h.turn_id]
    assert summary.session_id == s.id
    assert store.delete_turns(s.id, [reply.id]) == 1  # the other branch goes
    assert store.search("crocuses") == []
    assert [h.turn_id for h in store.search("tulips") if h.turn_id] == [ask.id]


def test_fts_index_holds_nothing_of_a_deleted_chat(tmp_path):
    # SQLite's own index tables (PostgreSQL's generated column goes with its row).
    with Store.open(tmp_path / "s.db") as store:
        _rename_edit_delete(store)
        con = store._con  # noqa: SLF001
        assert con is not None
        with con.begin():
            con.exec_driver_sql("INSERT INTO search_fts(search_fts) VALUES ('integrity-check')")
            assert con.exec_driver_sql("SELECT count(*) FROM search_fts_docsize").scalar() == 0


def test_ranking_window_keeps_the_newest_matches_and_every_title(any_db, monkeypatch):
    from parley.core.store import search as search_module

    monkeypatch.setattr(search_module, "RECENT_WINDOW", 3)
    with any_db as store:
        old = store.create_session(title="walrus facts")
        turns = [
            store.append_turn(old.id, Turn("user", [TextBlock(f"walrus number {i}")]))
            for i in range(10)
        ]
        hits = store.search("walrus")  # the 3 newest turns ranked, and the title
        assert {h.turn_id for h in hits} == {None} | {t.id for t in turns[-3:]}
        scoped = store.search("walrus", session_id=old.id)
        assert len(scoped) == 4
        monkeypatch.setattr(search_module, "RECENT_WINDOW", 100)
        assert len(store.search("walrus")) == 11


def test_scope_token_is_not_searchable_text(any_db):
    with any_db as store:
        s = store.create_session(title="x")
        store.append_turn(s.id, Turn("user", [TextBlock("plain words")]))
        token = SCOPE_MARK + s.id.encode().hex()
        with pytest.raises(InvalidSearchQuery):
            store.search(SCOPE_MARK)
        assert store.search(token) == []
        assert store.search(s.id) == []
        assert store.search(s.id.encode().hex()) == []
        assert [h.session_id for h in store.search("plain", session_id=s.id)] == [s.id]


def test_common_words_list_newest_first(any_db, monkeypatch):
    from parley.core.store import search as search_module

    monkeypatch.setattr(search_module, "COMMON_ROWS", 2)
    with any_db as store:
        a = store.create_session(title="otter notes")
        turns = [
            store.append_turn(a.id, Turn("user", [TextBlock(f"otter {'otter ' * i}")]))
            for i in range(5)
        ]
        hits = store.search("otter")
        assert [h.turn_id for h in hits] == [None] + [t.id for t in reversed(turns)]
        assert {h.rank for h in hits} == {0.0}
        rare = store.search("otter", limit=2)
        assert len(rare) == 2
        monkeypatch.setattr(search_module, "COMMON_ROWS", 100)
        ranked = store.search("otter")
        assert ranked[0].turn_id is None  # the title weighs most
        assert ranked[1].turn_id == turns[4].id  # then the turn saying it most often
        assert all(h.rank < 0 for h in ranked)


def test_a_rare_phrase_of_a_common_word_lists_newest_first(any_db, monkeypatch):
    # Common is a word's count, not the phrase's (checking a phrase on PostgreSQL reads
    # every row holding its words): "otter pup" is rare, "otter" is common.
    from parley.core.store import search as search_module

    monkeypatch.setattr(search_module, "COMMON_ROWS", 2)
    with any_db as store:
        s = store.create_session(title="notes")
        pups = []
        for i in range(6):
            store.append_turn(s.id, Turn("user", [TextBlock(f"otter number {i}")]))
            if i in (1, 4):  # 2 turns: not common
                pups.append(store.append_turn(
                    s.id, Turn("user", [TextBlock("otter pup " + "otter pup " * i)])))
        hits = store.search('"otter pup"')
        assert [h.turn_id for h in hits] == [t.id for t in reversed(pups)]
        assert {h.rank for h in hits} == {0.0}
        monkeypatch.setattr(search_module, "COMMON_ROWS", 100)
        ranked = store.search('"otter pup"')
        assert [h.turn_id for h in ranked] == [t.id for t in reversed(pups)]  # says it most
        assert all(h.rank < 0 for h in ranked)


def test_newest_first_reads_every_match_range_by_range(any_db, monkeypatch):
    # PostgreSQL reads a common word's matches in ranges of turns from the newest;
    # ranges of 1 turn: every range, scoped or not, still in order.
    from parley.core.store import search as search_module
    from parley.core.store.postgres import search as pg_search

    monkeypatch.setattr(search_module, "COMMON_ROWS", 0)
    monkeypatch.setattr(pg_search, "FIRST_SPAN", 1)
    with any_db as store:
        a = store.create_session(title="a")
        b = store.create_session(title="b")
        turns = []
        for i in range(5):
            for s in (a, b):
                store.append_turn(s.id, Turn("user", [TextBlock(f"filler {i}")]))
                turns.append(store.append_turn(s.id, Turn("user", [TextBlock(f"heron {i}")])))
        hits = store.search("heron")
        assert [h.turn_id for h in hits] == [t.id for t in reversed(turns)]
        assert [h.turn_id for h in store.search("heron", limit=3)] == [
            t.id for t in reversed(turns)][:3]
        in_b = [h.turn_id for h in store.search("heron", session_id=b.id)]
        assert in_b == [t.id for t in reversed(turns[1::2])]


def test_postgresql_takes_a_word_the_statistics_call_common_without_counting(
    postgres_server, monkeypatch
):
    # The planner's estimate (never below 1 row) over a bar of 0 turns: "common" though
    # no turn holds the word, so its title is listed newest first (rank 0.0); counted,
    # 0 turns is not common and the title is ranked.
    from parley.core.store import search as search_module
    from parley.core.store.postgres import search as pg_search

    monkeypatch.setattr(search_module, "COMMON_ROWS", 0)
    with PgStore.open_url(postgres_server.new_database()) as store:
        store.create_session(title="narwhal notes")
        assert [h.rank for h in store.search("narwhal")][0] < 0
        monkeypatch.setattr(pg_search, "MIN_SURE", 0)
        assert [h.rank for h in store.search("narwhal")] == [0.0]


def test_maintain_merges_index_segments_in_steps(tmp_path):
    # SQLite's FTS5 segments (PostgreSQL's autovacuum keeps its GIN indexes: maintain is a no-op).
    from parley.core.store.schema import dbapi_connection

    with Store.open(tmp_path / "s.db") as store:
        s = store.create_session(title="segments")
        for i in range(12):  # one index segment per save: FTS5 merges nothing itself
            store.append_turn(s.id, Turn("user", [TextBlock(f"heron {i} wading")]))
        before = store.search("heron")
        raw = dbapi_connection(store._con)  # noqa: SLF001
        changes = raw.total_changes
        assert store.maintain(budget_ms=1000) is False
        assert raw.total_changes - changes >= 2  # it merged
        changes = raw.total_changes
        assert store.maintain() is False
        assert raw.total_changes - changes < 2  # nothing left to do (FTS5 counts 1)
        assert store.search("heron") == before
        con = store._con  # noqa: SLF001
        with con.begin():
            con.exec_driver_sql("INSERT INTO search_fts(search_fts) VALUES ('integrity-check')")


def test_a_hit_says_who_wrote_it_and_where_the_match_is(tmp_path):
    # Trial 16: a message and the reply quoting it were two hits alike; a hit now carries
    # the turn's role, the model of a reply, and the kind of block its match is in.
    store = Store.open(tmp_path / "sessions.db")
    s = store.create_session(title="Who")
    words = "quebec bravo sierra oscar lima foxtrot alpha kilo needle150"
    asked = store.append_turn(s.id, Turn("user", [TextBlock(words)]))
    answered = store.append_turn(s.id, Turn("assistant", [
        ThinkingBlock("they want needle151", "sig"), TextBlock(f"Answer to: {words}"),
        ToolUseBlock("c1", "shell", {"command": "find needle152"})], model="anthropic:x"))
    result = store.append_turn(s.id, Turn("user", [
        ToolResultBlock("c1", (TextBlock("needle152 found"),))]))
    got = {h.turn_id: (h.role, h.model, h.part) for h in store.search("needle150")}
    assert got == {asked.id: ("user", None, "text"),
                   answered.id: ("assistant", "anthropic:x", "text")}
    hits = {h.turn_id: h for h in store.search("needle150")}
    assert hits[asked.id].snippet != hits[answered.id].snippet  # short: shown whole
    assert "Answer to: quebec bravo" in hits[answered.id].snippet
    assert [h.part for h in store.search("needle151")] == ["thinking"]
    got = {h.turn_id: h.part for h in store.search("needle152")}
    assert got == {answered.id: "tool_use", result.id: "tool_result"}
    (title,) = store.search("Who")
    assert (title.turn_id, title.role, title.model, title.part) == (None, "", None, "")
    store.close()


@pytest.mark.parametrize(("query", "written"), [
    ("zebracorn", "zebracorn"), ("ZEBRA*", "Zebracorn"), ("cafe", "café"),  # accents: the slow way
    ("pasted words", "pasted words"),
])
def test_a_snippet_shows_a_match_deep_in_a_huge_text(query, written):
    """A match past the first MAX_SCAN_CHARS characters of a ~1 MB text: the snippet
    shows the words around it, not the text's start (fresh-user trial)."""
    text = "".join(f"line {i:06d} of the text, some filler to wrap on\n" for i in range(20_000))
    text = text.replace("line 015000 of", f"line 015000 {written} of")
    parsed = parse(query)
    pattern = compile_phrases(parsed.phrases, parsed.prefix_last)
    words = plain_words(parsed.phrases)
    snippet = make_snippet(text, pattern, words=words)
    assert snippet.startswith("…") and "line 000000" not in snippet
    assert "line 015000 \x02" in snippet and written.split()[0] in snippet
    assert first_match(text, pattern, words).start() == text.index(written)
    assert first_match(text, pattern, None).start() == text.index(written)
    assert make_snippet(text[:-1], compile_phrases([["absent"]], False)).startswith("line 000000")
