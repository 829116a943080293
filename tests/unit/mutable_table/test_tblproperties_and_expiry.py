"""The run options `tblproperties` (mutable_table/tblproperties_config.py) and
`expire_snapshots` (mutable_table/versions/iceberg_expiry.py): validated in Python before
any SQL, never recorded in the definition, rendered into the create statement and the
Iceberg procedure call."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table import table_records
from dbt.adapters.jammi.mutable_table.iceberg_support import check_file_format_support
from dbt.adapters.jammi.mutable_table.run_errors import MutableRunError
from dbt.adapters.jammi.mutable_table.tblproperties_config import (
    changed_properties,
    describe_table_properties,
    validate_tblproperties,
)
from dbt.adapters.jammi.mutable_table.versions.iceberg_expiry import (
    expire_snapshots_sql,
    expiry_error,
    validate_expire_snapshots,
)

SUBJECT = "mutable_table 'orders'"
MERGE_ON_READ = {
    "write.merge.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.delete.mode": "merge-on-read",
}


def _properties_clause(definition: dict, first: bool) -> str:
    return table_records.properties_clause(definition, "iceberg", None, first)


def test_tblproperties_become_strings():
    assert validate_tblproperties(None, SUBJECT) == {}
    assert validate_tblproperties(
        {"write.merge.mode": "merge-on-read", "delta.enableDeletionVectors": True, "n": 5},
        SUBJECT,
    ) == {
        "write.merge.mode": "merge-on-read",
        "delta.enableDeletionVectors": "true",
        "n": "5",
    }


@pytest.mark.parametrize(
    "value, changelog, expected",
    [
        ("write.merge.mode=merge-on-read", False, "must be a mapping"),
        ({"jammi.kind": "x"}, False, "properties under 'jammi.'"),
        ({"delta.enableChangeDataFeed": "true"}, True, "which changelog: true sets itself"),
        ({"write.merge.mode": None}, False, "a property is one value"),
        ({"a=b": "c"}, False, "which Spark cannot store"),
    ],
)
def test_tblproperties_refusals_name_the_model_and_the_fix(value, changelog, expected):
    with pytest.raises(JammiValidationError) as raised:
        validate_tblproperties(value, SUBJECT, changelog)
    message = str(raised.value)
    assert f"{SUBJECT}: " in message and expected in message and "Fix: " in message


def test_a_change_feed_property_without_a_changelog_is_the_users():
    assert validate_tblproperties({"delta.enableChangeDataFeed": "true"}, SUBJECT) == {
        "delta.enableChangeDataFeed": "true"
    }


@pytest.mark.parametrize("separator", [",", ", "])
def test_the_describe_row_gives_every_property(separator):
    shown = {
        "current-snapshot-id": "561",
        "format-version": "2",
        "jammi.kind": "mutable_table",
        "write.merge.mode": "copy-on-write",
        "write.metadata.metrics.default": "truncate(16)",
    }
    row = ("Table Properties", "[" + separator.join(f"{k}={v}" for k, v in shown.items()) + "]")
    current = describe_table_properties([("id", "int"), row])
    assert current == shown
    assert changed_properties(MERGE_ON_READ, current) == MERGE_ON_READ
    assert changed_properties({"format-version": "2"}, current) == {}
    assert describe_table_properties([("id", "int")]) == {}


def test_the_create_statement_carries_the_models_properties_once():
    definition = {"table_id": "orders", "tblproperties": MERGE_ON_READ}
    created = _properties_clause(definition, first=True)
    for key in MERGE_ON_READ:
        assert f"'{key}' = 'merge-on-read'," in created
    assert "'jammi.kind' = 'mutable_table'" in created
    # a later definition record (mutable_record_definition) leaves them alone
    assert "write.merge.mode" not in _properties_clause(definition, first=False)


def test_run_options_are_not_recorded():
    definition = {
        "table_id": "orders",
        "versions_kept": 2,
        "expire_snapshots": True,
        "tblproperties": MERGE_ON_READ,
    }
    assert table_records.definition_json(definition) == '{"table_id":"orders"}'


def test_expire_snapshots_is_true_or_false():
    assert validate_expire_snapshots(None, SUBJECT) is False
    assert validate_expire_snapshots(True, SUBJECT) is True
    with pytest.raises(JammiValidationError) as raised:
        validate_expire_snapshots("yes", SUBJECT)
    assert "'expire_snapshots' must be true or false, got 'yes'" in str(raised.value)


@pytest.mark.parametrize(
    "file_format, reason",
    [
        ("parquet", "file_format parquet removes versions beyond versions_kept"),
        ("orc", "file_format orc removes versions beyond versions_kept"),
        ("delta", "a Delta table's storage is its VACUUM's"),
    ],
)
def test_expire_snapshots_is_refused_off_iceberg(file_format, reason):
    definition = {"primary_key": ["id"], "expire_snapshots": True}
    with pytest.raises(JammiValidationError) as raised:
        check_file_format_support(definition, file_format, "orders")
    message = str(raised.value)
    assert f"{SUBJECT}: expire_snapshots: true is set with file_format {file_format}" in message
    assert reason in message
    assert "Fix: remove expire_snapshots, or use file_format iceberg" in message
    check_file_format_support(definition, "iceberg", "orders")
    check_file_format_support({"primary_key": ["id"]}, file_format, "orders")


def test_the_procedure_keeps_versions_kept_snapshots():
    sql = expire_snapshots_sql("spark_catalog", "analytics", "orders", 3, 1767225600000)
    assert sql == (  # older_than: a day past 2026-01-01, the client's clock
        "call spark_catalog.system.expire_snapshots(table => 'analytics.orders', "
        "older_than => timestamp '2026-01-02 00:00:00', retain_last => 3)"
    )
    # a catalog service as the session's default catalog: its own procedures
    assert expire_snapshots_sql("lake", "analytics", "orders", 3, 1767225600000).startswith(
        "call lake.system.expire_snapshots(table => 'analytics.orders', "
    )


def test_a_session_without_icebergs_procedures_is_told_the_fix():
    error = expiry_error("orders", RuntimeError("[PARSE_SYNTAX_ERROR] Syntax error at 'call'"))
    assert isinstance(error, MutableRunError)
    message = str(error)
    assert "mutable_table 'orders': expire_snapshots: true" in message
    assert "IcebergSparkSessionExtensions" in message and "no snapshot was expired" in message
    other = RuntimeError("disk full")
    assert expiry_error("orders", other) is other
