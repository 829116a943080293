"""Every definition rule, with a passing and a failing case; messages name the column
or option and the fix."""

from __future__ import annotations

import json
import re

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.definition import (
    MutableIndexDef,
    MutableTableDefinition,
    MutableTableDefinitionBuilder,
    MutableTableId,
    keeps_stored_on_null,
    validate_file_format,
)
from dbt.adapters.jammi.topic.definition import TopicDefinition, default_topic_name, new_topic_id
from tests.unit.rejections import rejects

SCHEMA = {"item_id": "string", "price_tier": "int", "availability": "boolean", "qty": "bigint"}


def builder(schema=None, name="item_dimensions"):
    return MutableTableDefinitionBuilder(MutableTableId(name), schema or SCHEMA)


# --- the builder, as in the spec -------------------------------------------------


def test_builder_builds_a_definition():
    definition = (
        builder()
        .primary_key(["item_id"])
        .index("by_tier", ["price_tier"])
        .index("by_qty", ["qty"], unique=True)
        .build()
    )
    assert definition.table_id == MutableTableId("item_dimensions")
    assert definition.primary_key == ("item_id",)
    assert definition.indexes == (
        MutableIndexDef("by_tier", ("price_tier",), False),
        MutableIndexDef("by_qty", ("qty",), True),
    )
    assert [c.type for c in definition.columns] == ["string", "int", "boolean", "bigint"]
    assert definition.value_columns == ["price_tier", "availability", "qty"]
    assert json.loads(definition.to_json())["storage_key"] == ["item_id"]


# --- reserved names --------------------------------------------------------------


def test_tenant_id_column_is_reserved():
    rejects(
        lambda: builder({"id": "int", "tenant_id": "string"}).primary_key(["id"]).build(),
        "mutable_table 'item_dimensions'",
        "'tenant_id'",
        "reserved",
        "jammi_tenant",
    )


def test_tenant_id_is_reserved_in_any_case():
    rejects(
        lambda: builder({"id": "int", "Tenant_ID": "string"}).primary_key(["id"]).build(),
        "'Tenant_ID'",
    )


def test_underscore_column_is_reserved():
    message = rejects(
        lambda: builder({"id": "int", "_x": "string"}).primary_key(["id"]).build(),
        "'_x'",
        "reserved",
    )
    assert "as x" in message


def test_plain_names_pass():
    assert builder({"id": "int", "x_": "string"}).primary_key(["id"]).build()


def test_non_identifier_column_is_rejected():
    rejects(
        lambda: builder({"id": "int", "a b": "string"}).primary_key(["id"]).build(),
        "'a b'",
        "alias",
    )


def test_duplicate_output_column_is_rejected():
    rejects(
        lambda: builder([("id", "int"), ("ID", "int")]).primary_key(["id"]).build(),
        "'ID'",
        "more than once",
    )


# --- closed type set -------------------------------------------------------------


@pytest.mark.parametrize(
    "spark_type",
    [
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "integer",
        "bigint",
        "long",
        "float",
        "double",
        "string",
        "binary",
        "varchar(20)",
        "char(3)",
        "INT",
        "BIGINT",
        "string collate UTF8_BINARY",
    ],
)
def test_closed_types_pass(spark_type):
    assert builder({"id": "int", "v": spark_type}).primary_key(["id"]).build()


@pytest.mark.parametrize(
    "spark_type, fragments",
    [
        ("timestamp", ["bigint epoch milliseconds", "to_epoch_millis('v')"]),
        ("timestamp_ntz", ["bigint epoch milliseconds", "to_epoch_millis"]),
        ("date", ["bigint epoch milliseconds", "to_epoch_millis"]),
        ("decimal(10,2)", ["scaled bigint", "to_scaled_bigint('v', 2)"]),
        ("decimal(38,0)", ["scaled bigint", "to_scaled_bigint('v', 0)"]),
        ("array<int>", ["JSON string", "to_json(v)"]),
        ("map<string,int>", ["JSON string"]),
        ("struct<a:int,b:string>", ["JSON string"]),
        ("void", ["cast(null as string)"]),
        ("string collate UTF8_LCASE", ["byte by byte", "collate(v, 'UTF8_BINARY') as v"]),
        ("string collate UNICODE_CI", ["collate(v, 'UTF8_BINARY')"]),
        ("variant", ["JSON string", "to_json(v) as v"]),
        ("time(6)", ["milliseconds since midnight"]),
    ],
)
def test_wider_types_are_rejected_with_the_encoding_under_type_set_jammi(spark_type, fragments):
    rejects(
        lambda: (
            builder({"id": "int", "v": spark_type}).primary_key(["id"]).type_set("jammi").build()
        ),
        "column 'v'",
        f"type {spark_type}",
        *fragments,
    )


