"""The formats a mutable table is stored in, one class each. What a run does
differently on Delta, Iceberg or a rewrite format (parquet, orc) is an attribute or a
method of its class, and ``table_format(file_format)`` is the one place that chooses a
class by name (docs/architecture.md, "Table formats").

A rewrite format writes each version as a new directory and swaps it in; the MERGE
formats apply a change set with one MERGE, and keep their versions themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.mutable_table.schema_evolution import (
    COLUMN_MAPPING_PROPERTY,
    TYPE_WIDENING_PROPERTY,
    DeltaEvolution,
    FormatEvolution,
    IcebergEvolution,
)


class TableFormat:
    """A rewrite format (parquet, orc): each version is a directory of its own, swapped
    in by compare-and-swap; the MERGE formats below override what differs."""

    # the format applies a change set with a MERGE, else it writes the next version
    # and swaps it in
    applies_by_merge = False
    # the MERGE reports what it changed, so the change set is not counted first
    merge_reports_counts = False
    # the version a new table starts at
    first_version = 1
    # what the mutable_tables registry is stored as, beside a table of this format
    registry_using = "parquet"
    # a changelog can read this format's changes
    keeps_changes = True
    # the change set carries a changed row's stored values for the changelog (the
    # MERGE formats read them from their own change records)
    changelog_previous_in_plan = True
    # Iceberg's snapshots can be expired by the run (``expire_snapshots``)
    expires_snapshots = False
    # a MERGE's appended records (tombstones, an identity mark, changelog events) commit
    # with it through the run's branch, and a batch-sourced MERGE is counted from its
    # own snapshot (Iceberg); else the MERGE's commit holds what it needs (Delta)
    merges_on_branch = False
    # the format stores Spark 4's variant type (parquet with Spark's own writer; Delta 4
    # with its variantType feature; not orc, nor Iceberg below its format version 3)
    stores_variant = True
    # a timestamp reads back as written (Spark's orc reads one with a fraction of a
    # second in the second before 1970-01-01 00:00:00 UTC one second later)
    timestamps_read_back_exactly = True
    # the run's plan depends on the server's Spark version (Iceberg's MERGE commits its
    # counts in its snapshot from Spark 4.1: commit/run_plan.py)
    plan_reads_spark_version = False

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def takes_batch_merge(self, counts_in_snapshot: bool, records_on_branch: bool) -> bool:
        """Whether an existing table takes the batch-sourced MERGE (given a definition
        that allows it): ``counts_in_snapshot``, the session's MERGE commits its counts
        with the snapshot; ``records_on_branch``, rows must commit with the MERGE."""
        return False

    def evolution(
        self,
        table_properties: Mapping[str, str],
        model_tblproperties: Optional[Mapping[str, str]],
    ) -> FormatEvolution:
        """What a stored table can change about its schema in place, from its properties
        and the model's ``tblproperties`` (set before the run writes)."""
        properties = {**table_properties, **(model_tblproperties or {})}
        return self._evolution(properties)

    def _evolution(self, properties: Mapping[str, Any]) -> FormatEvolution:
        return FormatEvolution(self.name, column_mapping=_column_mapping(properties))

    def changelog_properties(self, created_tag: Optional[str]) -> list[tuple[str, str]]:
        """The properties a new table with ``changelog: true`` is created with, beside
        the version its changelog starts at."""
        return [("jammi.changelog_created_by", str(created_tag))] if created_tag else []

    def storage_kept_by(self) -> str:
        """What removes this format's old versions (``expire_snapshots`` refused)."""
        return f"file_format {self.name} removes versions beyond versions_kept on every run"

    def layout_sql(self, relation: str, columns: Sequence[str]) -> str:
        """The statement that lays a new table out by ``columns`` (quoted), after its
        create; empty for a rewrite format, which sorts within each file as it writes
        (commit/version_commit.py ``sort_clause``)."""
        return ""


class DeltaFormat(TableFormat):
    applies_by_merge = True
    merge_reports_counts = True
    first_version = 0
    registry_using = "delta"
    changelog_previous_in_plan = False

    def takes_batch_merge(self, counts_in_snapshot: bool, records_on_branch: bool) -> bool:
        return True

    def _evolution(self, properties: Mapping[str, Any]) -> FormatEvolution:
        return DeltaEvolution(
            self.name,
            type_widening=str(properties.get(TYPE_WIDENING_PROPERTY, "")).lower() == "true",
            column_mapping=_column_mapping(properties),
        )

    def changelog_properties(self, created_tag: Optional[str]) -> list[tuple[str, str]]:
        return [("delta.enableChangeDataFeed", "true")]

    def storage_kept_by(self) -> str:
        return "a Delta table's storage is its VACUUM's"

    def layout_sql(self, relation: str, columns: Sequence[str]) -> str:
        return f"optimize {relation} zorder by ({', '.join(columns)})"


class IcebergFormat(TableFormat):
    applies_by_merge = True
    expires_snapshots = True
    merges_on_branch = True
    changelog_previous_in_plan = False
    stores_variant = False
    plan_reads_spark_version = True

    def takes_batch_merge(self, counts_in_snapshot: bool, records_on_branch: bool) -> bool:
        return counts_in_snapshot and not records_on_branch

    def _evolution(self, properties: Mapping[str, Any]) -> FormatEvolution:
        return IcebergEvolution(self.name, column_mapping=_column_mapping(properties))

    def layout_sql(self, relation: str, columns: Sequence[str]) -> str:
        return f"alter table {relation} write ordered by {', '.join(columns)}"


class OrcFormat(TableFormat):
    """orc: a rewrite format whose timestamps near the epoch do not read back exactly,
    and which has no variant type."""

    stores_variant = False
    timestamps_read_back_exactly = False


class UnknownFormat(TableFormat):
    """A format dbt-jammi does not know: written as a rewrite format would be where the
    run's checks let it through; a changelog cannot read its changes."""

    keeps_changes = False
    stores_variant = False


def _column_mapping(properties: Mapping[str, Any]) -> bool:
    return str(properties.get(COLUMN_MAPPING_PROPERTY, "")).lower() == "name"


DELTA = DeltaFormat("delta")
ICEBERG = IcebergFormat("iceberg")
PARQUET = TableFormat("parquet")
ORC = OrcFormat("orc")
KNOWN = {f.name: f for f in (DELTA, ICEBERG, PARQUET, ORC)}


def table_format(file_format: Any) -> TableFormat:
    """The class of ``file_format`` (case as Spark ignores it); a name dbt-jammi does
    not know behaves as a rewrite format."""
    name = str(file_format).lower()
    known = KNOWN.get(name)
    if known is not None:
        return known
    return UnknownFormat(name)
