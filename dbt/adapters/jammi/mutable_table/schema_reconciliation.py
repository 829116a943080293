"""The model's output against the stored table's columns: the definition in force after
a schema change (new columns appended, missing ones kept by ``partial_updates``, type
changes the stored column takes), or the error that refuses the change before anything
is written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import normalize_type
from dbt.adapters.jammi.common.validation import TENANT_COLUMN
from dbt.adapters.jammi.mutable_table.exact_casts import cast_rule, checked_casts_of
from dbt.adapters.jammi.mutable_table.rule_columns import VERSION_PREFIX
from dbt.adapters.jammi.mutable_table.rules.identity import identity_storage_column
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN, written_at_needed
from dbt.adapters.jammi.mutable_table.schema_evolution import (
    EVOLVING,
    FormatEvolution,
    SchemaEvolution,
    dropped_columns,
    evolved_types,
    plan_evolution,
)


@dataclass(frozen=True)
class SchemaReconciliation:
    """How the model's output relates to the stored table."""

    definition: dict[str, Any]
    new_columns: list[list[str]]
    missing_columns: list[str]
    # [name, stored type, batch type] of the columns whose values are checked before
    # anything is written (exact_casts.CHECKED)
    checked_casts: list[list[str]]
    # what the run changes in place before it writes (schema_evolution.py)
    evolution: SchemaEvolution


# What a stored column takes from a model whose output type changed (the batch is cast
# to the stored type, exact_casts.py): said in the error that refuses anything else.
ALLOWED_TYPE_CHANGES = (
    "whole numbers into any whole-number type, whole numbers and floats into float or "
    "double, a decimal of lower or equal precision at the same scale into a decimal, a "
    "date into a timestamp (a value the stored type cannot hold exactly, such as a bigint "
    "beyond int's range, fails the run before anything is written); nested types must "
    "stay the same. With on_schema_change: append_new_columns or sync_all_columns, Delta "
    "(delta.enableTypeWidening) and Iceberg widen a column's type in place and add "
    "struct fields (docs/mutable_table.md, missing and new columns)"
)


