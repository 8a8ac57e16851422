"""SQL that turns a v3 turn's ``content`` into v4 ``blocks`` (shared/spec/v3-format.md).

The conversion runs inside SQLite (``json_each`` / ``json_object``) so a 1 GB
file converts at C speed, set-based, with no per-row Python. One expression
(:func:`turn_blocks_sql`) maps one v3 turn row to its v4 block list, or to SQL
NULL when the turn is damaged; the caller then keeps the raw content verbatim
as one recovered text block (:data:`RECOVERED_SQL`, spec point 5).

v3 block -> v4 block (``core.content`` JSON):

============================ ===================================================
``text`` (+``origin``)        ``text``; origin ``messageId`` -> ``message_id``,
                              missing ``kind`` -> ``"user"``
``image``                     ``image`` (``media_type``, ``data`` and/or ``url``)
``document``                  ``document`` (``media_type``, ``data``, ``name``?)
``tool-call``                 ``tool_use`` (``id``, ``name``, ``args`` -> ``input``;
                              missing/null args -> ``{}``)
``tool-result``               ``tool_result`` (``callId`` -> ``tool_use_id``;
                              ``output`` string -> one text part, parts list ->
                              text/image parts, missing/null -> no part;
                              ``isError`` -> ``is_error``)
``thinking``                  ``thinking`` (``text`` -> ``thinking``, ``signature``)
``compact-summary``           ``compact_summary`` (``summary``, ``replaced_count``,
                              ``legacy: true``, no turn range)
any other ``type``            kept as is (``UnknownBlock``)
============================ ===================================================

A turn counts as damaged (recovered verbatim) when its content is not valid
JSON, is not a JSON array, holds an element that is not an object, holds a
known v3 block lacking a required field (or with one of the wrong JSON type),
holds an unknown block whose ``type`` is a v4 block name v4 would misread
(``tool_use``, ``tool_result``, ``compact_summary``), or has a role other than
``user``/``assistant``. Extra fields on known v3 block kinds (none are
specified) are not carried over; unknown blocks keep every field.
"""

from __future__ import annotations

#: v4 block type names that v3 never wrote: an "unknown" v3 block using one
#: would be read by v4 as that block, so such a turn is recovered verbatim.
V4_ONLY_TYPES = ("tool_use", "tool_result", "compact_summary")
V3_TYPES = ("text", "image", "document", "tool-call", "tool-result", "thinking", "compact-summary")


def _t(e: str, path: str) -> str:
    """SQL: the JSON type of ``path`` in ``e`` ('text', 'object', … or NULL if absent)."""
    return f"json_type({e}, '{path}')"


def _optional(e: str, path: str, kind: str = "text") -> str:
    """SQL condition: ``path`` is absent, JSON null, or of JSON type ``kind``."""
    return f"coalesce({_t(e, path)}, 'null') IN ('null', '{kind}')"


def _image_sql(e: str) -> str:
    """v3 image (block or tool-result part) ``e`` -> v4 image, or NULL if malformed."""
    return (
        f"CASE WHEN {_t(e, '$.mediaType')} = 'text' "
        f"AND ({_t(e, '$.data')} = 'text' OR {_t(e, '$.url')} = 'text') "
        f"AND {_optional(e, '$.data')} AND {_optional(e, '$.url')} THEN "
        f"json_patch(json_object('type', 'image', 'media_type', {e} ->> '$.mediaType'), "
        f"json_object('data', {e} ->> '$.data', 'url', {e} ->> '$.url')) END"
    )


def _text_sql(e: str) -> str:
    plain = f"json_object('type', 'text', 'text', {e} ->> '$.text')"
    origin = (
        f"json_patch('{{}}', json_object("
        f"'kind', coalesce({e} ->> '$.origin.kind', 'user'), "
        f"'source', {e} -> '$.origin.source', "
        f"'sender', {e} -> '$.origin.sender', "
        f"'message_id', {e} -> '$.origin.messageId'))"
    )
    with_origin = f"json_object('type', 'text', 'text', {e} ->> '$.text', 'origin', {origin})"
    return (
        f"CASE WHEN {_t(e, '$.text')} <> 'text' THEN NULL "
        f"WHEN coalesce({_t(e, '$.origin')}, 'null') = 'null' THEN {plain} "
        f"WHEN {_t(e, '$.origin')} = 'object' THEN {with_origin} END"
    )


def _document_sql(e: str) -> str:
    base = f"'type', 'document', 'media_type', {e} ->> '$.mediaType', 'data', {e} ->> '$.data'"
    return (
        f"CASE WHEN {_t(e, '$.mediaType')} = 'text' AND {_t(e, '$.data')} = 'text' "
        f"AND {_optional(e, '$.name')} THEN "
        f"CASE WHEN {_t(e, '$.name')} = 'text' "
        f"THEN json_object({base}, 'name', {e} ->> '$.name') ELSE json_object({base}) END END"
    )


