"""The row rules that rewrite a run's batch before any planner reads it, in their order:
a truncate's deletes (rules/truncates.py), then one row per key under version groups
(rules/version_group_batch.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.mutable_table.rules import truncates, version_group_batch


@dataclass(frozen=True)
class RewrittenBatch:
    """The batch as the run reads it: its SQL, its (name, type) columns, and how many
    truncate rows it held (None for a model without ``truncate_when``)."""

    source: str
    columns: list[list[str]]
    truncate_rows: Optional[int]


def rewritten_batch(
    definition: Mapping[str, Any],
    source: str,
    columns: Sequence[Sequence[str]],
    target: Optional[str],
    tenant: Optional[str],
    run_sql: Callable[[str], Sequence[Sequence[Any]]],
) -> RewrittenBatch:
    """``source`` (the parenthesized batch, ``columns`` its columns) with the rules'
    rewrites applied; ``target`` the stored table (None on a first run)."""
    listed = [[str(n), str(t)] for n, t in columns]
    truncate_rows = None
    if definition.get("truncate_when"):
        source, truncate_rows = truncates.applied_batch(
            definition, source, listed, target, tenant, run_sql
        )
        listed.append([truncates.TRUNCATED_FLAG, "boolean"])
    if definition.get("version_groups"):
        source = version_group_batch.applied_batch(
            definition, source, listed, target, tenant, run_sql
        )
        listed.append([version_group_batch.RESTARTED, "boolean"])
    return RewrittenBatch(source, listed, truncate_rows)
