"""The definition recorded in table properties survives Spark's property redaction.

Spark shows a property whose key or value matches spark.redaction.regex as
``*********(redacted)`` in SHOW TBLPROPERTIES; a column named like ``api_secret`` used to
make the recorded definition unreadable, and every later run failed."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table import table_properties, table_records
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# Spark's default spark.redaction.regex, and a stricter one a deployment might set.
REDACTION_REGEXES = ["(?i)secret|password|token|access[.]?key", "(?i)secret|password|key|pwd"]
REDACTED = "*********(redacted)"
SCHEMA = {
    "id": "bigint",
    "api_secret": "string",
    "password": "string",
    "auth_token": "string",
    "access_key": "string",
}


def _properties_clause(definition: dict, version: Any = 3) -> str:
    return table_records.properties_clause(definition, "parquet", version)


def _shown_properties(clause: str, regex: str) -> dict[str, str]:
    """What SHOW TBLPROPERTIES returns: Spark's redaction applied to every pair."""
    pattern = re.compile(regex)
    pairs = re.findall(r"'((?:[^'\\]|\\.)*)'\s*=\s*'((?:[^'\\]|\\.)*)'", clause)
    shown = {}
    for key, value in pairs:
        value = re.sub(r"\\(.)", r"\1", value)
        redacted = pattern.search(key) or pattern.search(value)
        shown[key] = REDACTED if redacted else value
    return shown


@pytest.mark.parametrize("regex", REDACTION_REGEXES)
def test_definition_with_secret_like_columns_reads_back(regex):
    definition = MutableTableDefinition.from_config(
        "accounts", SCHEMA, {"primary_key": ["id"], "delete_when": "password = 'x'"}
    ).to_dict()
    shown = _shown_properties(_properties_clause(definition), regex)
    assert REDACTED not in shown.values(), shown
    assert shown["jammi.kind"] == "mutable_table"
    stored = table_properties.stored_definition(shown)
    assert stored is not None
    assert stored["columns"] == [[n, t] for n, t in SCHEMA.items()]
    assert stored["primary_key"] == ["id"]
    assert stored["delete_when"] == "password = 'x'"


def test_plain_json_definitions_still_read():
    """Tables (and registry rows) written before the encoding hold plain JSON."""
    plain = json.dumps({"table_id": "t", "primary_key": ["id"]})
    assert table_properties.stored_definition({"jammi.definition": plain})["primary_key"] == ["id"]
    assert table_properties.parse_definition(plain)["table_id"] == "t"


def test_unreadable_definitions_are_none_not_a_crash():
    assert table_properties.stored_definition({"jammi.definition": REDACTED}) is None
    assert table_properties.stored_definition({}) is None
    assert table_properties.parse_definition("hex:zz") is None
    assert table_properties.parse_definition(None) is None


def _describe_rows(shown: dict[str, str], separator: str) -> list[tuple[str, str]]:
    """DESCRIBE TABLE EXTENDED's rows as Spark prints them: properties sorted by key in
    one ``Table Properties`` row (``, `` between pairs; Delta's tables ``,``)."""
    pairs = separator.join(f"{k}={v}" for k, v in sorted(shown.items()))
    return [
        ("id", "bigint"),
        ("", ""),
        ("Location", "file:/w/t"),
        ("Table Properties", f"[{pairs}]"),
    ]


@pytest.mark.parametrize("separator", [", ", ","])
def test_the_describe_row_gives_the_properties_a_run_reads(separator):
    """One DESCRIBE TABLE EXTENDED gives columns, location and the jammi.* properties;
    other properties, even with commas, brackets and '=' in their values, do not get in
    the way, and a redacted one is skipped."""
    definition = MutableTableDefinition.from_config(
        "accounts", SCHEMA, {"primary_key": ["id"], "delete_when": "password = 'x'"}
    ).to_dict()
    shown = _shown_properties(_properties_clause(definition), REDACTION_REGEXES[0])
    shown.update({"comment": "a, b=c] d", "api_secret": REDACTED, "jammi.changelog_since": "4"})
    properties = table_properties.describe_properties(_describe_rows(shown, separator))
    assert set(properties) == {
        "jammi.kind",
        "jammi.file_format",
        "jammi.version",
        "jammi.definition",
        "jammi.changelog_since",
    }
    assert properties["jammi.kind"] == "mutable_table"
    assert properties["jammi.file_format"] == "parquet"
    assert properties["jammi.version"] == "3"
    assert properties["jammi.changelog_since"] == "4"
    assert table_properties.stored_definition(properties)["delete_when"] == "password = 'x'"


def test_a_plain_json_definition_in_the_describe_row_sends_the_run_to_the_registry():
    """A definition written before the hex encoding holds commas: cut there, it does not
    parse, and the run reads the registry (as it does for a redacted one)."""
    plain = json.dumps({"table_id": "t", "primary_key": ["id"]})
    rows = _describe_rows({"jammi.definition": plain, "jammi.kind": "mutable_table"}, ", ")
    properties = table_properties.describe_properties(rows)
    assert properties["jammi.kind"] == "mutable_table"
    assert properties["jammi.definition"] != plain
    assert table_properties.stored_definition(properties) is None
    assert table_properties.describe_properties([("id", "bigint")]) == {}


@pytest.mark.parametrize(
    "config",
    [
        {"primary_key": ["id"]},
        {
            "primary_key": ["id"],
            "version_column": ["v", "seq"],
            "delete_when": "deleted",
            "tombstone_retention": "30d",
            "identity_column": "row_no",
            "changelog": True,
            "indexes": [{"name": "by_name", "columns": ["name"], "unique": True}],
            "type_set": "jammi",
        },
        {"primary_key": ["id"], "history": "scd2", "valid_from": "v", "track_columns": ["name"]},
        {
            "primary_key": ["id"],
            "ttl_ms": 60_000,
            "merge_functions": {"n": "sum"},
            "version_column": "v",
        },
    ],
)
def test_the_recorded_definition_is_the_definitions_own_keys(config):
    schema = {"id": "bigint", "name": "string", "v": "bigint", "seq": "int", "n": "bigint"}
    schema["deleted"] = "boolean"
    own = MutableTableDefinition.from_config("t", schema, config).to_dict()
    # every key the definition has is recorded...
    assert table_properties.recorded_definition(own) == own
    # ...and nothing a run adds to it, whatever its name
    run = {**own, "batch_columns": ["id"], "now_ms": 1, "a_key_added_next_year": {"x": 1}}
    assert table_properties.recorded_definition(run) == own
    assert table_records.definition_json(run) == json.dumps(
        own, sort_keys=True, separators=(",", ":")
    )
