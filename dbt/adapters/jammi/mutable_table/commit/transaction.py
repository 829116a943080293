"""A commit's rows from the row rules, as one object (docs/architecture.md, "A commit
and its records").

Tombstones, an identity column's high-water mark and a changelog's events must commit
with the table's change or not at all. Each rule adds its records to the attempt's
``Transaction`` (rules/rules_service.py: ``add_version_records``,
``add_branch_records``, ``add_create_records``), and each commit applies them in one
place, as its format needs:

- a rewrite format runs them as steps of its all-or-nothing commit, before the swap
  that commits the version they were written into (commit/version_commit.py);
- Iceberg appends them on the run's branch after its MERGE, and the fast-forward
  commits them with it (commit/branch_commit.py);
- Iceberg's create stages its changelog's first records before its CREATE.

Delta needs none: its MERGE's own commit holds what a rule reads back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RULES = ("tombstones", "identity", "changelog")


@dataclass(frozen=True)
class Record:
    """One statement a rule adds to a commit; ``undo_paths``: what it writes outside
    the table, removed if the commit fails."""

    rule: str
    sql: str
    undo_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"a commit's record is one of {', '.join(RULES)}, not {self.rule!r}")

    def step(self) -> dict[str, Any]:
        """The record as a step of the all-or-nothing runner (mutable_table/steps.py)."""
        return {"sql": self.sql, "undo_paths": list(self.undo_paths)}


class Transaction:
    """The records of one commit, in the order the rules added them."""

    def __init__(self) -> None:
        self._records: list[Record] = []

    def add(self, rule: str, sql: str, undo_paths: tuple[str, ...] = ()) -> None:
        self._records.append(Record(rule, sql, tuple(undo_paths)))

    @property
    def records(self) -> tuple[Record, ...]:
        return tuple(self._records)

    def __bool__(self) -> bool:
        return bool(self._records)

    def steps(self) -> list[dict[str, Any]]:
        return [record.step() for record in self._records]

    def statements(self) -> list[str]:
        return [record.sql for record in self._records]

    def undo_paths(self, rule: str) -> list[str]:
        """What ``rule``'s records write outside the table."""
        return [path for r in self._records if r.rule == rule for path in r.undo_paths]
