"""The model's output against the stored columns (mutable_table/schema_reconciliation.py),
without Spark."""

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import schema_reconciliation
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition


def batch(schema, **config):
    return MutableTableDefinition.from_config("prices", schema, config).to_dict()


STORED = [["sku", "string"], ["price", "bigint"], ["tenant_id", "string"]]


def test_same_schema_keeps_stored_order():
    result = schema_reconciliation.reconcile_schema(
        "prices", batch({"price": "int", "sku": "string"}, primary_key=["sku"]), STORED
    )
    assert result.definition["columns"] == [["sku", "string"], ["price", "bigint"]]
    assert result.new_columns == [] and result.missing_columns == []


def test_new_column_fails_unless_append():
    defn = batch({"sku": "string", "price": "bigint", "note": "string"}, primary_key=["sku"])
    with pytest.raises(JammiValidationError, match="new column\\(s\\) note"):
        schema_reconciliation.reconcile_schema("prices", defn, STORED)
    defn = batch(
        {"sku": "string", "price": "bigint", "note": "string"},
        primary_key=["sku"],
        on_schema_change="append_new_columns",
    )
    result = schema_reconciliation.reconcile_schema("prices", defn, STORED)
    assert result.new_columns == [["note", "string"]]
    assert [c[0] for c in result.definition["storage_columns"]] == ["sku", "price", "note"]


def test_missing_column_needs_partial_updates():
    with pytest.raises(JammiValidationError, match="partial_updates"):
        schema_reconciliation.reconcile_schema(
            "prices", batch({"sku": "string"}, primary_key=["sku"]), STORED
        )
    defn = batch({"sku": "string"}, primary_key=["sku"], partial_updates=True)
    result = schema_reconciliation.reconcile_schema("prices", defn, STORED)
    assert result.missing_columns == ["price"]
    assert result.definition["value_columns"] == ["price"]


def test_incompatible_type_and_changed_key_fail():
    with pytest.raises(JammiValidationError, match="stored as bigint"):
        schema_reconciliation.reconcile_schema(
            "prices", batch({"sku": "string", "price": "string"}, primary_key=["sku"]), STORED
        )
    with pytest.raises(JammiValidationError, match="primary key cannot change"):
        schema_reconciliation.reconcile_schema(
            "prices",
            batch({"code": "string", "price": "bigint"}, primary_key=["code"]),
            STORED,
        )


@pytest.mark.parametrize(
    "columns",
    [
        {"id": "bigint", "name": "string", "valid_from": "bigint"},  # effective time
        {"valid_from": "bigint", "id": "bigint", "name": "string"},
        {"id": "bigint", "name": "string"},  # the run's time
    ],
)
def test_an_unchanged_scd2_model_reconciles_to_the_definition_it_recorded(columns):
    """Run after run the same model records the same definition: an scd2 model that
    outputs its effective time keeps valid_from among its columns, as on its first run
    (else every run appended a registry row and rewrote the property)."""
    first = MutableTableDefinition.from_config(
        "history", columns, {"primary_key": ["id"], "history": "scd2"}
    ).to_dict()
    again = schema_reconciliation.reconcile_schema(
        "history", first, first["storage_columns"]
    ).definition
    assert again == first
