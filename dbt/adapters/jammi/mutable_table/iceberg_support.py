"""What a mutable_table refuses on Iceberg, decided before any SQL of the run writes.

Iceberg goes through the MERGE applier like Delta (one ``MERGE INTO`` per run, a refused
commit re-planned: engine/commit_conflicts.py), and its kept versions are its snapshots
(mutable_table/versions/iceberg_snapshots.py). Tombstones (a ``version_column`` with
``delete_when``), an ``identity_column``'s high-water mark and a changelog's records commit
with the run's rows through the run's own branch (commit/branch_commit.py,
rules/changelog_iceberg.py).

Each of those records counts while the snapshot that committed it is in the table's
history, which ``expire_snapshots: true`` empties: an expired delete could come back, and
a changelog could number two versions alike. Tombstones and a changelog are therefore
refused with ``expire_snapshots``.

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
from dbt.adapters.jammi.mutable_table.table_format import table_format
from dbt.adapters.jammi.mutable_table.versions.iceberg_expiry import expiry_refusal

ICEBERG = "iceberg"


def iceberg_refusal(definition: Mapping[str, Any]) -> Optional[tuple[str, str]]:
    """(problem, fix) for the first option of ``definition`` Iceberg cannot keep, or None."""
    if definition.get("changelog") and definition.get("expire_snapshots"):
        return (
            "changelog: true numbers its versions by the snapshots in the table's history, "
            "and expire_snapshots: true expires those snapshots",
            "remove expire_snapshots (expire with Iceberg's procedure only snapshots older "
            "than the changelog's consumers need), or turn changelog off",
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
        if table_format(file_format).expires_snapshots
        else expiry_refusal(definition, file_format)
    )
    if refusal is not None:
        problem, fix = refusal
        raise JammiValidationError(f"mutable_table '{model_name}'", problem, fix)
