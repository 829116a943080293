"""Python-side decisions of the mutable_table materialization (no Spark)."""

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import (
    run_config,
    run_errors,
    schema_reconciliation,
    table_properties,
    version_locations,
)
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


def test_full_refresh_is_opt_in():
    assert run_config.full_refresh_allowed(True, True)
    assert not run_config.full_refresh_allowed(True, None)
    assert not run_config.full_refresh_allowed(False, True)


def test_definition_config_drops_dbt_defaults():
    config = {"on_schema_change": "ignore", "file_format": "parquet", "primary_key": ["id"]}
    assert run_config.definition_config(config, {}) == {"primary_key": ["id"]}
    assert run_config.definition_config(config, {"file_format": "parquet"})["file_format"] == (
        "parquet"
    )
    assert run_config.requested_file_format({}, "parquet") == "auto"
    assert run_config.requested_file_format({"file_format": "orc"}, "orc") == "orc"


def test_version_directories():
    assert version_locations.version_dir("file:/w/t", 1, "abc") == "file:/w/t/v0000000001_abc"
    assert version_locations.next_location("file:/w/t/v0000000009_abc/", "def") == (
        "file:/w/t/v0000000010_def"
    )
    with pytest.raises(run_errors.MutableRunError, match="not a mutable_table version"):
        version_locations.next_location("file:/w/t", "x")
    children = [
        "file:/w/t/v0000000001_a",
        "file:/w/t/v0000000002_b",
        "file:/w/t/v0000000003_c",
        "file:/w/t/v0000000003_d",
        "file:/w/t/_other",
    ]
    current = "file:/w/t/v0000000002_b"
    assert version_locations.stale_version_dirs(children, current, keep_newer=True) == [
        "file:/w/t/v0000000001_a"
    ]
    assert version_locations.stale_version_dirs(children, current, keep_newer=False) == [
        "file:/w/t/v0000000001_a",
        "file:/w/t/v0000000003_c",
        "file:/w/t/v0000000003_d",
    ]


def test_describe_location_and_batch_errors():
    rows = [["# Detailed Table Information", ""], ["Location", "file:/w/t/v0000000001_a"]]
    assert table_properties.describe_location(rows) == "file:/w/t/v0000000001_a"
    with pytest.raises(run_errors.MutableRunError) as info:
        run_errors.batch_error(
            "prices", "duplicate_key", [["acme", "a", 2]], ["tenant_id", "sku", "n"]
        )
    message = str(info.value)
    assert "mutable_table 'prices'" in message and "sku='a'" in message
    assert "Fix:" in message


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
