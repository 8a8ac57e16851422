"""Everything PostgreSQL-specific in the store's SQL, in one place.

The tables themselves come from the shared declarations of
:mod:`parley.core.store.schema` (``metadata.create_all``). This module adds what
SQLite does with its own features there:

* the searchable text of a turn (``parley_turn_text``, a SQL function that
  follows :func:`parley.core.store.textindex.turn_text`), kept in a generated
  ``tsvector`` column of ``turns`` and of ``sessions`` (titles) with GIN
  indexes, where SQLite has its FTS5 table and triggers;
* the links of turns to attached files (``turn_attachments``) and the release
  of a file with its last reference, as PL/pgSQL triggers (SQLite: JSON1 triggers);
* a ``NOTIFY`` on ``parley_changes`` for each row of ``turns``, ``sessions``
  and ``spaces`` written (``parley_notify``: :mod:`parley.core.store.postgres.changes`);
* ``parley_meta(text)``: a session's ``meta`` as ``jsonb`` (``{}`` when it is
  not a JSON object), for the SQL reading its keys;
* the PostgreSQL spellings of the repositories' SQLite-only statements
  (chosen per connection by :mod:`parley.core.store.dialect`).

Text search prepares text like the SQLite index (``parley_normalize``:
:func:`parley.core.store.textindex.normalize` in SQL) and indexes it with the
configuration :data:`SEARCH_CONFIG` (``simple``: lower-cased words, no stemming,
no stop words; diacritics folded by ``unaccent`` when the server has that
extension), over the first :data:`MAX_INDEXED_CHARS` characters of a turn (a
``tsvector`` is limited to 1 MB). Words are cut by PostgreSQL's own parser,
not FTS5's: results can differ on punctuation inside words.
"""

from __future__ import annotations

from parley.core.store import textindex

#: Characters of a turn's text that PostgreSQL's index reads (the rest is not searchable).
MAX_INDEXED_CHARS = 300_000
#: The text search configuration of the index and of queries: ``simple`` (lower-cased
#: words, no stemming, no stop words), with the ``unaccent`` dictionary first when the
#: server has that extension (diacritics folded, as SQLite's index does).
SEARCH_CONFIG = "parley_search"
#: The version of the PostgreSQL schema (kept in ``parley_schema``), like SQLite's user_version.
SCHEMA_VERSION = 4

# parley.core.store.textindex.normalize in SQL: NFKC, Arabic/Hebrew vowel marks dropped, ё
# folded, and each character of space-less scripts (CJK, kana, Hangul, Thai…) set apart.
_NORMALIZE = (
    "regexp_replace(regexp_replace(translate(normalize(t, NFKC), 'ёЁ', 'еЕ'), "
    f"'[{textindex.STRIPPED}]', '', 'g'), "
    f"'([{textindex.SPLIT_BASES}][{textindex.SPLIT_MARKS}]*)', ' \\1 ', 'g')"
)

