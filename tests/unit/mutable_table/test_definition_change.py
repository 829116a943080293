"""A run may not change what an existing mutable table's rows were written under:
primary key, history mode and file format fail before anything is written, with the way
to rebuild."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.definition_change import check_definition_change
from dbt.adapters.jammi.mutable_table.drift_service import DriftService
from tests.unit.rejections import rejects

SCHEMA = {"id": "bigint", "sku": "string", "price": "bigint"}
STORED_COLUMNS = [["id", "bigint"], ["sku", "string"], ["price", "bigint"], ["tenant_id", "string"]]


def defn(**config):
    config.setdefault("primary_key", ["id"])
    return MutableTableDefinition.from_config("prices", SCHEMA, config).to_dict()


def reconcile(stored, batch, stored_format="parquet", requested="auto", columns=STORED_COLUMNS):
    # no statement: the stored format's evolution needs the server's Spark only for Delta
    # under type widening, which these tables do not turn on
    service = DriftService(None, None)  # type: ignore[arg-type]
    return service.reconcile_stored_schema(
        "prices", batch, columns, stored, stored_format, requested
    )


# every refusal names the model and the way to rebuild the table
REBUILD = ("mutable_table 'prices'", "--full-refresh", "full_refresh: true")


def test_unchanged_definition_passes():
    result = reconcile(defn(), defn())
    assert result["new_columns"] == [] and result["missing_columns"] == []
    # the order of the key columns does not change which rows a key identifies
    reordered = reconcile(defn(primary_key=["id", "sku"]), defn(primary_key=["sku", "id"]))
    assert reordered["definition"]["primary_key"] == ["sku", "id"]
    assert reordered["new_columns"] == [] and reordered["missing_columns"] == []


@pytest.mark.parametrize("new_key", [["sku"], ["id", "sku"]])
def test_primary_key_change_fails(new_key):
    rejects(
        lambda: reconcile(defn(), defn(primary_key=new_key)),
        *REBUILD,
        "primary_key changed from ['id'] to",
        "primary_key back to ['id']",
    )


def test_history_change_fails():
    rejects(
        lambda: reconcile(defn(), defn(history="scd2")),
        *REBUILD,
        "history changed from 'none' to 'scd2'",
    )
    scd2_columns = [*STORED_COLUMNS[:3], ["valid_from", "bigint"], ["valid_to", "bigint"]]
    rejects(
        lambda: reconcile(defn(history="scd2"), defn(), columns=scd2_columns),
        *REBUILD,
        "history changed from 'scd2' to 'none'",
    )
    rejects(
        lambda: reconcile(
            defn(history="scd2"), defn(history="scd2", valid_to="closed_at"), columns=scd2_columns
        ),
        *REBUILD,
        "valid_to changed from 'valid_to' to 'closed_at'",
    )


def test_history_change_without_a_readable_stored_definition_fails():
    rejects(lambda: reconcile(None, defn(history="scd2")), *REBUILD, "no 'valid_to' column")


@pytest.mark.parametrize("requested", ["orc", "delta"])
def test_file_format_change_fails(requested):
    rejects(
        lambda: reconcile(defn(), defn(), "parquet", requested),
        *REBUILD,
        f"file_format is '{requested}' but the existing table is stored as 'parquet'",
        "set file_format: parquet (or auto)",
    )


@pytest.mark.parametrize(
    "stored_format, requested", [("parquet", "auto"), ("delta", "auto"), ("parquet", "parquet")]
)
def test_auto_or_the_same_file_format_keeps_the_table(stored_format, requested):
    result = reconcile(defn(), defn(), stored_format, requested)
    assert result["definition"]["columns"] == [
        ["id", "bigint"],
        ["sku", "string"],
        ["price", "bigint"],
    ]
    assert result["definition"]["file_format"] == defn()["file_format"]
    assert result["new_columns"] == [] and result["missing_columns"] == []


def test_no_format_to_compare_is_no_change():
    assert (
        check_definition_change("prices", defn(), defn(), ["id", "sku", "price"], None, None)
        is None
    )
