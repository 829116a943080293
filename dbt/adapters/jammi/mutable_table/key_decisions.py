"""What a history-none run does to each key, stated once (docs/mutable_table.md).

The change-set planner (``change_set.sql``: its ``change_kind``), the batch-sourced MERGE
(``merge_batch.sql``: its WHEN clauses) and a snapshot feed's changes source (its WHERE)
render their actions from the guards below, so the three cannot disagree. scd2 keeps its
own interval planner.

A key's facts, named by each form in ``terms``:

- ``stored``: the key has a stored row in the run's scope;
- ``in_batch``: the batch has a row for the key (its winning row);
- ``is_delete``: the batch row matches ``delete_when``, or is a truncate's delete of
  the key (rules/truncates.py);
- ``newer``: the batch row's version is newer than the stored one (``true`` without a
  version rule);
- ``tombstoned``: a live tombstone holds a version at least the batch row's;
- ``same``: the new row would change no value.

The actions and their guards (each a conjunction; at most one holds for a key):

- ``absent``: delete a stored key the batch lacks (``hard_deletes: delete``);
- ``delete``: a newer delete of a stored key (``delete_when``);
- ``update``: a newer row of a stored key that changes a value (a table with values);
- ``insert``: a row of a key not stored.

Every other key is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

# The order the facts are written in a condition.
FACT_ORDER = ("stored", "in_batch", "is_delete", "newer", "tombstoned", "same")
# Facts a MERGE states by its clause (matched / not matched / not matched by source).
STRUCTURAL = ("stored", "in_batch")


@dataclass(frozen=True)
class Guard:
    """One action and the facts it needs: ``(fact, value)`` pairs."""

    change: str
    name: str
    facts: tuple[tuple[str, bool], ...]

    def needs(self, fact: str) -> Optional[bool]:
        return dict(self.facts).get(fact)


@dataclass(frozen=True)
class KeyDecisions:
    """The guards of one definition. ``absent_deletes`` is per form: the change set also
    deletes the expired rows its TTL read joins as absent (change_set.sql)."""

    deletes: bool
    updates: bool
    tombstones: bool

    @classmethod
    def of(cls, definition: Mapping[str, Any], tombstones: bool) -> KeyDecisions:
        return cls(
            deletes=bool(definition.get("delete_when") or definition.get("truncate_when")),
            updates=bool(definition.get("value_columns")),
            tombstones=tombstones,
        )

    def guards(self, absent_deletes: bool) -> tuple[Guard, ...]:
        live = (("tombstoned", False),) if self.tombstones else ()
        found = []
        if absent_deletes:
            found.append(Guard("delete", "absent", (("stored", True), ("in_batch", False))))
        if self.deletes:
            found.append(
                Guard(
                    "delete",
                    "delete",
                    (("stored", True), ("in_batch", True), ("is_delete", True), ("newer", True))
                    + live,
                )
            )
        if self.updates:
            found.append(
                Guard(
                    "update",
                    "update",
                    (("stored", True), ("in_batch", True), ("is_delete", False), ("newer", True))
                    + live
                    + (("same", False),),
                )
            )
        found.append(
            Guard(
                "insert",
                "insert",
                (("stored", False), ("in_batch", True), ("is_delete", False)) + live,
            )
        )
        return tuple(found)

    def decide(self, facts: Mapping[str, bool], absent_deletes: bool) -> Optional[str]:
        """The action for one key's facts (None: left alone); what every form renders."""
        for guard in self.guards(absent_deletes):
            if all(facts[fact] == value for fact, value in guard.facts):
                return guard.change
        return None

    def case_sql(self, terms: Mapping[str, str], absent_deletes: bool) -> str:
        """The change set's ``change_kind``: a CASE over the guards (NULL: no change)."""
        arms = " ".join(
            f"when {_conjunction(guard.facts, terms)} then '{guard.change}'"
            for guard in self.guards(absent_deletes)
        )
        return f"case {arms} end"

    def merge_clauses(
        self, terms: Mapping[str, str], absent: Optional[str] = None, scope: str = ""
    ) -> list[dict[str, str]]:
        """The batch-sourced MERGE's WHEN clauses, in the order Spark takes them:
        ``{'change', 'when'}``, ``when`` after the WHEN. ``absent``: None (no absent
        deletes), ``'marked'`` (the source carries the absent keys as ``_absent`` rows)
        or ``'by_source'`` (WHEN NOT MATCHED BY SOURCE within ``scope``)."""
        matched: list[dict[str, str]] = []
        not_matched: list[dict[str, str]] = []
        by_source: list[dict[str, str]] = []
        for guard in self.guards(absent is not None):
            rest = _conjunction(_unstructured(guard.facts), terms)
            if guard.name == "absent" and absent == "marked":
                matched.append({"change": "delete", "when": "matched and s._absent"})
            elif guard.name == "absent":
                by_source.append({"change": "delete", "when": f"not matched by source and {scope}"})
            elif guard.needs("stored"):
                matched.append({"change": guard.change, "when": f"matched and {rest}"})
            else:
                not_matched.append({"change": guard.change, "when": f"not matched and {rest}"})
        return matched + not_matched + by_source

    def changes_filter(self, terms: Mapping[str, str]) -> str:
        """A snapshot feed's changes source keeps the rows its MERGE acts on: the stored
        keys the batch lacks, the batch rows of keys not stored (the MERGE's insert clause
        decides them), and the rows a matched action changes."""
        kept = [terms["absent"], terms["not_stored"]]
        kept += [
            _conjunction(_unstructured(guard.facts), terms)
            for guard in self.guards(True)
            if guard.needs("stored") and guard.needs("in_batch")
        ]
        return " or ".join(kept)


def _unstructured(facts: tuple[tuple[str, bool], ...]) -> tuple[tuple[str, bool], ...]:
    return tuple((fact, value) for fact, value in facts if fact not in STRUCTURAL)


def _conjunction(facts: tuple[tuple[str, bool], ...], terms: Mapping[str, str]) -> str:
    ordered = sorted(facts, key=lambda pair: FACT_ORDER.index(pair[0]))
    return " and ".join(_literal(terms[fact], value) for fact, value in ordered)


def _literal(term: str, value: bool) -> str:
    if value:
        return term
    return f"not {term}" if term.replace("_", "").replace(".", "").isalnum() else f"not ({term})"