# --- primary key ------------------------------------------------------------------


def test_empty_primary_key_is_rejected():
    rejects(lambda: builder().primary_key([]).build(), "primary key is empty", "primary_key=")


def test_missing_primary_key_is_rejected():
    rejects(lambda: builder().build(), "no primary key", "primary_key")


def test_primary_key_column_must_exist():
    rejects(
        lambda: builder().primary_key(["sku"]).build(),
        "primary_key column 'sku'",
        "not in the model's output",
        "add 'sku'",
    )


def test_primary_key_without_duplicates():
    rejects(
        lambda: builder().primary_key(["item_id", "item_id"]).build(),
        "'primary_key'",
        "item_id more than once",
    )


def test_composite_primary_key_passes():
    definition = builder().primary_key(["item_id", "price_tier"]).build()
    assert definition.storage_key == ["item_id", "price_tier"]


def test_primary_key_must_be_a_list_of_names():
    rejects(lambda: builder().primary_key([1]).build(), "'primary_key'", "list of column names")


def test_primary_key_from_config_accepts_a_single_name():
    definition = MutableTableDefinition.from_config("m", SCHEMA, {"primary_key": "item_id"})
    assert definition.primary_key == ("item_id",)


# --- indexes ----------------------------------------------------------------------


def test_index_on_missing_column_is_rejected():
    rejects(
        lambda: builder().primary_key(["item_id"]).index("by_sku", ["sku"]).build(),
        "index 'by_sku' column 'sku'",
        "not in the model's output",
    )


def test_index_names_are_unique():
    rejects(
        lambda: (
            builder()
            .primary_key(["item_id"])
            .index("by_qty", ["qty"])
            .index("by_qty", ["price_tier"])
            .build()
        ),
        "index 'by_qty'",
        "more than once",
        "unique name",
    )


def test_index_unique_flag_must_be_boolean():
    rejects(
        lambda: builder().primary_key(["item_id"]).index("by_qty", ["qty"], "yes").build(),
        "index 'by_qty' unique",
        "true or false",
    )


def test_index_name_must_be_an_identifier():
    rejects(
        lambda: builder().primary_key(["item_id"]).index("By-Qty", ["qty"]).build(),
        "index 'By-Qty'",
    )


def test_index_needs_columns():
    rejects(
        lambda: builder().primary_key(["item_id"]).index("by_qty", []).build(),
        "index 'by_qty' columns",
        "is empty",
    )


def test_indexes_from_config():
    definition = MutableTableDefinition.from_config(
        "m",
        SCHEMA,
        {
            "primary_key": ["item_id"],
            "indexes": [{"name": "by_qty", "columns": ["qty"], "unique": True}],
        },
    )
    assert definition.indexes == (MutableIndexDef("by_qty", ("qty",), True),)


def test_malformed_index_config_is_rejected():
    rejects(
        lambda: MutableTableDefinition.from_config(
            "m", SCHEMA, {"primary_key": ["item_id"], "indexes": [{"name": "x", "cols": ["a"]}]}
        ),
        "mutable_table 'm'",
        "{name, columns, unique}",
    )


# --- identifiers ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["orders", "item_dimensions", "t1", "a_b_c"])
def test_table_ids_pass(name):
    assert MutableTableId(name).name == name


def test_double_underscore_table_id_is_reserved():
    rejects(lambda: MutableTableId("__x"), "'__x'", "reserved for engine tables", "'x'")


@pytest.mark.parametrize("name", ["Bad-Name", "1abc", "UPPER", "a b", "a;drop"])
def test_bad_table_ids_are_rejected(name):
    rejects(lambda: MutableTableId(name), f"'{name}'", "lowercase letters, digits")


def test_model_name_is_named_in_messages():
    with pytest.raises(JammiValidationError) as info:
        MutableTableDefinition.from_config(
            "products", {"id": "int", "_v": "int"}, {"primary_key": ["id"]}
        )
    assert "mutable_table 'products'" in str(info.value)


# --- options ----------------------------------------------------------------------


