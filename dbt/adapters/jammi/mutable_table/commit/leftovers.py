"""What a mutable_table run may remove of what other runs left next to the table.

Runs of the rewrite applier create two kinds of relations beside ``<table>``:

- staging tables ``<table>__jammi_changes_<run id>`` (the materialized change set),
  stamped with their owner (``ownership``); one is removed only when its owner is
  provably gone, never while a concurrent run may still read it;
- commit claims ``<table>__jammi_claim_v<version>_<attempt>`` (``commit_claim``); a
  claim on a version the table has already reached can never lead to a commit, so it is
  removed whoever made it. Newer claims are left to the claim protocol.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

from dbt.adapters.jammi.mutable_table.commit.rewrite_commit import claim_version

STAGING_MARKER = "__jammi_changes_"
STAGING_MAX_AGE_MS = 24 * 3600 * 1000


def staging_identifier(table_identifier: str, run_id: str) -> str:
    return f"{table_identifier}{STAGING_MARKER}{run_id}"


def leftover_pattern(table_identifier: str) -> str:
    """The ``SHOW TABLES ... LIKE`` pattern that lists a table's run relations."""
    return f"{table_identifier}__jammi_*"


def is_leftover(table_identifier: str, name: str) -> bool:
    """Whether ``name`` is one of the table's run relations (``leftover_pattern``)."""
    return name.lower().startswith(f"{table_identifier}__jammi_".lower())


def is_staging(table_identifier: str, name: str) -> bool:
    return name.startswith(f"{table_identifier}{STAGING_MARKER}")


def stale_claims(
    table_identifier: str, names: Iterable[str], current_version: Optional[int]
) -> list[str]:
    """Claims on versions the table has reached or passed."""
    if current_version is None:
        return []
    stale = []
    for name in names:
        version = claim_version(table_identifier, name)
        if version is not None and version <= current_version:
            stale.append(name)
    return sorted(stale)


def foreign_staging(table_identifier: str, names: Iterable[str], own_run_id: str) -> list[str]:
    """Staging tables of other runs: candidates whose owners must be checked."""
    own = staging_identifier(table_identifier, own_run_id)
    return sorted(n for n in names if is_staging(table_identifier, n) and n != own)
