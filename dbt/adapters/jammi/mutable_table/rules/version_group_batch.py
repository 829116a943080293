"""The batch of a ``version_groups`` model as one row per key, before any planner reads
it (rules/version_groups.py, docs/mutable_table.md#version-groups): each group's columns
from the key's row with the newest group version, the other columns from the row with
the newest ``version_column``, a merge function's column from the rows newer than its
group's stored version. A delete newer than the stored version drops the key's rows
before it and flags the rows after it ``RESTARTED``. Two rows of a key at one part's
newest version that differ in its columns are refused first (``ambiguous_rows_sql``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import quote_identifier
from dbt.adapters.jammi.mutable_table.redelivery import collapsed_batch_sql
from dbt.adapters.jammi.mutable_table.rules.version_groups import groups_of
from dbt.adapters.jammi.mutable_table.rules.version_sql import (
    stored_scope_sql,
    version_parts,
    version_sql,
)

# The combined batch's flag: the key was deleted in the batch and rows followed the
# delete (read by change_set.sql's mutable_stamped_batch_sql).
RESTARTED = "_jammi_restarted"

_EXACT_JSON = (
    "map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX', "
    "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS')"
)


def applied_batch(
    definition: Mapping[str, Any],
    source: str,
    batch_columns: Sequence[Sequence[str]],
    target: Optional[str],
    tenant: Optional[str],
    run_sql: Callable[[str], Sequence[Sequence[Any]]],
) -> str:
    """The batch as one row per key (see the module's doc), after ``run_sql`` has found
    no key whose rows disagree at a part's newest version (raised, naming the key)."""
    batch = GroupedBatch.of(definition, batch_columns, tenant)
    ambiguous = run_sql(ambiguous_rows_sql(definition, source, batch))
    if ambiguous:
        row = ambiguous[0]
        key = ", ".join(f"{k}={v!r}" for k, v in zip(batch.keys, row))
        part = str(row[len(batch.keys)])
        raise JammiValidationError(
            f"mutable_table '{definition.get('table_id')}'",
            f"the batch has two different rows of key ({key}) at the newest {part}: "
            "which one the table keeps would depend on the order Spark reads them in",
            f"send one row per key and {part} value (or give each change its own version)",
        )
    return combined_batch_sql(definition, source, batch, target, tenant)


class GroupedBatch:
    """The batch's columns by their part: the columns a key's rows are grouped by, each
    group's columns (its version last), and the columns in no group."""

    def __init__(
        self,
        columns: list[list[str]],
        keys: list[str],
        groups: dict[str, list[str]],
        partial: Any,
    ) -> None:
        self.columns = columns
        names = [n for n, _ in columns]
        self.names = names
        self.keys = keys
        self.groups = groups
        grouped = {c for v, cols in groups.items() for c in (v, *cols)}
        self.ungrouped = [n for n in names if n not in keys and n not in grouped]
        self.partial = partial

    @classmethod
    def of(
        cls,
        definition: Mapping[str, Any],
        batch_columns: Sequence[Sequence[str]],
        tenant: Optional[str],
    ) -> GroupedBatch:
        columns = [[str(n), str(t)] for n, t in batch_columns]
        names = [n for n, _ in columns]
        keys = [str(k) for k in definition["primary_key"]]
        tenant_from = definition.get("tenant_from")
        if tenant_from and str(tenant_from) in names and str(tenant_from) not in keys:
            keys.append(str(tenant_from))
        groups = {
            v: [c for c in cols if c in names]
            for v, cols in groups_of(definition).items()
            if v in names
        }
        return cls(columns, keys, groups, definition.get("partial_updates"))

    def keeps_stored(self, column: str) -> bool:
        partial = self.partial
        return bool(partial) if isinstance(partial, bool) else column in (partial or ())


def _q(name: str) -> str:
    return quote_identifier(name)


def _delete_sql(definition: Mapping[str, Any]) -> str:
    """Whether a batch row deletes its key (as mutable_stamped_batch_sql decides)."""
    terms = []
    if definition.get("delete_when"):
        terms.append(f"coalesce(({definition['delete_when']}), false)")
    if definition.get("truncate_when"):
        terms.append("_jammi_truncated")
    return " or ".join(terms) if terms else "false"


def ambiguous_rows_sql(definition: Mapping[str, Any], source: str, batch: GroupedBatch) -> str:
    """Up to 5 keys (and the part's version name) whose rows at a part's newest version
    differ in that part's columns: the columns in no group at the newest
    ``version_column``, a group's columns at its newest group version."""
    parts: list[tuple[str, str, list[str]]] = []
    if version_parts(definition) and batch.ungrouped:
        label = "version_column"
        parts.append((label, version_sql(definition, ""), batch.ungrouped))
    for version, columns in batch.groups.items():
        parts.append((version, _q(version), columns))
    keys = ", ".join(_q(k) for k in batch.keys)
    selects = []
    for label, order, columns in parts:
        payload = ", ".join(f"'f{i}', {_q(c)}" for i, c in enumerate(columns))
        selects.append(
            f"select {keys}, '{label}' as _jammi_part from (\n"
            f"  select *, max({order}) over (partition by {keys}) as _jammi_top "
            f"from {source} as batch\n"
            f") as ranked where {order} = _jammi_top\n"
            f"group by {keys}\n"
            f"having count(distinct to_json(named_struct({payload}), {_EXACT_JSON})) > 1"
        )
    if not selects:
        return f"select {keys}, '' from {source} as batch where false"
    return "select * from (\n" + "\nunion all\n".join(selects) + "\n) as ambiguous limit 5"


def combined_batch_sql(
    definition: Mapping[str, Any],
    source: str,
    batch: GroupedBatch,
    target: Optional[str],
    tenant: Optional[str],
) -> str:
    """One row per key: the groups' columns at their newest group version, the other
    columns at the newest ``version_column``, the key's rows before a fresh delete left
    out, and ``RESTARTED`` where rows follow that delete."""
    versioned = bool(version_parts(definition))
    deletes = versioned and _delete_sql(definition) != "false"
    functions = dict(definition.get("merge_functions") or {})
    keys = ", ".join(_q(k) for k in batch.keys)
    version = version_sql(definition, "") if versioned else ""
    if "sum" in functions.values():
        # a re-delivered row would be added twice (redelivery.py)
        source = collapsed_batch_sql(source, batch.columns)
    rows = f"select b.*, {_delete_sql(definition)} as _jammi_del from {source} as b"
    fresh_delete = "_jammi_del"
    # the stored versions a row is fresh against: what a delete and a merge function read
    stored_at = {name: f"_jammi_stored_{i}" for i, name in enumerate(batch.groups)}
    reads_stored = target is not None and (deletes or bool(functions))
    if reads_stored:
        stored_keys = [k for k in batch.keys if k in definition["primary_key"]]
        match = " and ".join(f"b.{_q(k)} = stored.{_q(k)}" for k in stored_keys)
        if definition.get("tenant_from") and tenant is None:
            match += f" and b.{_q(str(definition['tenant_from']))} <=> stored.tenant_id"
        stored = [f"stored.{_q(v)} as {alias}" for v, alias in stored_at.items()]
        if versioned:
            stored.append(f"{version_sql(definition, 'stored.')} as _jammi_stored_version")
        rows = (
            f"select b.*, {_delete_sql(definition)} as _jammi_del, {', '.join(stored)} "
            f"from {source} as b left join (select * from {target} as stored "
            f"where {stored_scope_sql(definition, tenant)}) as stored on {match}"
        )
    if reads_stored and versioned:
        fresh_delete = f"_jammi_del and coalesce({version} > _jammi_stored_version, true)"
    fresh = "select * from _jammi_rows"
    restarted = "false"
    if deletes:
        fresh = (
            "select * from (\n"
            f"  select *, max(case when {fresh_delete} then {version} end) "
            f"over (partition by {keys}) as _jammi_deleted_at\n"
            "  from _jammi_rows\n"
            f") as ranked where coalesce({version} >= _jammi_deleted_at, true)"
        )
        restarted = f"max(_jammi_deleted_at) is not null and not max_by(_jammi_del, {version})"
    grouped_at = {c: v for v, cols in batch.groups.items() for c in cols}
    selected = []
    for name in batch.names:
        column = _q(name)
        if name in batch.keys:
            value = column
        elif name in functions:
            # a merge function combines the key's rows newer than the stored version of
            # the column's group (of the row, for a column in no group)
            group = grouped_at.get(name)
            if group is not None:
                order = _q(group)
                stale = f"{stored_at[group]}" if reads_stored else "null"
                newer = f"coalesce({order} > {stale}, {order} is not null)"
            else:
                order = version
                stale = "_jammi_stored_version" if reads_stored else "null"
                newer = f"coalesce({order} > {stale}, true)"
            value = _combined(functions[name], column, order, newer)
        elif name in batch.groups:
            value = f"max({column})"
        elif name in grouped_at:
            order = _q(grouped_at[name])
            value = f"max_by({column}, {_live(column, order, batch.keeps_stored(name))})"
        elif name in version_parts(definition):
            # a NULL version stays NULL, for the batch check to refuse
            value = (
                f"case when count(*) > count({column}) then null "
                f"else max_by({column}, {version}) end"
            )
        elif versioned:
            value = f"max_by({column}, {_live(column, version, batch.keeps_stored(name))})"
        else:
            value = f"any_value({column})"
        selected.append(f"{value} as {column}")
    selected.append(f"{restarted} as {RESTARTED}")
    return (
        f"(with _jammi_rows as (\n  {rows}\n)\n"
        f"select {', '.join(selected)}\n"
        f"from ({fresh}) as fresh\n"
        f"group by {keys})"
    )


def _combined(function: str, column: str, order: str, fresh: str) -> str:
    """A merge function's combined batch value of one column over the key's fresh rows
    (the planner then combines it with the stored value: merge_functions.sql)."""
    if function in ("sum", "min", "max"):
        return f"{function}({column}) filter (where {fresh})"
    live = f"case when {column} is not null and {fresh} then {order} end"
    return f"{'min_by' if function == 'first' else 'max_by'}({column}, {live})"


def _live(column: str, order: str, keeps_stored: bool) -> str:
    """The order a column's combined value is taken in: a NULL that keeps the stored
    value (partial_updates) never wins over an earlier row's value."""
    return f"case when {column} is not null then {order} end" if keeps_stored else order
