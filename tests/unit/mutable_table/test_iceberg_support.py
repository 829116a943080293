"""What file_format iceberg refuses, decided in Python before any SQL
(mutable_table/iceberg_support.py), and its kept versions read from its snapshots
(mutable_table/versions/iceberg_snapshots.py)."""

from datetime import datetime

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.iceberg_support import (
    check_file_format_support,
    iceberg_refusal,
)
from dbt.adapters.jammi.mutable_table.versions import iceberg_snapshots

PLAIN = {"primary_key": ["id"], "history": "none"}


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"changelog": True}, "changelog: true"),
        ({"version_column": "v", "delete_when": "gone"}, "keeps tombstones"),
        ({"identity_column": "item_no"}, "identity_column 'item_no'"),
    ],
)
def test_iceberg_refuses_what_it_cannot_commit(options, expected):
    with pytest.raises(JammiValidationError) as raised:
        check_file_format_support({**PLAIN, **options}, "iceberg", "orders")
    message = str(raised.value)
    assert "mutable_table 'orders': " in message and expected in message
    assert "Fix: use file_format delta, parquet or orc" in message
    # the same definition is fine on the formats that keep it
    for other in ("delta", "parquet", "orc"):
        check_file_format_support({**PLAIN, **options}, other, "orders")


@pytest.mark.parametrize(
    "options",
    [
        {"version_column": "v"},  # a version rule without deletes keeps no tombstones
        {"delete_when": "gone"},  # deletes without a version rule neither
        {"version_column": "v", "delete_when": "gone", "history": "scd2"},
        {"merge_functions": {"n": "sum"}, "version_column": "v", "delete_when": "gone"},
        {"ttl_ms": 1000},
    ],
)
def test_iceberg_keeps_the_rest(options):
    assert iceberg_refusal({**PLAIN, **options}) is None


def test_snapshot_history_is_newest_first_in_the_order_made_current():
    # snapshot ids are not ordered; the rows arrive in the order they were made current
    rows = [
        (900, datetime(2026, 1, 1, 0, 0, 0), "append"),
        (12, datetime(2026, 1, 1, 0, 0, 1), "overwrite"),
        (555, datetime(2026, 1, 1, 0, 0, 2), "overwrite"),
    ]
    history = iceberg_snapshots.history_rows(rows, versions_kept=2)
    assert [h["version"] for h in history] == [555, 12]
    assert [h["current"] for h in history] == [True, False]
    assert history[0]["committed_ms"] == 1767225602000
    assert history[0]["inserts"] is None and history[0]["invocation_id"] is None


def test_snapshot_history_reads_the_current_ancestry():
    sql = iceberg_snapshots.history_sql("s.orders")
    assert "from s.orders.history as h join s.orders.snapshots as s" in sql
    assert "where h.is_current_ancestor" in sql
