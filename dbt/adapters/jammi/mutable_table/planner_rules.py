"""What the planner macros ask Python about one attempt's definition, in one answer
(``adapter.mutable_planner``; docs/architecture.md, "The planner").

The macros under ``macros/mutable_table/planner/`` lay the change set's SQL out; the
decisions and the rules' parts of it come from here:

- ``decisions``: a key's actions (key_decisions.py), rendered as the change set's CASE,
  the batch MERGE's clauses and a snapshot feed's filter;
- tombstones: whether the definition keeps them and their columns (rules/tombstones.py);
- TTL: the expired test of a stored row against the attempt's clock (rules/ttl.py) and
  the engine's ``_written_at`` column;
- merge functions: the type a sum adds in, and its checked cast back to the stored type
  (exact_casts.py);
- the identity column's guard marker, the changelog's stored values in the plan, and the
  batch checks' errors;
- partial updates: whether a NULL keeps a column's stored value;
- version groups: each value guarded by its group's version, and the ``newer`` fact
  that a newer group version makes true (rules/version_groups.py);
- ``quoted``: every name of the definition quoted for Spark SQL;
- ``scd2()``: the scd2 interval planner's inputs (scd2.py), for a definition with
  ``history: scd2``.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table import exact_casts
from dbt.adapters.jammi.mutable_table.commit.merge_commit import batch_check_marker
from dbt.adapters.jammi.mutable_table.definition import keeps_stored_on_null
from dbt.adapters.jammi.mutable_table.key_decisions import KeyDecisions
from dbt.adapters.jammi.mutable_table.rules import (
    changelog,
    identity,
    merge_functions,
    tombstones,
    ttl,
    version_groups,
)
from dbt.adapters.jammi.mutable_table.scd2 import plan_scd2


class QuotedNames(dict[str, str]):
    """Every name of a definition, quoted for Spark SQL (``quoted[name]``); a name the
    definition does not list is quoted when asked."""

    def __missing__(self, name: str) -> str:
        return quote_identifier(name)


def quoted_names(definition: Mapping[str, Any]) -> QuotedNames:
    names: list[str] = []
    for listed in ("storage_columns", "columns"):
        names += [str(c[0]) for c in definition.get(listed) or ()]
    for listed in ("primary_key", "storage_key", "batch_columns"):
        names += [str(n) for n in definition.get(listed) or ()]
    version = definition.get("version_column")
    names += [version] if isinstance(version, str) else [str(n) for n in version or ()]
    for single in ("tenant_from", "identity_column", "valid_from", "valid_to", "ttl_column"):
        if definition.get(single):
            names.append(str(definition[single]))
    return QuotedNames((name, quote_identifier(name)) for name in names)


@dataclass(frozen=True)
class PlannerRules:
    table_id: str
    decisions: KeyDecisions
    keeps_tombstones: bool
    tombstone_columns: tuple[tuple[str, str], ...]
    ttl_expired: Optional[str]
    written_at: str
    previous_in_plan: bool
    identity_moved_marker: str
    combined: bool = False
    quoted: QuotedNames = field(default_factory=QuotedNames)
    definition: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def sum_type(self, stored_type: str) -> Optional[str]:
        """The type a ``sum`` of a stored column adds in (it cannot overflow), or None
        (floats add in their own type)."""
        return exact_casts.exact_sum_type(stored_type)

    def stored_sum(self, column: str, stored_type: str, expr: str, source_type: str) -> str:
        """A sum ``expr`` (of ``source_type``) cast back to the column's stored type,
        failing the statement before its write commits when the value does not fit."""
        subject = (
            f"mutable_table '{self.table_id}': merge_functions sums column '{column}', "
            f"whose stored type {stored_type}"
        )
        return exact_casts.checked_cast_sql(expr, source_type, stored_type, subject)

    def keeps_stored_on_null(self, column: str) -> bool:
        """Whether a NULL in the batch keeps ``column``'s stored value (``partial_updates``:
        true, or a list that names the column)."""
        return keeps_stored_on_null(self.definition.get("partial_updates"), column)

    def grouped_value(
        self, column: str, new: str, s: str, t: str, quote: bool, restarted: str
    ) -> str:
        """A value column's new value guarded by its version group (``new`` unchanged
        for a definition without version_groups, and for an engine column)."""
        engine = (self.definition.get("identity_column"), self.written_at)
        if not self.definition.get("version_groups") or column in engine:
            return new
        return version_groups.grouped_value(self.definition, column, new, s, t, quote, restarted)

    def grouped_newer(self, newer: str, is_delete: str, s: str, t: str, quote: bool) -> str:
        """The ``newer`` fact under version_groups (``newer`` itself without them)."""
        if not self.definition.get("version_groups"):
            return newer
        return version_groups.grouped_newer(self.definition, newer, is_delete, s, t, quote)

    def scd2(self, run_started_at: Optional[datetime.datetime] = None) -> dict[str, Any]:
        """The scd2 change-set planner's inputs (``plan_scd2``); ``run_started_at``: the
        run's start (dbt's), which intervals are stamped with where the batch carries no
        time of its own."""
        return plan_scd2(self.definition, run_started_at).to_dict()

    def batch_check_error(self, kind: str) -> str:
        """A batch check's error, raised inside the statement that reads the batch; its
        marker names the check (merge_commit.BATCH_CHECK_KINDS)."""
        return f"raise_error({sql_string_literal(batch_check_marker(kind))})"


def planner_rules(definition: Mapping[str, Any]) -> PlannerRules:
    keeps = tombstones.retention_ms(definition) is not None
    return PlannerRules(
        table_id=str(definition.get("table_id")),
        decisions=KeyDecisions.of(definition, keeps),
        keeps_tombstones=keeps,
        tombstone_columns=tuple(
            (str(name), str(kind)) for name, kind in tombstones.columns(definition)
        )
        if keeps
        else (),
        ttl_expired=_ttl_expired_sql(definition),
        written_at=ttl.WRITTEN_AT_COLUMN,
        previous_in_plan=changelog.previous_in_plan(definition),
        identity_moved_marker=identity.IDENTITY_MOVED_MARKER,
        combined=merge_functions.combines_in_batch(definition),
        quoted=quoted_names(definition),
        definition=definition,
    )


def _ttl_expired_sql(definition: Mapping[str, Any]) -> Optional[str]:
    """Whether a stored row's age column is below the attempt's cutoff (false for a NULL
    age); None without TTL or before the attempt has its clock."""
    if not definition.get("ttl_ms") or definition.get("now_ms") is None:
        return None
    column = ttl.age_column(definition)
    types = {str(c[0]): str(c[1]) for c in definition["storage_columns"]}
    age = ttl.age_millis_sql(quote_identifier(column), types.get(column, "bigint"))
    cutoff = ttl.ttl_cutoff_ms(int(definition["ttl_ms"]), int(definition["now_ms"]))
    return f"coalesce({age} < {cutoff}, false)"