def _tool_call_sql(e: str) -> str:
    return (
        f"CASE WHEN {_t(e, '$.id')} = 'text' AND {_t(e, '$.name')} = 'text' "
        f"AND {_optional(e, '$.args', 'object')} THEN "
        f"json_object('type', 'tool_use', 'id', {e} ->> '$.id', 'name', {e} ->> '$.name', "
        f"'input', json(CASE WHEN {_t(e, '$.args')} = 'object' THEN {e} -> '$.args' "
        f"ELSE '{{}}' END)) END"
    )


def _part_sql(p: str) -> str:
    """One v3 tool-result part -> v4 part (text or image), NULL if malformed."""
    return (
        f"CASE {p} ->> '$.type' "
        f"WHEN 'text' THEN CASE WHEN {_t(p, '$.text')} = 'text' "
        f"THEN json_object('type', 'text', 'text', {p} ->> '$.text') END "
        f"WHEN 'image' THEN {_image_sql(p)} END"
    )


def _tool_result_sql(e: str) -> str:
    parts = (
        "(SELECT CASE WHEN count(*) = count(x) THEN json_group_array(json(x)) END FROM "
        f"(SELECT CASE WHEN o.type = 'object' THEN {_part_sql('o.value')} END AS x "
        f"FROM json_each({e}, '$.output') AS o))"
    )
    content = (
        f"CASE coalesce({_t(e, '$.output')}, 'null') "
        f"WHEN 'text' THEN json_array(json_object('type', 'text', 'text', {e} ->> '$.output')) "
        f"WHEN 'array' THEN {parts} "
        f"WHEN 'null' THEN json_array() END"
    )
    return (
        f"CASE WHEN {_t(e, '$.callId')} = 'text' THEN "
        f"(SELECT CASE WHEN c IS NOT NULL THEN json_object('type', 'tool_result', "
        f"'tool_use_id', {e} ->> '$.callId', 'content', json(c), 'is_error', "
        f"json(CASE WHEN {_t(e, '$.isError')} = 'true' THEN 'true' ELSE 'false' END)) END "
        f"FROM (SELECT {content} AS c)) END"
    )


def _thinking_sql(e: str) -> str:
    return (
        f"CASE WHEN {_t(e, '$.text')} = 'text' AND {_optional(e, '$.signature')} THEN "
        f"CASE WHEN {_t(e, '$.signature')} = 'text' "
        f"THEN json_object('type', 'thinking', 'thinking', {e} ->> '$.text', "
        f"'signature', {e} ->> '$.signature') "
        f"ELSE json_object('type', 'thinking', 'thinking', {e} ->> '$.text') END END"
    )


def _summary_sql(e: str) -> str:
    return (
        f"CASE WHEN {_t(e, '$.text')} = 'text' AND {_optional(e, '$.replacedTurns', 'integer')} "
        f"THEN json_object('type', 'compact_summary', 'summary', {e} ->> '$.text', "
        f"'replaced_count', coalesce({e} ->> '$.replacedTurns', 0), 'legacy', json('true')) END"
    )


def block_sql(e: str) -> str:
    """SQL expression: v3 block ``e`` (JSON object text) -> v4 block JSON, NULL if malformed."""
    v4_only = ", ".join(f"'{k}'" for k in V4_ONLY_TYPES)
    return (
        f"CASE {e} ->> '$.type' "
        f"WHEN 'text' THEN {_text_sql(e)} "
        f"WHEN 'image' THEN {_image_sql(e)} "
        f"WHEN 'document' THEN {_document_sql(e)} "
        f"WHEN 'tool-call' THEN {_tool_call_sql(e)} "
        f"WHEN 'tool-result' THEN {_tool_result_sql(e)} "
        f"WHEN 'thinking' THEN {_thinking_sql(e)} "
        f"WHEN 'compact-summary' THEN {_summary_sql(e)} "
        f"ELSE CASE WHEN {_t(e, '$.type')} = 'text' AND {e} ->> '$.type' IN ({v4_only}) "
        f"THEN NULL ELSE json({e}) END END"
    )


def turn_blocks_sql(t: str) -> str:
    """SQL expression: a v3 turn row ``t`` -> its v4 blocks (JSON array text), NULL if damaged.

    Kept shallow on purpose: SQLite's parser stack (100 entries) overflows on
    deeper nesting, so callers put it at the top of a select list.

    Args:
        t: alias of the v3 ``turns`` row (``t.content``, ``t.role``).
    """
    ok = (
        f"{t}.role IN ('user', 'assistant') AND "
        f"CASE WHEN json_valid({t}.content) THEN json_type({t}.content) END = 'array'"
    )
    return (
        f"CASE WHEN {ok} THEN "
        "(SELECT CASE WHEN count(*) = count(v) THEN json_group_array(json(v)) END FROM "
        f"(SELECT CASE WHEN b.type = 'object' THEN {block_sql('b.value')} END AS v "
        f"FROM json_each({t}.content) AS b)) END"
    )


#: SQL expression (over a v3 turn ``t``): its raw content kept as one recovered text block.
RECOVERED_SQL = (
    "json_array(json_object('type', 'text', 'text', t.content, 'recovered', json('true')))"
)