def test_version_column_must_be_integer_and_exist():
    assert builder().primary_key(["item_id"]).version_column("qty").build().version_column == "qty"
    rejects(
        lambda: builder().primary_key(["item_id"]).version_column("v").build(),
        "version_column column 'v'",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).version_column("availability").build(),
        "version_column 'availability'",
        "whole number, decimal, date, timestamp or string",
    )


def test_hard_deletes_choice():
    assert builder().primary_key(["item_id"]).hard_deletes("delete").build().hard_deletes == (
        "delete"
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).hard_deletes("purge").build(),
        "'hard_deletes' is 'purge'",
        "'ignore', 'delete'",
    )


def test_partial_updates_is_true_false_or_value_columns():
    assert builder().primary_key(["item_id"]).partial_updates(True).build().partial_updates
    listed = builder().primary_key(["item_id"]).partial_updates(["qty", "price_tier"]).build()
    assert listed.partial_updates == ("qty", "price_tier")
    assert json.loads(listed.to_json())["partial_updates"] == ["qty", "price_tier"]
    rejects(
        lambda: builder().primary_key(["item_id"]).partial_updates("true").build(),
        "mutable_table 'item_dimensions'",
        "'partial_updates' must be true, false or a list of value columns, got 'true'",
        "partial_updates: ['email']",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).partial_updates(["qty", "colour"]).build(),
        "partial_updates column 'colour' is not in the model's output",
        "add 'colour' to the model's select list or fix partial_updates",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).partial_updates(["item_id", "qty"]).build(),
        "partial_updates names key column(s) item_id",
        "list value columns only in partial_updates",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).partial_updates([]).build(),
        "'partial_updates' is empty",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).partial_updates(["qty", "qty"]).build(),
        "'partial_updates' names qty more than once",
    )


def test_keeps_stored_on_null_reads_a_definition_or_its_record():
    assert [keeps_stored_on_null(value, "qty") for value in (True, False, None)] == [
        True,
        False,
        False,
    ]
    assert keeps_stored_on_null(["qty"], "qty") and keeps_stored_on_null(("qty",), "qty")
    assert not keeps_stored_on_null(["qty"], "price_tier")


def test_on_schema_change_choice():
    definition = builder().primary_key(["item_id"]).on_schema_change("append_new_columns").build()
    assert definition.on_schema_change == "append_new_columns"
    synced = builder().primary_key(["item_id"]).on_schema_change("sync_all_columns").build()
    assert synced.on_schema_change == "sync_all_columns"
    rejects(
        lambda: builder().primary_key(["item_id"]).on_schema_change("ignore").build(),
        "'on_schema_change'",
        "'fail', 'append_new_columns', 'sync_all_columns'",
    )


def test_file_format_choice():
    assert builder().primary_key(["item_id"]).file_format("delta").build().file_format == "delta"
    rejects(
        lambda: builder().primary_key(["item_id"]).file_format("csv").build(),
        "'file_format' is 'csv'",
    )


def test_hudi_is_refused_by_name_for_tables_and_topics():
    rejects(
        lambda: builder().primary_key(["item_id"]).file_format("hudi").build(),
        "file_format 'hudi' is not supported",
        "set file_format to 'delta', 'iceberg', 'parquet' or 'orc'",
    )
    # resolve_file_format (mutable tables and topics, before any SQL) says the same.
    with pytest.raises(JammiValidationError, match="model 'events'.*'hudi' is not supported"):
        validate_file_format("hudi", "model 'events'")
    assert validate_file_format("iceberg", "model 'events'") == "iceberg"


def test_delete_when_is_a_single_predicate():
    definition = builder().primary_key(["item_id"]).delete_when("qty = 0").build()
    assert definition.delete_when == "qty = 0"
    assert builder().primary_key(["item_id"]).delete_when("item_id = 'a;b'").build()
    rejects(
        lambda: builder().primary_key(["item_id"]).delete_when("1=1; drop table x").build(),
        "'delete_when'",
        "single boolean expression",
    )
    rejects(
        lambda: builder().primary_key(["item_id"]).delete_when("qty = 0 -- x").build(),
        "'delete_when'",
    )


def test_tenant_from_must_be_a_string_column_outside_the_key():
    schema = {**SCHEMA, "org": "string"}
    assert builder(schema).primary_key(["item_id"]).tenant_from("org").build().tenant_from == "org"
    rejects(
        lambda: builder(schema).primary_key(["item_id"]).tenant_from("qty").build(),
        "tenant_from column 'qty'",
        "cast",
    )
    rejects(
        lambda: builder(schema).primary_key(["item_id", "org"]).tenant_from("org").build(),
        "tenant_from column 'org'",
        "remove 'org' from primary_key",
    )