def reconcile_schema(
    model_name: str,
    batch_definition: Mapping[str, Any],
    stored_columns: Sequence[Sequence[str]],
    evolution: FormatEvolution | None = None,
) -> SchemaReconciliation:
    """Compare the batch's definition with the stored table's user columns.

    ``stored_columns`` are (name, type) pairs of the table without ``tenant_id``. The
    returned definition keeps the stored column order (new columns appended) and the
    batch's options. Raises before anything is changed when the difference is not
    allowed by ``on_schema_change`` / ``partial_updates``. ``evolution``: what the
    stored table can change in place (none: nothing).
    """
    subject = f"mutable_table '{model_name}'"
    stored = [(str(n), normalize_type(str(t))) for n, t in stored_columns if n != TENANT_COLUMN]
    stored_types = dict(stored)
    batch_columns = [(str(n), str(t)) for n, t in batch_definition["columns"]]
    batch_types = dict(batch_columns)
    history = batch_definition.get("history", "none")
    engine_columns = (
        {batch_definition["valid_from"], batch_definition["valid_to"]}
        if history == "scd2"
        else set()
    )
    keeps_written_at = WRITTEN_AT_COLUMN in stored_types
    if written_at_needed(batch_definition) and not keeps_written_at:
        raise JammiValidationError(
            subject,
            f"ttl_ms without ttl_column ages rows by the engine column "
            f"'{WRITTEN_AT_COLUMN}' (when each key was last written), which this table was "
            "created without; its stored rows have no write time",
            "set ttl_column to a bigint epoch-millisecond column of the model, or rebuild "
            "the table with --full-refresh (needs config full_refresh: true)",
        )
    if keeps_written_at:
        engine_columns.add(WRITTEN_AT_COLUMN)
    identity = identity_storage_column(batch_definition)  # not output: the engine's
    if identity and identity[0] in stored_types:
        engine_columns.add(identity[0])

    on_schema_change = batch_definition.get("on_schema_change", "fail")
    changes = plan_evolution(on_schema_change, evolution, stored_types, batch_types)
    evolving = {c[0] for c in changes.widened} | {f[0] for f in changes.added_fields}
    for name, stored_type in stored:
        batch_type = batch_types.get(name)
        if name in evolving:
            continue
        if batch_type is not None and cast_rule(stored_type, batch_type) is None:
            raise JammiValidationError(
                subject,
                f"column '{name}' is stored as {stored_type} but the model now outputs "
                f"{batch_type}",
                f"cast it back: cast({name} as {stored_type}) as {name}, or rebuild the "
                "table with --full-refresh (needs config full_refresh: true). A stored "
                f"column takes {ALLOWED_TYPE_CHANGES}",
            )

    key = set(batch_definition["storage_key"]) - engine_columns
    missing_key = sorted(k for k in key if k not in stored_types)
    if missing_key:
        raise JammiValidationError(
            subject,
            f"primary_key column(s) {', '.join(missing_key)} are not in the stored table",
            "the primary key cannot change on an existing table; rebuild it with "
            "--full-refresh (needs config full_refresh: true)",
        )

    new_columns = [[n, t] for n, t in batch_columns if n not in stored_types]
    missing = [n for n, _ in stored if n not in batch_types and n not in engine_columns]

    refuse_rule_column_changes(subject, batch_definition, new_columns, missing)
    if new_columns and on_schema_change not in EVOLVING:
        names = ", ".join(n for n, _ in new_columns)
        raise JammiValidationError(
            subject,
            f"the model outputs new column(s) {names} that the stored table does not have "
            "(on_schema_change: fail)",
            "set on_schema_change: append_new_columns, or remove the column(s)",
        )
    # only `true` keeps a column the model stopped outputting: a list names output columns
    keeps_missing = batch_definition.get("partial_updates") is True
    if missing and on_schema_change == "sync_all_columns" and not keeps_missing:
        refusal_fix = dropped_columns(missing, evolution)
        if refusal_fix is not None:
            raise JammiValidationError(
                subject,
                f"the model no longer outputs column(s) {', '.join(missing)} "
                "(on_schema_change: sync_all_columns) and the table cannot drop them",
                refusal_fix,
            )
        changes = SchemaEvolution(changes.widened, changes.added_fields, list(missing))
        stored = [(n, t) for n, t in stored if n not in missing]
        missing = []
    if missing and not keeps_missing:
        raise JammiValidationError(
            subject,
            f"stored column(s) {', '.join(missing)} are missing from the model's output; "
            "a full-row upsert would overwrite them with NULL",
            "select them again, or set partial_updates: true so that missing columns keep "
            "their stored values",
        )

    # valid_from is a user column when the model outputs it (the effective time), as in
    # the definition of the table's first run: the recorded definition stays the same
    # from run to run (else every run would record it again)
    outputs_valid_from = history == "scd2" and batch_definition["valid_from"] in batch_types
    stored_types = evolved_types(stored_types, changes, batch_types)
    columns = [
        [n, stored_types[n]]
        for n, _ in stored
        if n not in engine_columns or (outputs_valid_from and n == batch_definition["valid_from"])
    ]
    columns += [[n, t] for n, t in new_columns]
    definition = dict(batch_definition)
    definition["columns"] = columns
    value_key = set(batch_definition["storage_key"])
    definition["value_columns"] = [n for n, _ in columns if n not in value_key]
    storage = [list(c) for c in columns]
    if history == "scd2":
        stored_names = {n for n, _ in storage}
        vf, vt = batch_definition["valid_from"], batch_definition["valid_to"]
        if vf not in stored_names:
            storage.append([vf, stored_types.get(vf, "bigint")])
        storage.append([vt, stored_types.get(vt, "bigint")])
    elif keeps_written_at:
        storage.append([WRITTEN_AT_COLUMN, "bigint"])
    if identity and identity[0] in stored_types:
        storage.append(identity)
    definition["storage_columns"] = storage
    return SchemaReconciliation(
        definition, new_columns, missing, checked_casts_of(stored_types, batch_columns), changes
    )


def refuse_rule_column_changes(
    subject: str,
    batch_definition: Mapping[str, Any],
    new_columns: Sequence[Sequence[str]],
    missing: Sequence[str],
) -> None:
    """A stored table whose columns ``rule_columns`` changes (rule_columns.py): a version
    column listed there needs its reserved column, which a table created (or adopted)
    without it lacks, and whose stored versions are not carried over; a stored column
    newly listed is dropped only under ``on_schema_change: sync_all_columns``."""
    carried = [str(n) for n, _ in new_columns if str(n).startswith(VERSION_PREFIX)]
    if carried:
        names = ", ".join(n[len(VERSION_PREFIX) :] for n in carried)
        raise JammiValidationError(
            subject,
            f"rule_columns lists the version column(s) {names}, kept as "
            f"{', '.join(carried)}; the stored table has no such column (it was created "
            "or adopted without them there), and its rows' versions are not carried over",
            "take the version column(s) out of rule_columns, or rebuild the table with "
            "--full-refresh (needs config full_refresh: true)",
        )
    listed = [c for c in missing if c in (batch_definition.get("rule_columns") or ())]
    if listed and batch_definition.get("on_schema_change", "fail") != "sync_all_columns":
        raise JammiValidationError(
            subject,
            f"rule_columns lists {', '.join(listed)}, which the stored table holds as "
            "value column(s)",
            "set on_schema_change: sync_all_columns to drop them from the table, or take "
            "them out of rule_columns",
        )
