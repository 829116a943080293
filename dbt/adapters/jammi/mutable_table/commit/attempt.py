"""What one commit is given, typed: the write (the table, its format and definition,
and the statement the planner rendered for it) and the attempt's values (the test hook,
whether it may re-plan, the staged change set and its counts, the run's relations to
drop on failure, and what each kind of commit reads besides). The materialization hands
the attempt to ``adapter.mutable_commit`` as one mapping; Python reads it once, here,
and passes these objects whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Optional


@dataclass(frozen=True)
class TableWrite:
    """What a commit writes: ``statement`` is the table's first rows (a create), the
    MERGE (a MERGE format) or the next version's rows (a rewrite)."""

    definition: Mapping[str, Any]
    target: Any
    file_format: str
    statement: str

    @property
    def model_name(self) -> str:
        return str(self.definition["table_id"])


@dataclass(frozen=True)
class Attempt:
    """One attempt's values for its commit."""

    # the test hook's phase (var jammi_fail_at) where a failing statement stands
    fail_at: Optional[str] = None
    # the run's last attempt: a lost commit fails the run instead of re-planning
    last_attempt: bool = True
    # the staged change set (a MERGE's temp view, a rewrite's staging table)
    change_set: Any = None
    # its counts ({total, inserted, updated, deleted}), None when the MERGE reports them
    counts: Optional[Mapping[str, Any]] = None
    run_id: str = ""
    # the run's own relations, dropped if the commit fails
    cleanup: tuple[str, ...] = ()
    invocation_id: str = ""
    # a create: where the registry is
    registry_schema: Optional[str] = None
    # a rewrite: the version the plan was made from, the next live tombstones
    planned_location: Optional[str] = None
    tombstones_sql: Optional[str] = None
    # Iceberg: the tombstones' append that commits with the MERGE on the run's branch
    tombstone_insert: Optional[str] = None
    # what the version log records the version as: a run's or a rollback's
    kind: str = "run"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Attempt:
        """The attempt as the materialization built it (keys it does not set keep their
        defaults; ``last_attempt`` unset means the last)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"an attempt has no {', '.join(unknown)}")
        given = {k: v for k, v in values.items() if v is not None}
        if "cleanup" in given:
            given["cleanup"] = tuple(_statements(given["cleanup"]))
        if "last_attempt" in given:
            given["last_attempt"] = bool(given["last_attempt"])
        return cls(**given)

    @property
    def changes(self) -> int:
        """How many keys the staged change set changes (0 when not counted)."""
        return int(self.counts["total"]) if self.counts else 0


def _statements(cleanup: Sequence[str]) -> list[str]:
    return [str(statement) for statement in cleanup]


@dataclass(frozen=True)
class AttemptOutcome:
    """What one attempt came to: ``committed`` (False: a concurrent run committed first
    and the run re-plans, or ``rejected`` names the batch check that stopped it), the
    counts of what it changed, the version directory a rewrite format committed, and
    the run's own relations the run drops when it finishes."""

    committed: bool
    counts: Optional[Mapping[str, Any]] = None
    location: Optional[str] = None
    rejected: Optional[str] = None
    run_relations: tuple[Any, ...] = ()

    def with_run_relations(self, relations: Sequence[Any]) -> AttemptOutcome:
        return replace(self, run_relations=tuple(relations))
