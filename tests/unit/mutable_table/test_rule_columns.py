"""``rule_columns`` (rule_columns.py): the stored columns without them, a version among
them under its reserved name, what is refused, the batch's aliases, the changelog's
names and the stored table's changes. Stored rows: tests/functional/mutable_table/
test_rule_columns.py."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import rule_columns
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import changelog
from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema
from dbt.adapters.jammi.mutable_table.table_format import table_format

ORDERS = {"id": "int", "status": "string", "op": "string", "off": "bigint", "idx": "int"}


def definition(**config) -> dict:
    config.setdefault("primary_key", ["id"])
    return MutableTableDefinition.from_config("orders", ORDERS, config).to_dict()


def refusal(**config) -> str:
    with pytest.raises(JammiValidationError) as raised:
        definition(**config)
    return str(raised.value)


def test_rule_columns_are_not_stored_and_a_version_keeps_its_reserved_name():
    defn = definition(
        version_column=["off", "idx"], delete_when="op = 'd'", rule_columns=["op", "off", "idx"]
    )
    assert defn["columns"] == [
        ["id", "int"],
        ["status", "string"],
        ["_jammi_version_off", "bigint"],
        ["_jammi_version_idx", "int"],
    ]
    assert defn["version_column"] == ["_jammi_version_off", "_jammi_version_idx"]
    # the stored version is compared as a value: a newer version alone is an update
    assert "_jammi_version_off" in defn["value_columns"]
    assert defn["rule_columns"] == ["op", "off", "idx"]
    single = definition(version_column="off", rule_columns=["off"])
    assert single["version_column"] == "_jammi_version_off"
    assert "rule_columns" not in definition(version_column="off")


@pytest.mark.parametrize(
    ("config", "option"),
    [
        ({"rule_columns": ["id"]}, "primary_key"),
        (
            {"rule_columns": ["status"], "indexes": [{"name": "by_status", "columns": ["status"]}]},
            "indexes",
        ),
        ({"rule_columns": ["status"], "ordering_column": "status"}, "ordering_column"),
        ({"rule_columns": ["idx"], "merge_functions": {"idx": "max"}}, "merge_functions"),
        ({"rule_columns": ["status"], "partial_updates": ["status"]}, "partial_updates"),
    ],
)
def test_a_column_another_option_stores_is_refused(config, option):
    message = refusal(**config)
    assert "mutable_table 'orders'" in message
    assert f"which {option} names" in message
    assert "remove" in message


def test_a_name_the_model_does_not_output_is_refused():
    assert "rule_columns column 'nope' is not in the model's output" in refusal(
        rule_columns=["nope"]
    )


def test_the_batch_carries_the_version_under_its_stored_name_too():
    defn = definition(version_column="off", rule_columns=["op", "off"])
    assert rule_columns.aliased_source_sql(defn, "(src)") == (
        "(select *, `off` as `_jammi_version_off` from (src) as batch)"
    )
    assert rule_columns.aliased_batch_columns(defn, [["id", "int"], ["off", "bigint"]]) == [
        ["id", "int"],
        ["off", "bigint"],
        ["_jammi_version_off", "bigint"],
    ]
    plain = definition(version_column="off", rule_columns=["op"])
    assert rule_columns.aliased_source_sql(plain, "(src)") == "(src)"


def test_the_changelog_names_a_reserved_version_as_the_model_does():
    defn = definition(version_column="off", rule_columns=["op", "off"], changelog=True)
    names = [c[0] for c in changelog.event_columns(defn)]
    assert "off" in names and "previous_off" in names
    assert "_jammi_version_off" not in names and "op" not in names
    sources = {s["name"]: s["column"] for s in changelog.event_sources(defn)}
    assert sources["off"] == "_jammi_version_off"


def test_a_stored_table_refuses_a_version_moved_into_rule_columns():
    stored = [
        ["id", "int"],
        ["status", "string"],
        ["op", "string"],
        ["off", "bigint"],
        ["idx", "int"],
    ]
    batch = definition(
        version_column="off", rule_columns=["off"], on_schema_change="append_new_columns"
    )
    with pytest.raises(JammiValidationError, match="kept as _jammi_version_off"):
        reconcile_schema("orders", batch, stored)
    listed = definition(version_column="off", rule_columns=["op"])
    with pytest.raises(JammiValidationError, match="which the stored table holds"):
        reconcile_schema("orders", listed, stored)
    synced = definition(
        version_column="off", rule_columns=["op"], on_schema_change="sync_all_columns"
    )
    # on a format that drops a column (Iceberg), the newly listed one goes
    kept = reconcile_schema(
        "orders", synced, stored, table_format("iceberg").evolution({}, None)
    ).definition
    assert "op" not in [c[0] for c in kept["columns"]]


def test_a_version_named_like_a_consumers_event_column_is_source_in_the_changelog():
    events = {"id": "int", "event_offset": "bigint", "event_row_idx": "int", "op": "string"}
    defn = MutableTableDefinition.from_config(
        "orders",
        events,
        {
            "primary_key": ["id"],
            "version_column": ["event_offset", "event_row_idx"],
            "rule_columns": ["op", "event_offset", "event_row_idx"],
            "changelog": True,
        },
    ).to_dict()
    names = [c[0] for c in changelog.event_columns(defn)]
    assert names[2:] == [
        "id",
        "source_event_offset",
        "source_event_row_idx",
        "previous_source_event_offset",
        "previous_source_event_row_idx",
    ]