def test_ordering_column_must_exist():
    assert builder().primary_key(["item_id"]).ordering_column("qty").build().ordering_column
    rejects(
        lambda: builder().primary_key(["item_id"]).ordering_column("ts").build(),
        "ordering_column column 'ts'",
    )


# --- scd2 options -----------------------------------------------------------------


def test_scd2_storage_key_and_columns():
    definition = builder().primary_key(["item_id"]).history("scd2").build()
    assert definition.storage_key == ["item_id", "valid_from"]
    assert [c.name for c in definition.storage_columns][-2:] == ["valid_from", "valid_to"]
    assert definition.track_columns == ("price_tier", "availability", "qty")


def test_scd2_valid_to_is_engine_maintained():
    rejects(
        lambda: (
            builder({**SCHEMA, "valid_to": "bigint"})
            .primary_key(["item_id"])
            .history("scd2")
            .build()
        ),
        "'valid_to'",
        "remove 'valid_to'",
    )


def test_scd2_valid_from_must_be_bigint_millis():
    assert (
        builder({**SCHEMA, "valid_from": "bigint"}).primary_key(["item_id"]).history("scd2").build()
    )
    rejects(
        lambda: (
            builder({**SCHEMA, "valid_from": "string"})
            .primary_key(["item_id"])
            .history("scd2")
            .build()
        ),
        "valid_from column 'valid_from'",
        "epoch milliseconds",
    )


def test_track_columns_only_with_scd2_and_non_key():
    definition = builder().primary_key(["item_id"]).history("scd2").track_columns(["qty"]).build()
    assert definition.track_columns == ("qty",)
    rejects(
        lambda: builder().primary_key(["item_id"]).track_columns(["qty"]).build(),
        "'track_columns'",
        "history: scd2",
    )
    rejects(
        lambda: (
            builder().primary_key(["item_id"]).history("scd2").track_columns(["item_id"]).build()
        ),
        "track_columns includes key column 'item_id'",
    )


def test_history_choice():
    rejects(
        lambda: builder().primary_key(["item_id"]).history("scd1").build(), "'history' is 'scd1'"
    )


# --- topics -----------------------------------------------------------------------


def test_topic_definition():
    topic = TopicDefinition.from_config(
        "cdc_orders",
        {"order_id": "string", "op": "string"},
        {"topic_name": "cdc.orders", "retention_offsets": 100},
    )
    assert topic.name == "cdc.orders"
    assert re.fullmatch(
        r"__topic_[0-9a-f]{8}_[0-9a-f]{4}_7[0-9a-f]{3}_[89ab][0-9a-f]{3}_"
        r"[0-9a-f]{12}",
        topic.backing_table,
    )
    assert topic.row_idx == "contiguous" and topic.to_dict()["row_idx"] == "contiguous"


def test_topic_names_are_dotted_lowercase():
    assert default_topic_name("cdc_orders") == "cdc.orders"
    assert default_topic_name("events") == "events"
    for bad in ("CDC.Orders", "cdc..orders", ".cdc", "cdc-orders", "cdc.1x"):
        rejects(
            lambda bad=bad: TopicDefinition.from_config("m", {"a": "int"}, {"topic_name": bad}),
            "topic 'm'",
            "topic_name",
            "cdc.orders",
        )


def test_topic_rejects_reserved_columns_and_bad_retention():
    rejects(lambda: TopicDefinition.from_config("t", {"_offset": "bigint"}, {}), "'_offset'")
    rejects(
        lambda: TopicDefinition.from_config("t", {"a": "int"}, {"retention_ms": -5}),
        "'retention_ms'",
        "positive",
    )


def test_topic_ids_are_time_ordered():
    ids = [new_topic_id(now_ms=ms) for ms in (1_000, 2_000, 3_000_000)]
    assert ids == sorted(ids)
    assert all(i == i.lower() and "-" not in i for i in ids)


def test_topic_row_idx_is_contiguous_or_ordered():
    ordered = TopicDefinition.from_config("cdc_orders", {"a": "int"}, {"row_idx": "ordered"})
    assert ordered.to_dict()["row_idx"] == "ordered"
    for bad in ("dense", "ORDERED", True, 1):
        rejects(
            lambda bad=bad: TopicDefinition.from_config("m", {"a": "int"}, {"row_idx": bad}),
            "topic 'm'",
            "'row_idx' is",
            "set row_idx to one of: 'contiguous', 'ordered'",
        )
