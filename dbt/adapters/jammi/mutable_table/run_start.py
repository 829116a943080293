"""The start of a mutable_table run: everything the run decides and checks before it
writes, in one adapter call (``adapter.mutable_run_start``, run_service.py;
docs/architecture.md, "The run's start").

In order, with nothing written:

1. the test hook (var ``jammi_fail_at``), the run's id, and whether ``--full-refresh``
   rebuilds the table (``config full_refresh``);
2. the batch's columns (``DESCRIBE QUERY``), and the model's definition from them;
3. the stored table's state, or the checks that adopt a table another materialization
   built (table_state.TableStateService.table_state);
4. the definition the run applies (schema_reconciliation), the in-place schema changes
   (schema_evolution) and the model's new ``tblproperties``; the format's refusals
   (iceberg_support) and the changelog's (changelog_phases.check);
5. the batch as the run reads it: scoped to a bound tenant, its values checked where a
   narrower column must hold them exactly (exact_casts), identical rows collapsed where
   a sum would add them twice (redelivery);
6. the run's plan (commit/run_plan.py).

``RunStart`` holds the answers, frozen; the materialization (mutable_table.sql) reads
its attributes and follows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table import run_errors
from dbt.adapters.jammi.mutable_table.commit.run_plan import RunPlan
from dbt.adapters.jammi.mutable_table.run_definition import RunDefinition


@dataclass(frozen=True)
class RunStart:
    """What a run knows before it writes. ``state``: the stored table's (None: a first
    run; a rebuild's is the table it drops); ``evolution``: the in-place schema changes,
    in order; ``redelivery``: the batch with identical rows collapsed
    (``collapsed_source``) and whether the run starts from it (``always``);
    ``collapsed``: identical batch rows collapsed from the start (None: not looked
    for); ``full_refresh_ignored``: ``--full-refresh`` was given and the model keeps its
    table (the materialization warns)."""

    fail_at: Optional[str]
    run_id: str
    rebuild: bool
    full_refresh_ignored: bool
    batch_columns: list[list[str]]
    definition: RunDefinition
    state: Optional[dict[str, Any]]
    adopting: bool
    file_format: str
    new_columns: list[list[str]]
    evolution: list[str]
    new_properties: dict[str, str]
    changelog: dict[str, Any]
    batch_source: str
    redelivery: dict[str, Any]
    collapsed: Optional[int]
    truncates: Optional[int]
    plan: RunPlan


def failure_phase(value: Any) -> Optional[str]:
    """The phase a test asked to fail at (var ``jammi_fail_at``), validated."""
    if value in (None, ""):
        return None
    if value not in run_errors.FAILURE_PHASES:
        raise run_errors.MutableRunError(
            f"var jammi_fail_at={value!r} is not one of {', '.join(run_errors.FAILURE_PHASES)}"
        )
    return str(value)


def batch_source(compiled_sql: str) -> str:
    """The model's SQL as a FROM item (a trailing ``;`` dropped), inlined wherever the
    run reads the batch."""
    body = compiled_sql.strip()
    if body.endswith(";"):
        body = body[:-1].strip()
    return f"(\n{body}\n)"


def tenant_bound_source(
    definition: Mapping[str, Any], source: str, tenant: Optional[str]
) -> tuple[str, Optional[str]]:
    """A ``tenant_from`` model in a run bound to a tenant writes only that tenant's rows:
    the batch so scoped, and the query counting the rows it skips (None: nothing is
    scoped)."""
    column = definition.get("tenant_from")
    if tenant is None or not column:
        return source, None
    own = f"{quote_identifier(column)} = {sql_string_literal(tenant)}"
    skipped = f"select count(*) from {source} as batch where not coalesce({own}, false)"
    return f"(select * from {source} as batch where {own})", skipped


def skipped_rows_message(model_name: str, tenant: str, tenant_from: str, skipped: int) -> str:
    return (
        f"mutable_table '{model_name}': a run bound to tenant '{tenant}' writes only that "
        f"tenant's rows of a tenant_from model; skipped {skipped} row(s) whose {tenant_from} "
        "names another tenant or none (shared rows). An unbound run writes every tenant's "
        "rows."
    )


def collapsed_count_sql(source: str, collapsed_source: str) -> str:
    """How many rows collapsing identical rows takes away."""
    return (
        f"select (select count(*) from {source} as delivered) - "
        f"(select count(*) from {collapsed_source} as collapsed)"
    )


def evolution_statements(relation: str, reconciled: Mapping[str, Any]) -> list[str]:
    """The statements that change the stored schema in place before a run writes
    (schema_evolution.py): types widened, struct fields added, columns dropped, in that
    order."""
    q = quote_identifier
    statements = [
        f"alter table {relation} alter column {q(name)} type {new_type}"
        for name, _old_type, new_type in reconciled["widened"]
    ]
    statements += [
        f"alter table {relation} add columns ({q(parent)}.{q(field)} {field_type})"
        for parent, field, field_type in reconciled["added_fields"]
    ]
    if reconciled["dropped"]:
        names = ", ".join(q(name) for name in reconciled["dropped"])
        statements.append(f"alter table {relation} drop columns ({names})")
    return statements


def writes_first(
    rebuild: bool,
    adopting: bool,
    new_columns: Sequence[Any],
    evolution: Sequence[str],
    new_properties: Mapping[str, str],
    changelog: Mapping[str, Any],
) -> dict[str, bool]:
    """What the run writes before its plan, by name (run_plan.plan_run): the batch
    checks then run in a query of their own, before any of it."""
    return {
        "rebuild": rebuild,
        "adoption": adopting,
        "new_columns": bool(new_columns),
        "schema_evolution": bool(evolution),
        "new_properties": bool(new_properties),
        "changelog": bool(changelog.get("writes")),
    }
