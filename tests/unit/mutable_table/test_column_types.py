"""type_set: Spark's own types by default, Jammi's closed set by name; which types each
column role takes; version_column as a list; stored type changes; the rendered SQL of a
version of two columns and of a map value."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import map_spark_type, normalize_type
from dbt.adapters.jammi.mutable_table.definition import (
    MutableTableDefinition,
)
from dbt.adapters.jammi.mutable_table.scd2 import plan_scd2
from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema
from dbt.adapters.jammi.topic.definition import TopicDefinition
from tests.unit.mutable_table.test_mutable_render import render

FEED = {
    "order_id": "bigint",
    "updated_at": "timestamp",
    "seq": "int",
    "amount": "decimal(10,2)",
    "placed_on": "date",
    "tags": "array<string>",
    "attrs": "map<string,int>",
    "ship_to": "struct<City:string,zip:int>",
    "label": "string",
}


def feed(config: dict, schema: dict | None = None) -> MutableTableDefinition:
    return MutableTableDefinition.from_config("orders", schema or FEED, config)


def refused(config: dict, *fragments: str, schema: dict | None = None) -> str:
    with pytest.raises(JammiValidationError) as info:
        feed(config, schema)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert "mutable_table 'orders'" in message and "Fix:" in message
    return message


def test_spark_types_are_stored_as_they_are_by_default():
    definition = feed({"primary_key": ["order_id"], "version_column": "updated_at"})
    assert dict((c.name, c.type) for c in definition.columns) == {
        **FEED,
        "ship_to": "struct<City:string,zip:int>",
    }
    assert "type_set" not in definition.to_dict()  # the default is not recorded


@pytest.mark.parametrize(
    "spark_type, stored",
    [
        ("TIMESTAMP", "timestamp"),
        ("timestamp_ltz", "timestamp"),
        ("timestamp_ntz", "timestamp_ntz"),
        ("decimal", "decimal(10,0)"),
        ("numeric(5, 1)", "decimal(5,1)"),
        ("ARRAY<STRUCT<Name: STRING>>", "array<struct<Name:string>>"),
        ("integer", "int"),
    ],
)
def test_spark_type_set_normalizes(spark_type, stored):
    assert map_spark_type(spark_type, "c", "spark").closed_type == stored


@pytest.mark.parametrize("spark_type", ["time(6)", "interval day", "void"])
def test_types_no_table_stores_are_refused_under_spark_too(spark_type):
    assert map_spark_type(spark_type, "c", "spark").closed_type is None


@pytest.mark.parametrize(
    "schema, config, fragments",
    [
        (
            {"code": "string collate UTF8_LCASE", "n": "int"},
            {"primary_key": ["code"]},
            ["column 'code' has type string collate UTF8_LCASE", "byte by byte"]
            + ["collate(code, 'UTF8_BINARY') as code"],
        ),
        (
            {"id": "variant", "payload": "int"},
            {"primary_key": ["id"]},
            ["primary_key column 'id' has the nested type variant", "compared as whole"],
        ),
    ],
    ids=["case_insensitive_key", "variant_key"],
)
def test_spark4_types_no_table_stores_are_refused_with_the_fix(schema, config, fragments):
    # Spark 4's types as its query columns name them, under the default type set (the
    # models of tests/functional/mutable_table/test_spark4_types.py)
    refused(config, *fragments, schema=schema)


def test_a_variant_is_a_value_column_under_spark_and_refused_under_jammi():
    definition = feed({"primary_key": ["id"]}, {"id": "int", "payload": "variant"})
    assert dict((c.name, c.type) for c in definition.columns)["payload"] == "variant"
    refused(
        {"primary_key": ["id"], "type_set": "jammi"},
        "column 'payload' has type variant",
        "to_json(payload) as payload",
        schema={"id": "int", "payload": "variant"},
    )


def test_type_set_jammi_keeps_the_closed_rule_and_is_recorded():
    message = refused(
        {"primary_key": ["order_id"], "type_set": "jammi"},
        "column 'updated_at' has type timestamp",
        "type_set: jammi",
        "to_epoch_millis('updated_at')",
    )
    assert "closed type set" in message
    closed = {"order_id": "bigint", "updated_ms": "bigint", "label": "string"}
    definition = feed({"primary_key": ["order_id"], "type_set": "jammi"}, closed)
    assert definition.to_dict()["type_set"] == "jammi"
    refused(
        {"primary_key": ["order_id"], "type_set": "jammi", "version_column": "label"},
        "version_column 'label'",
        "integer column",
        schema=closed,
    )
    refused({"primary_key": ["order_id"], "type_set": "closed"}, "'type_set' is 'closed'")


def test_topics_follow_the_same_rule():
    columns = [("at", "timestamp"), ("amount", "decimal(10,2)"), ("tags", "array<string>")]
    topic = TopicDefinition.from_config("cdc_orders", columns, {})
    assert [c.type for c in topic.columns] == ["timestamp", "decimal(10,2)", "array<string>"]
    with pytest.raises(JammiValidationError) as info:
        TopicDefinition.from_config("cdc_orders", columns, {"type_set": "jammi"})
    message = str(info.value)
    assert "topic 'cdc_orders': column 'at' has type timestamp" in message
    assert "type_set: jammi" in message and "to_epoch_millis('at')" in message


@pytest.mark.parametrize(
    "config, fragments",
    [
        ({"primary_key": ["tags"]}, ["primary_key column 'tags'", "nested type array<string>"]),
        (
            {"primary_key": ["order_id"], "indexes": [{"name": "by_to", "columns": ["ship_to"]}]},
            ["index 'by_to' column 'ship_to'", "sha2(to_json(ship_to), 256)"],
        ),
        ({"primary_key": ["order_id"], "ordering_column": "attrs"}, ["ordering_column"]),
        ({"primary_key": ["order_id"], "version_column": "tags"}, ["version_column 'tags'"]),
        (
            {"primary_key": ["order_id"], "version_column": ["updated_at", "attrs"]},
            ["version_column 'attrs'", "cannot compare exactly"],
        ),
        (
            {
                "primary_key": ["order_id"],
                "version_column": "seq",
                "merge_functions": {"label": "sum"},
            },
            ["sums column 'label' of type string"],
        ),
        (
            {
                "primary_key": ["order_id"],
                "version_column": "seq",
                "merge_functions": {"attrs": "min"},
            },
            ["min of map<string,int> column 'attrs'", "first or last_non_null"],
        ),
        (
            {
                "primary_key": ["order_id"],
                "version_column": ["seq", "updated_at"],
                "merge_functions": {"seq": "max"},
            },
            ["'seq', which is the version_column"],
        ),
        ({"primary_key": ["order_id"], "version_column": ["seq", "seq"]}, ["more than once"]),
        ({"primary_key": ["order_id"], "version_column": []}, ["a column name or a list"]),
        ({"primary_key": ["order_id"], "ttl_ms": 1, "ttl_column": "label"}, ["as timestamp"]),
    ],
)
def test_roles_refuse_the_types_they_cannot_use(config, fragments):
    refused(config, *fragments)


def test_roles_take_time_and_decimal_types():
    definition = feed(
        {
            "primary_key": ["placed_on", "amount"],
            "version_column": ["updated_at", "seq"],
            "indexes": [{"name": "by_label", "columns": ["label"], "unique": True}],
            "ordering_column": "updated_at",
            "ttl_ms": 1000,
            "ttl_column": "updated_at",
            "merge_functions": {"attrs": "last_non_null"},
        }
    )
    assert definition.version_columns == ("updated_at", "seq")
    assert definition.to_dict()["version_column"] == ["updated_at", "seq"]
    assert feed({"primary_key": ["order_id"], "version_column": "amount"}).version_column == (
        "amount"
    )


def test_a_timestamp_history_has_timestamp_intervals():
    definition = feed(
        {"primary_key": ["order_id"], "history": "scd2", "valid_from": "updated_at"}
    ).to_dict()
    assert definition["storage_columns"][-1] == ["valid_to", "timestamp"]
    plan = plan_scd2(definition)
    assert plan.interval_type == "timestamp"
    assert plan.run_time == f"cast(timestamp_millis({plan.run_time_ms}) as timestamp)"
    untimed = feed({"primary_key": ["order_id"], "history": "scd2"}).to_dict()
    untimed_plan = plan_scd2(untimed)
    assert untimed_plan.run_time == f"cast({untimed_plan.run_time_ms} as bigint)"
    refused(
        {"primary_key": ["order_id"], "history": "scd2", "valid_from": "label"},
        "valid_from column 'label' has type string",
    )


@pytest.mark.parametrize(
    "stored, batch, allowed",
    [
        ("decimal(12,2)", "decimal(10,2)", True),
        ("decimal(10,2)", "decimal(12,2)", False),
        ("decimal(10,2)", "decimal(10,3)", False),
        ("timestamp", "date", True),
        ("date", "timestamp", False),
        ("array<string>", "array< STRING >", True),
        ("array<string>", "array<int>", False),
        ("bigint", "int", True),
    ],
)
def test_stored_type_changes(stored, batch, allowed):
    batch_definition = feed(
        {"primary_key": ["order_id"]}, {"order_id": "bigint", "v": batch}
    ).to_dict()
    stored_columns = [("order_id", "bigint"), ("v", stored)]
    if allowed:
        reconciled = reconcile_schema("orders", batch_definition, stored_columns).definition
        assert reconciled["columns"][1] == ["v", normalize_type(stored)]
    else:
        with pytest.raises(JammiValidationError, match="a decimal of lower or equal precision"):
            reconcile_schema("orders", batch_definition, stored_columns)


def test_two_column_version_renders_as_a_struct_compared_in_order():
    definition = feed(
        {"primary_key": ["order_id"], "version_column": ["updated_at", "seq"]}
    ).to_dict()
    definition["batch_columns"] = list(FEED)
    change_set = render("get_mutable_change_set_sql", definition, "b", "t", None)
    pair = "named_struct('v0', `updated_at`, 'v1', `seq`)"
    assert f"order by {pair} desc" in change_set
    assert (
        "coalesce(named_struct('v0', s_updated_at, 'v1', s_seq) > "
        "named_struct('v0', t_updated_at, 'v1', t_seq), true)"
    ) in change_set
    merge = render("get_merge_batch_sql", definition, "t", "b", None)
    assert "when (`updated_at` is null or `seq` is null) then raise_error(" in merge
    assert f"lag({pair}) over batch_key as _version_above" in merge
    assert "_rn = 2 and _version_above = " + pair in merge


def test_a_map_value_compares_as_json():
    definition = feed({"primary_key": ["order_id"]}).to_dict()
    change_set = render("get_mutable_change_set_sql", definition, "b", "t", None)
    assert "to_json(array_sort(map_entries(s_attrs)," in change_set
    assert "<=> to_json(array_sort(map_entries(t_attrs)," in change_set
    assert "s_tags <=> t_tags" in change_set
