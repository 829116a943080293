"""The statements by which a mutable table records itself: its ``jammi.*`` table
properties (with the model's own ``tblproperties`` when the table is created) and its
rows in the ``mutable_tables`` registry (docs/mutable_table.md, "The registry"). What
the values mean is table_properties.py's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import sql_string_literal
from dbt.adapters.jammi.mutable_table import table_properties
from dbt.adapters.jammi.mutable_table.rules.changelog import (
    PUBLISHED_PROPERTY,
    first_version_of_new_table,
)
from dbt.adapters.jammi.mutable_table.table_format import table_format

REGISTRY_IDENTIFIER = "mutable_tables"


def definition_json(definition: Mapping[str, Any]) -> str:
    """The definition as the table and the registry record it (without what the run
    added to it, table_properties.RECORDED_KEYS)."""
    recorded = table_properties.recorded_definition(definition)
    return json.dumps(recorded, sort_keys=True, separators=(",", ":"))


def properties_clause(
    definition: Mapping[str, Any],
    file_format: str,
    version: Optional[int] = None,
    first: bool = False,
    published: Optional[str] = None,
) -> str:
    """The ``tblproperties (...)`` clause. ``first``: the table is being created, with
    the model's ``tblproperties`` (tblproperties_config.py) and, under ``changelog:
    true``, the version its changelog starts at (Delta: with its change data feed;
    Iceberg: the run whose first version's changelog records count once it commits).
    ``published``: the version the run published to its changelog
    (``changelog.published_mark``)."""
    pairs: list[tuple[str, str]] = []
    if first:
        pairs += [(str(k), str(v)) for k, v in (definition.get("tblproperties") or {}).items()]
    if first and definition.get("changelog"):
        pairs.append(("jammi.changelog_since", str(first_version_of_new_table(file_format))))
        created_tag = (definition.get("changelog_topic") or {}).get("created_tag")
        pairs += table_format(file_format).changelog_properties(created_tag)
    pairs += [
        (table_properties.PROP_KIND, "mutable_table"),
        ("jammi.file_format", file_format),
    ]
    if version is not None:
        pairs.append((table_properties.PROP_VERSION, str(version)))
    if published is not None:
        pairs.append((PUBLISHED_PROPERTY, published))
    pairs.append(
        (
            table_properties.PROP_DEFINITION,
            table_properties.encode_definition(definition_json(definition)),
        )
    )
    body = ",\n".join(f"    {sql_string_literal(k)} = {sql_string_literal(v)}" for k, v in pairs)
    return f"tblproperties (\n{body}\n  )"


def create_registry_sql(registry: str, file_format: str) -> str:
    using = table_format(file_format).registry_using
    return (
        f"create table if not exists {registry} (\n"
        "    table_id string,\n"
        "    relation string,\n"
        "    file_format string,\n"
        "    definition string,\n"
        "    registered_at bigint,\n"
        "    invocation_id string\n"
        f"  ) using {using}"
    )


def registry_row_sql(
    registry: str,
    relation: str,
    definition: Mapping[str, Any],
    file_format: str,
    invocation_id: str,
) -> str:
    """One row per registration or definition change; the latest ``registered_at`` is
    current."""
    values = [
        sql_string_literal(str(definition["table_id"])),
        sql_string_literal(relation),
        sql_string_literal(file_format),
        sql_string_literal(definition_json(definition)),
        "unix_millis(current_timestamp())",
        sql_string_literal(invocation_id),
    ]
    return f"insert into {registry}\n  select\n    " + ",\n    ".join(values)


def definition_changed(definition: Mapping[str, Any], stored: Optional[Mapping[str, Any]]) -> bool:
    return definition_json(definition) != definition_json(stored or {})
