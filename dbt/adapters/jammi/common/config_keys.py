"""Every model config dbt-jammi reads, in one table.

The table feeds three things, so a key is listed once:

- ``JammiConfig`` (impl.py), dbt's typed view of the adapter's configs: the keys dbt and
  dbt-spark do not already declare;
- ``MutableTableDefinition.from_config``: the keys a mutable table's definition is
  built from (``role="definition"``), in the table's order;
- the config references of docs/mutable_table.md ("Configs") and docs/topic.md
  ("Configs"), which tests/unit/test_config_keys.py holds to this table, row by row.

``role`` says what a key is for a mutable table: ``definition`` (recorded with the
table; changing it is a definition change, docs/mutable_table.md), ``run`` (read by
every run, never recorded), or ``topic`` (a topic's only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

MUTABLE_TABLE = "mutable_table"
TOPIC = "topic"

# Keys another layer declares: dbt's own node configs and dbt-spark's SparkConfig.
DECLARED_BY_DBT = ("on_schema_change", "full_refresh")
DECLARED_BY_DBT_SPARK = ("file_format",)


@dataclass(frozen=True)
class ConfigKey:
    name: str
    annotation: Any
    materializations: tuple[str, ...]
    role: str


_BOTH = (MUTABLE_TABLE, TOPIC)
_TABLE = (MUTABLE_TABLE,)
_TOPIC = (TOPIC,)
_COLUMNS = Union[str, list[str]]

CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("primary_key", _COLUMNS, _TABLE, "definition"),
    ConfigKey("indexes", list[dict[str, Any]], _TABLE, "definition"),
    ConfigKey("version_column", _COLUMNS, _TABLE, "definition"),
    ConfigKey("type_set", str, _BOTH, "definition"),
    ConfigKey("partial_updates", Union[bool, list[str]], _TABLE, "definition"),
    ConfigKey("delete_when", str, _TABLE, "definition"),
    ConfigKey("truncate_when", str, _TABLE, "definition"),
    ConfigKey("rule_columns", list[str], _TABLE, "definition"),
    ConfigKey("version_groups", dict[str, list[str]], _TABLE, "definition"),
    ConfigKey("hard_deletes", str, _TABLE, "definition"),
    ConfigKey("history", str, _TABLE, "definition"),
    ConfigKey("valid_from", str, _TABLE, "definition"),
    ConfigKey("valid_to", str, _TABLE, "definition"),
    ConfigKey("track_columns", list[str], _TABLE, "definition"),
    ConfigKey("ordering_column", str, _TABLE, "definition"),
    ConfigKey("tenant_from", str, _TABLE, "definition"),
    ConfigKey("on_schema_change", str, _TABLE, "definition"),
    ConfigKey("file_format", str, _BOTH, "definition"),
    ConfigKey("merge_functions", dict[str, str], _TABLE, "definition"),
    ConfigKey("ttl_ms", int, _TABLE, "definition"),
    ConfigKey("ttl_column", str, _TABLE, "definition"),
    ConfigKey("changelog", bool, _TABLE, "definition"),
    ConfigKey("identity_column", str, _TABLE, "definition"),
    ConfigKey("tombstone_retention", Union[int, str], _TABLE, "definition"),
    ConfigKey("full_refresh", bool, _TABLE, "run"),
    ConfigKey("registry_schema", str, _BOTH, "run"),
    ConfigKey("versions_kept", int, _TABLE, "run"),
    ConfigKey("expire_snapshots", bool, _TABLE, "run"),
    ConfigKey("tblproperties", dict[str, Any], _TABLE, "run"),
    ConfigKey("topic_name", str, _TOPIC, "topic"),
    ConfigKey("retention_offsets", int, _TOPIC, "topic"),
    ConfigKey("retention_ms", int, _TOPIC, "topic"),
    ConfigKey("row_idx", str, _TOPIC, "topic"),
)


def config_keys(materialization: str, role: Optional[str] = None) -> tuple[str, ...]:
    """The keys a materialization reads (of one role), in the table's order."""
    return tuple(
        key.name
        for key in CONFIG_KEYS
        if materialization in key.materializations and role in (None, key.role)
    )


def adapter_config_fields() -> list[tuple[str, Any, None]]:
    """``JammiConfig``'s fields: every key dbt and dbt-spark do not declare, optional."""
    declared = (*DECLARED_BY_DBT, *DECLARED_BY_DBT_SPARK)
    return [
        (key.name, Optional[key.annotation], None)
        for key in CONFIG_KEYS
        if key.name not in declared
    ]