FUNCTIONS = [
    f"""CREATE OR REPLACE FUNCTION parley_normalize(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT {_NORMALIZE} $$""",
    # A session's meta as an object (for the SQL reading its keys); '{}' when not one.
    """CREATE OR REPLACE FUNCTION parley_meta(meta text) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE j jsonb;
    BEGIN
        BEGIN
            j := meta::jsonb;
        EXCEPTION WHEN others THEN
            RETURN '{}'::jsonb;
        END;
        IF j IS NULL OR jsonb_typeof(j) <> 'object' THEN
            RETURN '{}'::jsonb;
        END IF;
        RETURN j;
    END $$""",
    # One block's searchable text (parley.core.store.textindex.block_text).
    """CREATE OR REPLACE FUNCTION parley_block_text(b jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN jsonb_typeof(b) <> 'object' THEN ''
        WHEN b->>'type' = 'text' THEN coalesce(b->>'text', '')
        WHEN b->>'type' = 'thinking' THEN coalesce(b->>'thinking', '')
        WHEN b->>'type' = 'compact_summary' THEN coalesce(b->>'summary', '')
        WHEN b->>'type' = 'tool_use' THEN
            coalesce(b->>'name', '') || ' ' || coalesce((b->'input')::text, '{}')
        WHEN b->>'type' = 'tool_result' THEN
            (CASE WHEN b->>'is_error' = 'true' THEN 'Error: ' ELSE '' END) ||
            (CASE jsonb_typeof(b->'content')
                WHEN 'string' THEN b->>'content'
                WHEN 'array' THEN coalesce((
                    SELECT string_agg(CASE p->>'type'
                        WHEN 'text' THEN coalesce(p->>'text', '')
                        WHEN 'document' THEN '[document: ' ||
                            coalesce(nullif(p->>'name', ''), p->>'media_type', '') || ']'
                        ELSE '[' || coalesce(p->>'type', '') || ': ' ||
                            coalesce(p->>'media_type', '') || ']'
                        END, E'\\n' ORDER BY i)
                    FROM jsonb_array_elements(b->'content') WITH ORDINALITY AS x(p, i)), '')
                ELSE '' END)
        WHEN b->>'type' = 'document' THEN coalesce(b->>'name', '')
        ELSE '' END
    $$""",
    # A turn's searchable text (parley.core.store.textindex.turn_text); raw text when not JSON.
    """CREATE OR REPLACE FUNCTION parley_turn_text(blocks text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE j jsonb;
    BEGIN
        BEGIN
            j := blocks::jsonb;
        EXCEPTION WHEN others THEN
            RETURN coalesce(blocks, '');
        END;
        IF j IS NULL OR jsonb_typeof(j) <> 'array' THEN
            RETURN '';
        END IF;
        RETURN coalesce((SELECT string_agg(t, E'\\n' ORDER BY i)
            FROM jsonb_array_elements(j) WITH ORDINALITY AS x(b, i),
                 LATERAL parley_block_text(b) AS t WHERE t <> ''), '');
    END $$""",
    # The sha256 values a blocks array references (schema._REFS).
    """CREATE OR REPLACE FUNCTION parley_refs(blocks text) RETURNS SETOF text
    LANGUAGE plpgsql IMMUTABLE AS $$
    DECLARE j jsonb;
    BEGIN
        BEGIN
            j := blocks::jsonb;
        EXCEPTION WHEN others THEN
            RETURN;
        END;
        IF j IS NULL OR jsonb_typeof(j) <> 'array' THEN
            RETURN;
        END IF;
        RETURN QUERY
            SELECT b->>'attachment' FROM jsonb_array_elements(j) AS b
            WHERE jsonb_typeof(b) = 'object' AND b->>'type' IN ('image', 'document')
              AND jsonb_typeof(b->'attachment') = 'string'
            UNION
            SELECT p->>'attachment' FROM jsonb_array_elements(j) AS b,
                jsonb_array_elements(CASE WHEN jsonb_typeof(b->'content') = 'array'
                                     THEN b->'content' ELSE '[]'::jsonb END) AS p
            WHERE jsonb_typeof(b) = 'object' AND b->>'type' = 'tool_result'
              AND jsonb_typeof(p) = 'object' AND p->>'type' IN ('image', 'document')
              AND jsonb_typeof(p->'attachment') = 'string';
    END $$""",
    # turn_attachments follows turns.blocks (schema.ATTACHMENT_DDL).
    """CREATE OR REPLACE FUNCTION parley_link_attachments() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('INSERT', 'UPDATE') AND strpos(NEW.blocks, '"attachment"') > 0 THEN
            INSERT INTO turn_attachments (turn_n, sha256)
                SELECT NEW.n, r FROM parley_refs(NEW.blocks) AS r ON CONFLICT DO NOTHING;
        END IF;
        IF TG_OP = 'UPDATE' AND strpos(OLD.blocks, '"attachment"') > 0 THEN
            DELETE FROM turn_attachments WHERE turn_n = OLD.n AND (OLD.n <> NEW.n
                OR sha256 NOT IN (SELECT r FROM parley_refs(NEW.blocks) AS r));
        END IF;
        IF TG_OP = 'DELETE' AND strpos(OLD.blocks, '"attachment"') > 0 THEN
            DELETE FROM turn_attachments WHERE turn_n = OLD.n;
        END IF;
        RETURN NULL;
    END $$""",
    # Other Parleys hear of each committed change (parley.core.store.postgres.changes).
    """CREATE OR REPLACE FUNCTION parley_notify() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE
        r record;
        sid text := NULL;
    BEGIN
        IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
        IF TG_TABLE_NAME = 'turns' THEN
            sid := r.session_id;
        ELSIF TG_TABLE_NAME = 'sessions' THEN
            sid := r.id;
        END IF;
        PERFORM pg_notify('parley_changes', json_build_object('table', TG_TABLE_NAME,
            'session', sid, 'by', current_setting('application_name'))::text);
        RETURN NULL;
    END $$""",
    # The last reference gone: the file goes.
    """CREATE OR REPLACE FUNCTION parley_release_attachment() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM attachments WHERE sha256 = OLD.sha256 AND NOT EXISTS
            (SELECT 1 FROM turn_attachments WHERE sha256 = OLD.sha256);
        RETURN NULL;
    END $$""",
]

