"""Config ``tombstone_retention``: under a version rule, deletes stay deleted.

A delete (a ``delete_when`` row, or a truncate's delete of a key: rules/truncates.py)
whose version is newer than what the table holds for its key -- the stored row, an
earlier tombstone, or nothing -- leaves a tombstone: the key (``tenant_id`` and the
primary key), the delete's version columns and when it was deleted (``_deleted_ms``).
A batch row of that key whose version is not newer than the tombstone changes nothing
(the planner's ``_tombstoned`` flag, tombstones.sql); a newer one brings the key back.
Tombstones are kept ``tombstone_retention`` (default 7 days) and are never rows of the
table.

Where they live (tombstone_phases.py says how each commits with its delete):

- parquet / orc: inside the committed version directory, ``<version>/_jammi_tombstones/``.
  Spark's file readers skip paths starting with ``_``, and the directory is swapped in
  with the version by the same ``ALTER TABLE ... SET LOCATION``;
- Delta: the table ``<table>__jammi_tombstones``, written before the MERGE and tagged
  with the dbt invocation id; a tombstone counts only when the table's Delta history has
  a commit of that invocation (``commitInfo.userMetadata``), so a run that dies before
  its MERGE commits leaves tombstones no reader takes;
- Iceberg: the table ``<table>__jammi_tombstones`` too, tagged with the id of the
  snapshot that commits their delete: the run MERGEs into a branch, appends the
  tombstones tagged with the branch's snapshot, and fast-forwards the table to it
  (commit/branch_commit.py); a tombstone counts when its snapshot is in the table's
  current ancestry.

Without a version rule arrival order is the order, and ``history: scd2`` places late
deletes in its own history: neither keeps tombstones. Nor do ``merge_functions`` (their
own combining of a key's rows decides what a late row does).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("tombstone_retention",)

DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000

# parquet/orc: the tombstones of a version, inside its directory (skipped by readers).
TOMBSTONE_DIR = "_jammi_tombstones"
# Delta: the table beside the mutable table.
TOMBSTONE_TABLE_SUFFIX = "__jammi_tombstones"
# When the delete was committed (epoch ms) and, on Delta, which invocation wrote it.
DELETED_MS_COLUMN = "_deleted_ms"
INVOCATION_COLUMN = "_invocation_id"

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|h|d)\s*$")


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``tombstone_retention`` in milliseconds (None: the default)."""
    value = opts.get("tombstone_retention")
    if value is None:
        return {"tombstone_retention": None}
    retention = parse_retention(value, subject)
    deletes = opts.get("delete_when") or opts.get("truncate_when")
    if not draft.version_column or not deletes or draft.history != "none":
        raise JammiValidationError(
            subject,
            "'tombstone_retention' is set, but tombstones are kept only under a version "
            "rule with deletes (version_column and delete_when or truncate_when, history: "
            "none)",
            "remove tombstone_retention, or set version_column and delete_when",
        )
    return {"tombstone_retention": retention}


def parse_retention(value: Any, subject: str) -> int:
    """Milliseconds from a whole number of milliseconds or a duration ('7d', '12h',
    '30m', '45s', '500ms')."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) and value > 0:
        return value
    match = _DURATION.match(value) if isinstance(value, str) else None
    if match and int(match.group(1)) > 0:
        return int(match.group(1)) * _UNIT_MS[match.group(2)]
    raise JammiValidationError(
        subject,
        f"'tombstone_retention' must be a positive number of milliseconds or a duration "
        f"such as '7d', got {value!r}",
        "set e.g. tombstone_retention: '30d' or tombstone_retention: 86400000",
    )


def retention_ms(definition: Mapping[str, Any]) -> Optional[int]:
    """How long the definition keeps tombstones, or None when it keeps none."""
    deletes = definition.get("delete_when") or definition.get("truncate_when")
    if not definition.get("version_column") or not deletes:
        return None
    if (definition.get("history") or "none") != "none" or definition.get("merge_functions"):
        return None
    return int(definition.get("tombstone_retention") or DEFAULT_RETENTION_MS)


def columns(definition: Mapping[str, Any]) -> list[list[str]]:
    """The tombstone columns, [name, type]: the primary key, ``tenant_id``, the version
    columns (in comparison order), ``_deleted_ms``."""
    types = {str(c[0]): str(c[1]) for c in definition["storage_columns"]}
    version = definition.get("version_column")
    versions = [version] if isinstance(version, str) else list(version or [])
    return [
        *([k, types[k]] for k in definition["storage_key"]),
        ["tenant_id", "string"],
        *([v, types[v]] for v in versions),
        [DELETED_MS_COLUMN, "bigint"],
    ]


def live_cutoff_ms(retention: int, now: int) -> int:
    """Tombstones deleted before this have expired."""
    return now - int(retention)


def version_tombstone_dir(location: str) -> str:
    return f"{location.rstrip('/')}/{TOMBSTONE_DIR}"


def tombstone_table_identifier(table_identifier: str) -> str:
    return f"{table_identifier}{TOMBSTONE_TABLE_SUFFIX}"


def committed_invocations(history: Iterable[Mapping[str, Any]]) -> list[str]:
    """The invocation ids with a commit in a Delta table's history (the tombstones they
    wrote count), sorted."""
    return sorted({str(e["invocation_id"]) for e in history if e.get("invocation_id")})


def path_missing(message: str) -> bool:
    """Whether Spark refused a path read because nothing is there."""
    return "PATH_NOT_FOUND" in message or "Path does not exist" in message
