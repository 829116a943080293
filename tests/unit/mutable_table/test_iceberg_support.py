"""What file_format iceberg refuses, decided in Python before any SQL
(mutable_table/iceberg_support.py), and its kept versions read from its snapshots
(mutable_table/versions/iceberg_snapshots.py)."""

from datetime import datetime
from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.iceberg_support import (
    check_file_format_support,
    iceberg_refusal,
)
from dbt.adapters.jammi.mutable_table.run_config import run_definition
from dbt.adapters.jammi.mutable_table.session_formats import SessionFormats
from dbt.adapters.jammi.mutable_table.versions import iceberg_snapshots
from tests.unit.rejections import rejects

PLAIN = {"primary_key": ["id"], "history": "none"}


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"changelog": True}, "changelog: true numbers its versions by the snapshots"),
        (
            {"version_column": "v", "delete_when": "gone"},
            "version_column 'v' with delete_when keeps tombstones",
        ),
    ],
)
def test_iceberg_refuses_expiring_the_snapshots_that_commit_its_records(options, expected):
    with pytest.raises(JammiValidationError) as raised:
        check_file_format_support(
            {**PLAIN, **options, "expire_snapshots": True}, "iceberg", "orders"
        )
    message = str(raised.value)
    assert "mutable_table 'orders': " in message and expected in message
    assert "Fix: remove expire_snapshots" in message
    # without expire_snapshots Iceberg keeps it
    check_file_format_support({**PLAIN, **options}, "iceberg", "orders")


# The models of tests/functional/mutable_table/test_iceberg_refusals.py: output columns,
# config (file_format iceberg from the project, or auto) and the refusal.
ICEBERG_MODELS = {
    "logged": (
        {"id": "int", "label": "string"},
        {"changelog": True, "file_format": "iceberg", "expire_snapshots": True},
        "changelog: true numbers its versions by the snapshots",
    ),
    "auto_logged": (
        {"id": "int"},
        {"changelog": True, "file_format": "auto", "expire_snapshots": True},
        "changelog: true numbers its versions by the snapshots",
    ),
}


def iceberg_run_checks(model: str, columns: dict, config: dict) -> None:
    """The run's calls before it writes, in order: the definition, the format resolved on
    a session whose catalog is Iceberg's (auto picks it: Delta is absent), the format's
    support of the definition."""
    definition = run_definition(model, list(columns.items()), config)
    session = SimpleNamespace(delta_available=lambda: False, iceberg_available=lambda: True)
    file_format = SessionFormats.resolve(session, config["file_format"], model)  # type: ignore[arg-type]
    assert file_format == "iceberg"
    check_file_format_support(definition, file_format, model)


@pytest.mark.parametrize("model", ICEBERG_MODELS)
def test_a_run_on_an_iceberg_session_refuses_before_it_writes(model):
    # identity_column is refused by its rule already when file_format iceberg is set
    columns, config, expected = ICEBERG_MODELS[model]
    rejects(
        lambda: iceberg_run_checks(model, columns, {"primary_key": ["id"], **config}),
        f"mutable_table '{model}': ",
        expected,
        "Fix: remove expire_snapshots",
    )


def test_tombstones_on_iceberg_refuse_expiring_the_snapshots_that_commit_them():
    tombstoned = {**PLAIN, "version_column": "v", "delete_when": "gone"}
    rejects(
        lambda: check_file_format_support(
            {**tombstoned, "expire_snapshots": True}, "iceberg", "orders"
        ),
        "mutable_table 'orders': ",
        "version_column 'v' with delete_when keeps tombstones",
        "expire_snapshots: true expires those snapshots",
        "Fix: remove expire_snapshots",
    )
    check_file_format_support({**tombstoned, "expire_snapshots": False}, "iceberg", "orders")


@pytest.mark.parametrize(
    "options",
    [
        {"version_column": "v", "delete_when": "gone"},  # tombstones: branch_commit.py
        {"identity_column": "item_no"},  # its mark: branch_commit.py
        {"version_column": "v"},  # a version rule without deletes keeps no tombstones
        {"delete_when": "gone"},  # deletes without a version rule neither
        {"version_column": "v", "delete_when": "gone", "history": "scd2"},
        {"merge_functions": {"n": "sum"}, "version_column": "v", "delete_when": "gone"},
        {"ttl_ms": 1000},
        {"changelog": True},  # its records: rules/changelog_iceberg.py
    ],
)
def test_iceberg_keeps_the_rest(options):
    assert iceberg_refusal({**PLAIN, **options}) is None


def test_snapshot_history_is_newest_first_in_the_order_made_current():
    # snapshot ids are not ordered; the rows arrive in the order they were made current
    summary = (None,) * len(iceberg_snapshots.SUMMARY_KEYS)
    rows = [
        (900, datetime(2026, 1, 1, 0, 0, 0), "append", *summary),
        (12, datetime(2026, 1, 1, 0, 0, 1), "overwrite", *summary),
        (555, datetime(2026, 1, 1, 0, 0, 2), "overwrite", *summary),
    ]
    history = iceberg_snapshots.history_rows(rows, versions_kept=2)
    assert [h["version"] for h in history] == [555, 12]
    assert [h["current"] for h in history] == [True, False]
    assert history[0]["committed_ms"] == 1767225602000
    assert history[0]["invocation_id"] is None


def test_snapshot_history_reads_the_current_ancestry():
    sql = iceberg_snapshots.history_sql("s.orders")
    assert "from s.orders.history as h join s.orders.snapshots as s" in sql
    assert "where h.is_current_ancestor" in sql


@pytest.mark.parametrize("file_format", ["orc", "iceberg"])
def test_a_variant_is_refused_where_the_format_does_not_store_it(file_format):
    definition = {"columns": [["id", "int"], ["payload", "struct<v:variant>"]]}
    with pytest.raises(JammiValidationError) as refused:
        check_file_format_support(definition, file_format, "events")
    message = str(refused.value)
    assert f"column 'payload' holds a variant, which file_format {file_format}" in message
    assert "use file_format parquet or delta" in message
    for stored in ("parquet", "delta"):
        check_file_format_support(definition, stored, "events")
