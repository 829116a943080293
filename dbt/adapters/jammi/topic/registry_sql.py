"""The statements of a topic's registration: the ``topics`` registry, a topic's backing
table, its staged registry row and the view named after the model (docs/topic.md,
"Registration"). registry_service.py runs them in the order registration.py describes.

A topic here is the mapping a registry row or ``TopicDefinition.to_dict`` gives:
``topic_id``, ``name``, ``backing_table``, ``columns`` ([name, type] pairs),
``file_format``, and for a new registration ``retention_offsets`` / ``retention_ms``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.topic.topic_formats import topic_format

REGISTRY_TABLE = "topics"


# What an Iceberg registry's claim raises when the name is already registered.
NAME_TAKEN = "jammi: topic name already registered"


def create_registry_sql(registry: str, file_format: str = "parquet") -> str:
    """parquet: partitioned by name; registering a topic is attaching its one-row
    partition, which the metastore refuses to do twice (registration.claim_registration).
    iceberg (a catalog service, which keeps no partitions of its own): one MERGE per
    claim, validated under serializable isolation (``iceberg_claim_registration_sql``)."""
    if file_format == "iceberg":
        return (
            f"create table if not exists {registry} (\n"
            + ",\n".join(f"  {name} {kind}" for name, kind in REGISTRY_SCHEMA)
            + "\n) using iceberg\n"
            "comment 'dbt-jammi topics registry: one row per topic; created_at is UTC "
            "microseconds'\n"
            "tblproperties ('write.merge.isolation-level' = 'serializable')"
        )
    return (
        f"create table if not exists {registry} (\n"
        "  topic_id string,\n"
        "  name string,\n"
        "  backing_table string,\n"
        "  relation_name string,\n"
        "  schema_json string,\n"
        "  file_format string,\n"
        "  retention_offsets bigint,\n"
        "  retention_ms bigint,\n"
        "  created_at bigint\n"
        ") using parquet\n"
        "partitioned by (name)\n"
        "comment 'dbt-jammi topics registry: one row per topic; created_at is UTC microseconds'"
    )


REGISTRY_SCHEMA = (
    ("topic_id", "string"),
    ("name", "string"),
    ("backing_table", "string"),
    ("relation_name", "string"),
    ("schema_json", "string"),
    ("file_format", "string"),
    ("retention_offsets", "bigint"),
    ("retention_ms", "bigint"),
    ("created_at", "bigint"),
)


def name_owner_sql(registry: str, name: str) -> str:
    return f"select relation_name from {registry} where name = {sql_string_literal(name)} limit 1"


def stored_columns(topic: Mapping[str, Any]) -> list[str]:
    """The backing table's columns after ``_offset``, in stored order."""
    return ["_row_idx", "_produced_at", *(c[0] for c in topic["columns"]), "tenant_id"]


def create_backing_sql(backing: str, topic: Mapping[str, Any]) -> str:
    """The backing table: delta appends under its own conflict check (Serializable);
    iceberg's MERGE claim is validated under serializable isolation, set explicitly
    (topic_formats.iceberg_publish_sql); parquet is partitioned by ``_offset``, each offset
    claimed as a partition."""
    not_null, partitioning, format_properties = topic_format(topic["file_format"]).backing_layout()
    lines = [f"  _offset bigint{not_null},", f"  _row_idx bigint{not_null},"]
    lines.append(f"  _produced_at bigint{not_null},")
    lines.extend(f"  {quote_identifier(c[0])} {c[1]}," for c in topic["columns"])
    lines.append("  tenant_id string")
    comment = sql_string_literal(f"dbt-jammi topic {topic['name']} (offset-ordered event log)")
    properties = [
        f"  'jammi.topic_id' = {sql_string_literal(topic['topic_id'])}",
        f"  'jammi.topic_name' = {sql_string_literal(topic['name'])}",
    ]
    properties.extend(f"  {p}" for p in format_properties)
    return (
        f"create table {backing} (\n" + "\n".join(lines) + f"\n) using {topic['file_format']}"
        f"{partitioning}\ncomment {comment}\ntblproperties (\n" + ",\n".join(properties) + "\n)"
    )


def view_select_sql(backing: str, topic: Mapping[str, Any]) -> str:
    columns = ", ".join(quote_identifier(c[0]) for c in topic["columns"])
    separator = ", " if columns else ""
    return f"select _offset, _row_idx, _produced_at, {columns}{separator}tenant_id from {backing}"


def create_view_sql(
    relation: str, backing: str, topic: Mapping[str, Any], fingerprint: str, replace: bool
) -> str:
    """The view named after the model; it carries ``fingerprint`` (of what it selects) so
    that a run can tell whether it is already right without re-creating it."""
    comment = sql_string_literal(f"dbt-jammi topic {topic['name']} over {topic['backing_table']}")
    return (
        f"create {'or replace ' if replace else ''}view {relation}\n"
        f"comment {comment}\n"
        f"tblproperties ('jammi.view_fingerprint' = {sql_string_literal(fingerprint)})\n"
        f"as {view_select_sql(backing, topic)}"
    )


def _bigint_or_null(value: Optional[int]) -> str:
    return f"cast({int(value) if value is not None else 'null'} as bigint)"


def registration_values(topic: Mapping[str, Any], relation_name: str) -> list[str]:
    """The registry row's columns but ``name``, as ``<value> as <column>``."""
    return [
        f"{sql_string_literal(topic['topic_id'])} as topic_id",
        f"{sql_string_literal(topic['backing_table'])} as backing_table",
        f"{sql_string_literal(relation_name)} as relation_name",
        f"{sql_string_literal(json.dumps(topic['columns']))} as schema_json",
        f"{sql_string_literal(topic['file_format'])} as file_format",
        f"{_bigint_or_null(topic.get('retention_offsets'))} as retention_offsets",
        f"{_bigint_or_null(topic.get('retention_ms'))} as retention_ms",
        "cast(unix_micros(current_timestamp()) as bigint) as created_at",
    ]


def stage_registration_sql(staged: str, topic: Mapping[str, Any], relation_name: str) -> str:
    """The registry row without its partition column (``name``), staged for the claim."""
    return (
        f"insert overwrite directory {sql_string_literal(staged)} using parquet\nselect\n  "
        + ",\n  ".join(registration_values(topic, relation_name))
    )


def iceberg_claim_registration_sql(
    registry: str, topic: Mapping[str, Any], relation_name: str
) -> str:
    """One MERGE that inserts the registry row of ``topic``, or fails: a row of the
    name read by the MERGE's scan reaches the matched clause, which raises
    ``NAME_TAKEN``; a row of the name committed after that scan fails Iceberg's
    serializable validation (the condition on the target alone is pushed to its scan
    and is the validation's filter)."""
    name = sql_string_literal(topic["name"])
    values = [f"{name} as name", *registration_values(topic, relation_name)]
    columns = ", ".join(column for column, _ in REGISTRY_SCHEMA)
    inserted = ", ".join(f"source.{column}" for column, _ in REGISTRY_SCHEMA)
    taken = sql_string_literal(f"{NAME_TAKEN}: {topic['name']}")
    return (
        f"merge into {registry} target\nusing (select " + ", ".join(values) + ") source\n"
        f"on target.name = {name} and target.name = source.name\n"
        f"when matched then update set target.name = cast(raise_error({taken}) as string)\n"
        f"when not matched then insert ({columns}) values ({inserted})"
    )