#: The files of queued messages (``schema.QUEUED_FILES_DDL``'s PostgreSQL form): a file a
#: queued message holds is not released; one the last queued message lets go of goes
#: unless a turn uses it. Functions replaced, triggers created when missing (idempotent).
QUEUED_FILES_FUNCTIONS = [
    """CREATE OR REPLACE FUNCTION parley_keep_queued_file() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF EXISTS (SELECT 1 FROM queued_files WHERE sha256 = OLD.sha256) THEN
            RETURN NULL;
        END IF;
        RETURN OLD;
    END $$""",
    """CREATE OR REPLACE FUNCTION parley_release_queued_file() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM attachments WHERE sha256 = OLD.sha256
            AND NOT EXISTS (SELECT 1 FROM turn_attachments WHERE sha256 = OLD.sha256)
            AND NOT EXISTS (SELECT 1 FROM queued_files WHERE sha256 = OLD.sha256);
        RETURN NULL;
    END $$""",
]
#: (trigger name, its table, its DDL) of the files of queued messages.
QUEUED_FILES_TRIGGERS = [
    ("attachments_keep_queued", "attachments", "CREATE TRIGGER attachments_keep_queued "
     "BEFORE DELETE ON attachments FOR EACH ROW EXECUTE FUNCTION parley_keep_queued_file()"),
    ("queued_files_release", "queued_files", "CREATE TRIGGER queued_files_release AFTER "
     "DELETE ON queued_files FOR EACH ROW EXECUTE FUNCTION parley_release_queued_file()"),
]

#: The forking parents' index (``parley.core.store.fork_index``): ``turn_forks`` follows
#: ``turn_links``. The per-session advisory lock (two-key form: its own key space) makes
#: two transactions that give one parent its second child at once see each other's row.
FORKS_FUNCTIONS = [
    # At most two children of one parent (btree-friendly: = or IS NULL, never IS DISTINCT).
    """CREATE OR REPLACE FUNCTION parley_two_children(sid text, pid text) RETURNS integer
    LANGUAGE plpgsql AS $$
    BEGIN
        IF pid IS NULL THEN
            RETURN (SELECT count(*) FROM (SELECT 1 FROM turn_links WHERE session_id = sid
                AND parent_id IS NULL LIMIT 2) AS x);
        END IF;
        RETURN (SELECT count(*) FROM (SELECT 1 FROM turn_links WHERE session_id = sid
            AND parent_id = pid LIMIT 2) AS x);
    END $$""",
    """CREATE OR REPLACE FUNCTION parley_turn_forks() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.session_id = NEW.session_id
                AND OLD.parent_id IS NOT DISTINCT FROM NEW.parent_id THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            PERFORM pg_advisory_xact_lock(1346783059, hashtext(OLD.session_id));
            IF parley_two_children(OLD.session_id, OLD.parent_id) < 2 THEN
                DELETE FROM turn_forks WHERE session_id = OLD.session_id
                    AND parent_key = coalesce(OLD.parent_id, '');
            END IF;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            PERFORM pg_advisory_xact_lock(1346783059, hashtext(NEW.session_id));
            IF parley_two_children(NEW.session_id, NEW.parent_id) = 2 THEN
                INSERT INTO turn_forks (session_id, parent_key)
                    VALUES (NEW.session_id, coalesce(NEW.parent_id, '')) ON CONFLICT DO NOTHING;
            END IF;
        END IF;
        RETURN NULL;
    END $$""",
]
FORKS_TRIGGER_NAME = "turn_links_forks"
FORKS_TRIGGER = (f"CREATE TRIGGER {FORKS_TRIGGER_NAME} AFTER INSERT OR DELETE OR UPDATE OF "
                 "parent_id, session_id ON turn_links FOR EACH ROW EXECUTE FUNCTION "
                 "parley_turn_forks()")

#: The count of each session's path rows (``parley.core.store.path_count``):
#: ``turn_path_counts`` follows ``turn_path``. The upsert and ``n = n - 1`` lock the
#: session's row, so two transactions changing one path count in turn.
PATH_COUNT_FUNCTION = """CREATE OR REPLACE FUNCTION parley_turn_path_count() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.session_id = NEW.session_id THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            UPDATE turn_path_counts SET n = n - 1 WHERE session_id = OLD.session_id;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            INSERT INTO turn_path_counts AS c (session_id, n) VALUES (NEW.session_id, 1)
                ON CONFLICT (session_id) DO UPDATE SET n = c.n + 1;
        END IF;
        RETURN NULL;
    END $$"""
PATH_COUNT_TRIGGER_NAME = "turn_path_count"
PATH_COUNT_TRIGGER = (f"CREATE TRIGGER {PATH_COUNT_TRIGGER_NAME} AFTER INSERT OR DELETE OR "
                      "UPDATE OF session_id ON turn_path FOR EACH ROW EXECUTE FUNCTION "
                      "parley_turn_path_count()")

