"""The definition a run plans with: the table's definition, frozen, and this run's own
values beside it, each declared below. The table records the first and never the
second (table_properties.RECORDED_KEYS); nothing writes into either.

The planner's macros read one mapping (``definition.storage_key``,
``definition.now_ms``), so a ``RunDefinition`` is a read-only ``Mapping`` whose keys are
the definition's and the run values' (a run value shadows nothing: the two sets of
names are disjoint). A later phase that adds a value makes a new one
(``with_run_values``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

# The values a run adds to its definition, by the phase that adds them (docs/flow/
# mutable_table.md). None of them is recorded, so none makes the next run see a changed
# definition.
RUN_VALUES: Mapping[str, str] = MappingProxyType(
    {
        # the model's config, checked (run_config.run_definition)
        "versions_kept": "the kept versions a run leaves (versions/kept_versions.py)",
        "expire_snapshots": "whether an Iceberg commit expires old snapshots",
        "tblproperties": "the model's table properties",
        # the run's start (run_service.run_start)
        "batch_columns": "the names of the batch's columns as the planner reads them",
        "checks_in_plan": "whether the change set's statement runs the batch checks",
        # before the plan (run_service.changelog_prepare)
        "changelog_topic": "the changelog topic the commit publishes to, or None",
        # before each attempt's plan (run_service.plan_prepare)
        "now_ms": "the attempt's clock: _written_at and the TTL cutoff agree",
        "ttl_expired_in_plan": "whether the change set finds the expired rows itself",
        "tombstones_from": "a query of the keys' live tombstones, or None",
        "tombstone_now_ms": "when the attempt's deletes happen",
        "identity_from": "where the attempt's identity numbering starts",
        "identity_guard": "whether the plan stops when the table stores a higher number",
    }
)


class RunDefinition(Mapping[str, Any]):
    """A definition and a run's values, read as one frozen mapping."""

    __slots__ = ("_definition", "_run_values")

    def __init__(self, definition: Mapping[str, Any], run_values: Mapping[str, Any]) -> None:
        stray = sorted(set(definition) & set(RUN_VALUES))
        unknown = sorted(set(run_values) - set(RUN_VALUES))
        if stray or unknown:
            raise ValueError(
                f"run values must be declared in RUN_VALUES and kept out of the definition:"
                f" in the definition {stray}, undeclared {unknown}"
            )
        self._definition = MappingProxyType(dict(definition))
        self._run_values = MappingProxyType(dict(run_values))

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> RunDefinition:
        """A definition dict (a recorded one, or a run's built by the older dict code)
        split into its definition and its run values."""
        if isinstance(mapping, RunDefinition):
            return mapping
        return cls(
            {k: v for k, v in mapping.items() if k not in RUN_VALUES},
            {k: v for k, v in mapping.items() if k in RUN_VALUES},
        )

    @property
    def recorded(self) -> Mapping[str, Any]:
        """The definition without the run's values."""
        return self._definition

    @property
    def run_values(self) -> Mapping[str, Any]:
        return self._run_values

    def with_run_values(self, **values: Any) -> RunDefinition:
        """A copy with these run values added or replaced."""
        return RunDefinition(self._definition, {**self._run_values, **values})

    def __getitem__(self, key: str) -> Any:
        if key in self._run_values:
            return self._run_values[key]
        return self._definition[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._definition
        yield from self._run_values

    def __len__(self) -> int:
        return len(self._definition) + len(self._run_values)

    def __repr__(self) -> str:
        return f"RunDefinition({dict(self._definition)!r}, {dict(self._run_values)!r})"
