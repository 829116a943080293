"""A stored table's reads of its own versions, one class per format
(mutable_table/format_reads.py), over a recorded statement runner."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.format_reads import (
    DeltaReads,
    IcebergReads,
    RewriteReads,
    format_reads,
)

RELATION = SimpleNamespace(schema="analytics", identifier="orders")
LOCATION = "/warehouse/orders/v0000000007_run1"


class Answers:
    """Answers each statement with the rows of the first key it contains."""

    def __init__(self, **rows: list[list[Any]]) -> None:
        self.rows = rows
        self.statements: list[str] = []

    def __call__(self, statement: str) -> list[list[Any]]:
        self.statements.append(statement)
        return next((r for key, r in self.rows.items() if key in statement), [])


@pytest.mark.parametrize(
    "file_format, reads",
    [
        ("delta", DeltaReads),
        ("DELTA", DeltaReads),
        ("iceberg", IcebergReads),
        ("parquet", RewriteReads),
        ("orc", RewriteReads),
        ("avro", RewriteReads),  # a format dbt-jammi does not know reads as a rewrite one
    ],
)
def test_the_class_is_chosen_by_the_formats_class(file_format, reads):
    assert type(format_reads(file_format, Answers())) is reads


def test_a_rewrite_formats_version_is_its_directorys():
    run_sql = Answers()
    assert format_reads("parquet", run_sql).version_after(RELATION, {}, LOCATION) == 7
    assert format_reads("parquet", run_sql).version_after(RELATION, {}, None) is None
    assert run_sql.statements == []


def test_deltas_version_is_its_newest_history_entry_read_with_the_name_quoted():
    run_sql = Answers(**{"describe history": [[12, "MERGE"]]})
    assert format_reads("delta", run_sql).version_after(RELATION, {"total": 3}, None) == 12
    assert run_sql.statements == ["describe history `analytics`.`orders` limit 1"]


def test_icebergs_version_is_the_merges_own_snapshot_else_the_current_one():
    run_sql = Answers(**{".history": [[555]]})
    reads = format_reads("iceberg", run_sql)
    assert reads.version_after(RELATION, {"snapshot_id": 444}, None) == 444
    assert run_sql.statements == []
    assert reads.version_after(RELATION, {"total": 1}, None) == 555
    assert "is_current_ancestor" in run_sql.statements[0]


def test_each_format_reads_its_identity_mark_where_it_records_it():
    rewrite = Answers(**{"parquet.`": [[41]]})
    assert format_reads("parquet", rewrite).identity_mark("analytics.orders", LOCATION) == 41
    assert rewrite.statements[0].endswith(f"from parquet.`{LOCATION}/_jammi_identity`")
    delta = Answers()
    assert format_reads("delta", delta).identity_mark("analytics.orders", None) is None
    assert delta.statements[0] == "describe history analytics.orders limit 100"
