"""Schema evolution as far as the format allows (mutable_table/schema_evolution.py), and
what reconcile_schema makes of it: the change × format table of docs/mutable_table.md
("Missing and new columns"), without Spark. The runs:
tests/functional/mutable_table/test_schema_evolution.py."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table import schema_evolution, schema_reconciliation
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.table_format import table_format
from tests.unit.rejections import rejects

WIDENING_ON = {"delta.enableTypeWidening": "true"}
ICEBERG = table_format("iceberg").evolution({}, None)
DELTA_3 = table_format("delta").evolution(WIDENING_ON, None).on_spark("3.5.8")
DELTA_4 = table_format("delta").evolution(WIDENING_ON, None).on_spark("4.1.1")
DELTA_OFF = table_format("delta").evolution({}, None)
PARQUET = table_format("parquet").evolution({}, None)

# stored type, batch type: the formats that widen it in place
WIDENINGS = [
    ("tinyint", "smallint", {DELTA_3, DELTA_4}),
    ("smallint", "int", {DELTA_3, DELTA_4}),
    ("int", "bigint", {ICEBERG, DELTA_4}),
    ("float", "double", {ICEBERG, DELTA_4}),
    ("int", "double", {DELTA_4}),
    ("decimal(5,2)", "decimal(10,2)", {ICEBERG, DELTA_4}),
    ("decimal(5,2)", "decimal(10,3)", set()),  # the scale stays
    ("bigint", "int", set()),  # narrowing: exact_casts checks it
    ("date", "timestamp_ntz", set()),
]


@pytest.mark.parametrize("stored, batch, widened_by", WIDENINGS)
def test_which_format_widens_which_type(stored, batch, widened_by):
    for evolution in (ICEBERG, DELTA_3, DELTA_4, DELTA_OFF, PARQUET):
        assert evolution.widens(stored, batch) == (evolution in widened_by), evolution


def test_the_table_properties_and_the_spark_line_say_what_delta_does():
    off = table_format("delta").evolution({}, None)
    assert not off.type_widening and not off.drops_columns
    on = table_format("delta").evolution(WIDENING_ON, {"delta.columnMapping.mode": "name"})
    assert on.type_widening and on.drops_columns
    assert not on.on_spark("3.5.8").widens("int", "bigint")
    assert on.on_spark("4.0.1").widens("int", "bigint")
    # the property means nothing to Iceberg, which always widens its promotions
    assert not table_format("iceberg").evolution(WIDENING_ON, None).type_widening


def test_struct_fields_appended_are_added_anything_else_is_not():
    assert schema_evolution.struct_fields("struct<a:int,b:struct<c:int,d:string>>") == [
        ("a", "int"),
        ("b", "struct<c:int,d:string>"),
    ]
    assert schema_evolution.added_struct_fields(
        "struct<a:int>", "struct<a:int,b:string,c:decimal(5,2)>"
    ) == [("b", "string"), ("c", "decimal(5,2)")]
    assert schema_evolution.added_struct_fields("struct<a:int>", "struct<b:string,a:int>") is None
    assert schema_evolution.added_struct_fields("struct<a:int>", "struct<a:bigint,b:int>") is None
    assert schema_evolution.added_struct_fields("struct<a:int,b:int>", "struct<a:int>") is None
    assert schema_evolution.added_struct_fields("array<int>", "array<bigint>") is None


def definition(columns, **config):
    config.setdefault("on_schema_change", "sync_all_columns")
    return MutableTableDefinition.from_config(
        "feed", columns, {"primary_key": ["id"], **config}
    ).to_dict()


STORED = [["id", "int"], ["qty", "int"], ["info", "struct<a:int>"], ["note", "string"]]
MOVED = {"id": "int", "qty": "bigint", "info": "struct<a:int,b:string>", "extra": "string"}


def test_iceberg_evolves_every_change_in_place():
    result = schema_reconciliation.reconcile_schema("feed", definition(MOVED), STORED, ICEBERG)
    assert result.evolution.widened == [["qty", "int", "bigint"]]
    assert result.evolution.added_fields == [["info", "b", "string"]]
    assert result.evolution.dropped == ["note"]
    assert result.new_columns == [["extra", "string"]]
    assert result.definition["columns"] == [
        ["id", "int"],
        ["qty", "bigint"],
        ["info", "struct<a:int,b:string>"],
        ["extra", "string"],
    ]
    # nothing left to check: the stored column now holds every batch value
    assert result.checked_casts == []


def test_without_an_evolving_on_schema_change_nothing_changes_in_place():
    moved = {"id": "int", "qty": "bigint", "note": "string", "info": "struct<a:int>"}
    result = schema_reconciliation.reconcile_schema(
        "feed", definition(moved, on_schema_change="fail"), STORED, ICEBERG
    )
    assert not result.evolution
    assert result.checked_casts == [["qty", "int", "bigint"]]


def test_parquet_checks_the_narrower_column_and_refuses_what_the_metastore_cannot_record():
    moved = {"id": "int", "qty": "bigint", "note": "string", "info": "struct<a:int>"}
    result = schema_reconciliation.reconcile_schema("feed", definition(moved), STORED, PARQUET)
    assert not result.evolution
    assert result.checked_casts == [["qty", "int", "bigint"]]
    rejects(
        lambda: schema_reconciliation.reconcile_schema(
            "feed", definition({**moved, "info": "struct<a:int,b:string>"}), STORED, PARQUET
        ),
        "column 'info' is stored as struct<a:int>",
        "nested types must stay the same",
    )
    rejects(
        lambda: schema_reconciliation.reconcile_schema(
            "feed",
            definition({"id": "int", "qty": "int", "info": "struct<a:int>"}),
            STORED,
            PARQUET,
        ),
        "no longer outputs column(s) note",
        "cannot drop one",
        "partial_updates: true",
    )


def test_delta_drops_a_column_only_under_column_mapping():
    kept = {"id": "int", "qty": "int", "info": "struct<a:int>"}
    rejects(
        lambda: schema_reconciliation.reconcile_schema("feed", definition(kept), STORED, DELTA_OFF),
        "no longer outputs column(s) note",
        "delta.columnMapping.mode",
    )
    mapped = table_format("delta").evolution({"delta.columnMapping.mode": "name"}, None)
    result = schema_reconciliation.reconcile_schema("feed", definition(kept), STORED, mapped)
    assert result.evolution.dropped == ["note"]
    # partial_updates keeps a missing column's stored values instead of dropping it
    result = schema_reconciliation.reconcile_schema(
        "feed", definition(kept, partial_updates=True), STORED, mapped
    )
    assert not result.evolution.dropped and result.missing_columns == ["note"]


def test_a_metastore_refusal_names_the_setting():
    assert schema_evolution.metastore_refusal("feed", "some other error") is None
    error = schema_evolution.metastore_refusal(
        "feed",
        "CommitStateUnknownException: The following columns have types incompatible with "
        "the existing columns in their respective positions : info",
    )
    message = str(error)
    assert "mutable_table 'feed'" in message
    assert "hive.metastore.disallow.incompatible.col.type.changes=false" in message
