"""What a mutable_table refuses on Iceberg, decided before any SQL of the run writes.

Iceberg goes through the MERGE applier like Delta (one ``MERGE INTO`` per run, a refused
commit re-planned: engine/commit_conflicts.py), and its kept versions are its snapshots
(mutable_table/versions/iceberg_snapshots.py). Tombstones (a ``version_column`` with
``delete_when``) and an ``identity_column``'s high-water mark commit with the run's rows
through the run's own branch (commit/branch_commit.py). One option leans on Delta
machinery that dbt-jammi has no Iceberg counterpart for yet, and is refused instead of
working wrongly:

- ``changelog: true``: Delta publishes from its change data feed (``table_changes``)
  with offset = Delta version + 1; Iceberg snapshot ids are not consecutive, and its
  changelog view is a procedure with no offset the topic could claim.

And one combination: tombstones with ``expire_snapshots: true``. A tombstone counts while
the snapshot that committed it is in the table's history, which expiring snapshots
empties, so an expired delete could come back.

The check runs on the *resolved* format, so ``file_format: auto`` that picks Iceberg is
refused exactly like an explicit ``file_format: iceberg``. The other way round,
``expire_snapshots`` (versions/iceberg_expiry.py) is Iceberg's own and refused on every
other format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.column_types import variant_refusal
from dbt.adapters.jammi.mutable_table.rules import tombstones
from dbt.adapters.jammi.mutable_table.versions.iceberg_expiry import expiry_refusal

ICEBERG = "iceberg"
OTHER_FORMATS = "file_format delta, parquet or orc"


def iceberg_refusal(definition: Mapping[str, Any]) -> Optional[tuple[str, str]]:
    """(problem, fix) for the first option of ``definition`` Iceberg cannot keep, or None."""
    if definition.get("changelog"):
        return (
            "changelog: true is set with file_format iceberg, whose snapshots carry no "
            "change feed dbt-jammi can publish exactly once",
            f"use {OTHER_FORMATS}, or turn changelog off",
        )
    if tombstones.retention_ms(definition) is not None and definition.get("expire_snapshots"):
        return (
            f"version_column '{definition.get('version_column')}' with delete_when keeps "
            "tombstones (deletes stay deleted), which count while the snapshot that "
            "committed them is in the table's history, and expire_snapshots: true expires "
            "those snapshots",
            "remove expire_snapshots (expire with Iceberg's procedure beyond "
            "tombstone_retention), or drop delete_when (or the version_column)",
        )
    return None


def check_file_format_support(
    definition: Mapping[str, Any], file_format: str, model_name: str
) -> None:
    """Raise naming the model when the resolved ``file_format`` cannot keep an option."""
    refusal = variant_refusal(definition.get("columns") or [], file_format) or (
        iceberg_refusal(definition)
        if file_format == ICEBERG
        else expiry_refusal(definition, file_format)
    )
    if refusal is not None:
        problem, fix = refusal
        raise JammiValidationError(f"mutable_table '{model_name}'", problem, fix)
