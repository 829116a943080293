"""The table formats' classes (mutable_table/table_format.py): the one choice of class by
name, and what each format answers where the run's phases used to test file_format."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.schema_evolution import (
    DeltaEvolution,
    FormatEvolution,
    IcebergEvolution,
)
from dbt.adapters.jammi.mutable_table.table_format import (
    DeltaFormat,
    IcebergFormat,
    OrcFormat,
    TableFormat,
    UnknownFormat,
    table_format,
)

# name: (class, applies by merge, merge reports counts, first version, registry stored as)
FACTS = {
    "delta": (DeltaFormat, True, True, 0, "delta"),
    "iceberg": (IcebergFormat, True, False, 1, "parquet"),
    "parquet": (TableFormat, False, False, 1, "parquet"),
    "orc": (OrcFormat, False, False, 1, "parquet"),
}


@pytest.mark.parametrize("name", sorted(FACTS))
def test_each_format_answers_as_its_class(name):
    cls, by_merge, counts, first, registry = FACTS[name]
    chosen = table_format(name)
    assert type(chosen) is cls and chosen.name == name
    assert chosen.applies_by_merge is by_merge
    assert chosen.merge_reports_counts is counts
    assert chosen.first_version == first
    assert chosen.registry_using == registry
    assert chosen.keeps_changes
    assert table_format(name.upper()) is chosen


def test_a_format_it_does_not_know_is_written_as_a_rewrite_and_keeps_no_changes():
    hudi = table_format("hudi")
    assert type(hudi) is UnknownFormat and hudi.name == "hudi"
    assert not hudi.applies_by_merge and not hudi.keeps_changes


@pytest.mark.parametrize(
    "name, counts_in_snapshot, records_on_branch, takes",
    [
        ("delta", False, True, True),
        ("iceberg", True, False, True),
        ("iceberg", False, False, False),
        ("iceberg", True, True, False),
        ("parquet", True, False, False),
    ],
)
def test_which_format_takes_the_batch_sourced_merge(
    name, counts_in_snapshot, records_on_branch, takes
):
    assert table_format(name).takes_batch_merge(counts_in_snapshot, records_on_branch) is takes


def test_a_new_table_with_a_changelog_records_where_its_changes_are():
    assert table_format("delta").changelog_properties("t1") == [
        ("delta.enableChangeDataFeed", "true")
    ]
    assert table_format("iceberg").changelog_properties("t1") == [
        ("jammi.changelog_created_by", "t1")
    ]
    assert table_format("parquet").changelog_properties(None) == []


def test_only_iceberg_expires_snapshots_and_each_other_says_what_keeps_its_storage():
    assert table_format("iceberg").expires_snapshots
    assert "VACUUM" in table_format("delta").storage_kept_by()
    assert "orc removes versions beyond versions_kept" in table_format("orc").storage_kept_by()


def test_each_format_evolves_its_schema_by_its_own_class():
    on = {"delta.enableTypeWidening": "true", "delta.columnMapping.mode": "name"}
    delta = table_format("delta").evolution(on, None)
    assert type(delta) is DeltaEvolution and delta.type_widening and delta.drops_columns
    # the model's tblproperties count too (set before the run writes)
    assert table_format("delta").evolution({}, on).type_widening
    iceberg = table_format("iceberg").evolution(on, None)
    assert type(iceberg) is IcebergEvolution and not iceberg.type_widening
    parquet = table_format("parquet").evolution(on, None)
    assert type(parquet) is FormatEvolution
    assert not parquet.drops_columns and not parquet.adds_struct_fields
    assert not parquet.widens("int", "bigint")


@pytest.mark.parametrize("name", ["delta", "iceberg", "parquet", "orc", "hudi"])
def test_only_iceberg_merges_through_the_runs_branch(name):
    assert table_format(name).merges_on_branch is (name == "iceberg")


# name: (stores Spark 4's variant, timestamps read back as written, plan reads the version)
STORAGE = {
    "delta": (True, True, False),
    "iceberg": (False, True, True),
    "parquet": (True, True, False),
    "orc": (False, False, False),
    "hudi": (False, True, False),
}


@pytest.mark.parametrize("name", sorted(STORAGE))
def test_what_each_format_stores_as_written(name):
    chosen = table_format(name)
    assert (
        chosen.stores_variant,
        chosen.timestamps_read_back_exactly,
        chosen.plan_reads_spark_version,
    ) == STORAGE[name]
