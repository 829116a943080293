"""A small pure-Python model of `history: scd2`, written imperatively.

It is deliberately a different formulation from the SQL planner: it keeps each key's
intervals in a list and applies one event at a time, in batch order and, inside a batch,
in effective-time order, exactly as docs/scd2.md states the semantics:

- a row whose tracked columns equal those of the interval its time falls in does nothing;
- a row at the exact start of a stored interval replaces that interval's values (the
  version rule permitting);
- a row inside an interval splits it: the interval ends at the row's time and the new
  interval runs to where the old one ended;
- a row in a gap (before the first interval, after a delete) opens an interval that runs
  to the next interval's start (or stays open);
- a delete inside an interval ends it there; a delete at an interval's exact start removes
  that interval; a delete where the key is already absent does nothing.

Tests compare the intervals read back from Spark with ``History.rows()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

Key = tuple[Any, ...]  # (tenant_id, *primary key)


@dataclass
class Interval:
    valid_from: int
    valid_to: Optional[int]
    values: dict[str, Any]

    def contains(self, t: int) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)


@dataclass(frozen=True)
class Event:
    key: Key
    time: int
    values: Optional[dict[str, Any]]  # None: a delete
    version: Optional[int] = None


class DuplicateEffectiveTime(ValueError):
    pass


@dataclass
class History:
    track_columns: Sequence[str]
    version_column: Optional[str] = None
    intervals: dict[Key, list[Interval]] = field(default_factory=dict)

    def apply_batch(
        self,
        events: Iterable[Event],
        hard_delete_time: Optional[int] = None,
        scope: Optional[Any] = ...,  # type: ignore[assignment]
    ) -> None:
        """Apply one run. ``hard_delete_time``: hard_deletes=delete at that run time;
        ``scope``: the bound tenant (keys of other tenants are not hard-deleted)."""
        chosen = self._deduplicate(list(events))
        if hard_delete_time is not None:
            present = {e.key for e in chosen}
            for key, intervals in self.intervals.items():
                in_scope = scope is ... or key[0] == scope
                if in_scope and key not in present and any(i.valid_to is None for i in intervals):
                    chosen.append(Event(key, hard_delete_time, None))
        for event in sorted(chosen, key=lambda e: (repr(e.key), e.time)):
            self._apply(event)

    def _deduplicate(self, events: list[Event]) -> list[Event]:
        groups: dict[tuple[Key, int], list[Event]] = {}
        for event in events:
            groups.setdefault((event.key, event.time), []).append(event)
        chosen = []
        for (key, t), group in groups.items():
            distinct = {(_freeze(e.values), e.version): e for e in group}
            candidates = list(distinct.values())
            if self.version_column is not None:
                top = max(_version_rank(e) for e in candidates)
                candidates = [e for e in candidates if _version_rank(e) == top]
            if len(candidates) > 1:
                raise DuplicateEffectiveTime(f"{key} has different rows at {t}")
            chosen.append(candidates[0])
        return chosen

    def _wins(self, event: Event, interval: Interval) -> bool:
        if self.version_column is None or event.version is None:
            return True
        stored = interval.values.get(self.version_column)
        return stored is None or event.version > stored

    def _tracked(self, values: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(values.get(c) for c in self.track_columns)

    def _apply(self, event: Event) -> None:
        intervals = self.intervals.setdefault(event.key, [])
        t = event.time
        current = next((i for i in intervals if i.contains(t)), None)
        if event.values is None:  # delete
            if current is None:
                return
            if current.valid_from == t:
                if self._wins(event, current):
                    intervals.remove(current)
            else:
                current.valid_to = t
            return
        if current is None:
            later = [i.valid_from for i in intervals if i.valid_from > t]
            intervals.append(Interval(t, min(later) if later else None, dict(event.values)))
            intervals.sort(key=lambda i: i.valid_from)
        elif current.valid_from == t:
            if self._wins(event, current):
                current.values = dict(event.values)
        elif self._tracked(event.values) != self._tracked(current.values):
            intervals.append(Interval(t, current.valid_to, dict(event.values)))
            current.valid_to = t
            intervals.sort(key=lambda i: i.valid_from)

    def rows(self) -> list[tuple[Key, int, Optional[int], tuple[Any, ...]]]:
        """(key, valid_from, valid_to, values sorted by column name), sorted."""
        out = []
        for key, intervals in self.intervals.items():
            for i in intervals:
                values = tuple(v for _, v in sorted(i.values.items()))
                out.append((key, i.valid_from, i.valid_to, values))
        return sorted(out, key=lambda row: (repr(row[0]), row[1]))


def _freeze(values: Optional[dict[str, Any]]) -> Optional[tuple[tuple[str, Any], ...]]:
    return None if values is None else tuple(sorted(values.items()))


def _version_rank(event: Event) -> int:
    return -(1 << 63) if event.version is None else event.version