_TURN_VEC = (
    f"to_tsvector('{SEARCH_CONFIG}'::regconfig, "
    f"parley_normalize(left(parley_turn_text(blocks), {MAX_INDEXED_CHARS})))"
)
_TITLE_VEC = f"to_tsvector('{SEARCH_CONFIG}'::regconfig, parley_normalize(coalesce(title, '')))"

#: The search configuration (before the tables: their generated columns use it).
CONFIG_DDL = f"CREATE TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} (COPY = pg_catalog.simple)"
#: Word kinds whose letters may carry diacritics (the default parser's token types).
_WORDS = "word, hword, hword_part, numword, numhword, hword_numpart"


def unaccent_ddl(schema: str) -> str:
    """Fold diacritics in the search configuration with ``unaccent`` (in ``schema``)."""
    return (f"ALTER TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} ALTER MAPPING FOR {_WORDS} "
            f'WITH "{schema}".unaccent, pg_catalog.simple')

SCHEMA_DDL = [
    f"ALTER TABLE turns ADD COLUMN search_vec tsvector GENERATED ALWAYS AS ({_TURN_VEC}) STORED",
    f"ALTER TABLE sessions ADD COLUMN title_vec tsvector GENERATED ALWAYS AS ({_TITLE_VEC}) STORED",
    "CREATE INDEX turns_search ON turns USING gin (search_vec)",
    "CREATE INDEX sessions_search ON sessions USING gin (title_vec)",
    "CREATE TRIGGER turns_attachments AFTER INSERT OR UPDATE OF blocks, n OR DELETE ON turns "
    "FOR EACH ROW EXECUTE FUNCTION parley_link_attachments()",
    "CREATE TRIGGER attachments_release AFTER DELETE ON turn_attachments "
    "FOR EACH ROW EXECUTE FUNCTION parley_release_attachment()",
    *(f"CREATE TRIGGER {t}_notify AFTER INSERT OR UPDATE OR DELETE ON {t} "
      "FOR EACH ROW EXECUTE FUNCTION parley_notify()" for t in ("turns", "sessions", "spaces")),
    "CREATE TABLE parley_schema (version integer NOT NULL)",
    f"INSERT INTO parley_schema (version) VALUES ({SCHEMA_VERSION})",
]

# --- the repositories' statements ---------------------------------------------------



TOUCH = (
    "UPDATE sessions SET updated_at = GREATEST(CAST(:now AS bigint), (SELECT coalesce("
    "max(updated_at), 0) + 1 FROM sessions)) WHERE id = :sid"
)
FORGET_OWNERS = (
    "DELETE FROM app_state WHERE strpos(key, ':') > 0 "
    "AND substr(key, strpos(key, ':') + 1) IN ({ids})"
)
COPIES_UP = (
    "WITH RECURSIVE up(id, parent) AS (SELECT id, parent_session_id FROM sessions "
    "WHERE id IN (SELECT value FROM json_array_elements_text(CAST(:ids AS json))) UNION "
    "SELECT s.id, s.parent_session_id FROM up JOIN sessions s ON s.id = up.parent) "
    "SELECT id, parent FROM up"
)
COPIES_DOWN = (
    "WITH RECURSIVE fam(root, id) AS (SELECT value, value "
    "FROM json_array_elements_text(CAST(:roots AS json)) UNION "
    "SELECT fam.root, s.id FROM fam JOIN sessions s ON s.parent_session_id = fam.id) "
    "SELECT fam.root, s.id, s.n, s.created_at, s.space_id, s.title "
    "FROM fam JOIN sessions s ON s.id = fam.id"
)
COPIES = (
    "SELECT c.n AS cand, t.n, t.id, t.session_id "
    "FROM json_array_elements(CAST(:pairs AS json)) AS p(value) "
    "JOIN turns AS c ON c.n = CAST(p.value->>0 AS bigint) "
    "JOIN turns AS t ON t.session_id = p.value->>1 AND t.seq = c.seq "
    "WHERE t.n <> c.n AND t.created_at = c.created_at AND t.role = c.role "
    "AND (t.blocks = c.blocks OR parley_turn_text(t.blocks) = parley_turn_text(c.blocks))"
)
#: Taken first when a turn is saved: two Parleys saving to one chat queue here, so
#: the second reads the first's turn before choosing its ``seq`` (SQLite: BEGIN IMMEDIATE).
LOCK_SESSION = "SELECT 1 FROM sessions WHERE id = :sid FOR UPDATE"
IMPORTED_IDS = (
    "SELECT parley_meta(meta)->'imported'->>'id' FROM sessions WHERE parent_session_id IS NULL "
    "AND parley_meta(meta)->'imported'->>'source' = :source"
)
#: compactions in the order they were written (SQLite: rowid).
COMPACTION_ORDER = "compactions.ctid"
