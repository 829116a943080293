"""Config ``version_groups``: ``{version column: [columns]}``, each group of value
columns ordered by its own version (docs/mutable_table.md#version-groups).

Several writers of one wide row, each sending its own columns and its own version:
a group's columns change only when the row's value of the group's version is newer than
the stored one, whatever order the batches arrive in, and a row whose group version is
NULL leaves the group as it is. The columns in no group follow ``version_column``, and
so do deletes (a delete needs a version to be ordered against: without
``version_column`` there are no deletes, and every value column is in a group).

A run applies the rule in two places:

- **The batch** (``applied_batch``) becomes one row per key before any planner sees it:
  each group's columns from the key's row with the newest group version, the other
  columns from the row with the newest ``version_column``. A delete that is newer than
  the stored version ends the key: the key's rows before it are dropped, and when rows
  follow it the combined row is flagged ``RESTARTED`` (the key starts afresh: no stored
  value is kept). Two rows of a key at the same newest version of one part that differ
  in that part's columns are refused before anything is written (``ambiguous_rows_sql``);
  identical ones are one change.
- **The planner** (``PlannerRules.grouped_value`` / ``grouped_newer``): each value's new
  value is guarded by its group's version (the columns in no group by the row's), and a
  row that is not newer by ``version_column`` still updates the groups it carries newer
  versions of. Tombstones compare ``version_column``, as deletes do.

Refused, naming the model: a column in two groups, a key, tenant or version column in a
group, a group version of a type that does not order or named in ``merge_functions``,
and ``history: scd2`` (an interval is the whole row at one time).

A merge function's column combines the key's rows that are newer than the stored
version of its group (of the row, for a column in no group): the batch combine reads
the stored versions for that, and the planner then combines the result with the stored
value under the group's guard. Identical rows are collapsed first where a ``sum`` would
add them twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import column_list, quote_identifier, require_columns
from dbt.adapters.jammi.mutable_table.redelivery import collapsed_batch_sql
from dbt.adapters.jammi.mutable_table.rules.version_sql import (
    stored_scope_sql,
    version_parts,
    version_sql,
)

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("version_groups",)

# The combined batch's flag: the key was deleted in the batch and rows followed the
# delete (read by change_set.sql's mutable_stamped_batch_sql).
RESTARTED = "_jammi_restarted"

_UNORDERED = ("map<", "array<", "struct<", "variant", "binary")
_EXACT_JSON = (
    "map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX', "
    "'timestampNTZFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS')"
)


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``version_groups`` as ``((version, (columns...)), ...)``."""
    value = opts.get("version_groups")
    if value is None or value == {}:
        return {"version_groups": ()}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value):
        raise JammiValidationError(
            subject,
            f"'version_groups' must map a version column to its columns, got {value!r}",
            "write version_groups: {shipped_version: [carrier, shipped_at]}",
        )
    names = draft.column_names
    types = {c.name: c.type.lower() for c in draft.columns}
    roles = {k: "a key column" for k in draft.primary_key}
    roles.update({v: "a version_column column" for v in draft.version_columns})
    if draft.tenant_from:
        roles[draft.tenant_from] = "the tenant_from column"
    owner: dict[str, str] = {}
    groups = []
    for version, columns in value.items():
        listed = column_list(columns, f"version_groups.{version}", subject)
        require_columns([version, *listed], names, "version_groups", subject)
        for column in (version, *listed):
            if column in roles:
                raise JammiValidationError(
                    subject,
                    f"version_groups names {column}, which is {roles[column]}: a group holds "
                    "value columns only (the columns in no group follow version_column)",
                    f"remove {column} from version_groups",
                )
            if column in owner:
                raise JammiValidationError(
                    subject,
                    f"column {column} is in two version groups ({owner[column]} and "
                    f"{version}): one version decides each column",
                    f"list {column} in one group only",
                )
            owner[column] = version
        if types[version].startswith(_UNORDERED):
            raise JammiValidationError(
                subject,
                f"version group version {version} is a {types[version]}, which does not order",
                f"version the group by a number, a timestamp or a string (cast {version})",
            )
        groups.append((version, tuple(dict.fromkeys(listed))))
    functions = opts.get("merge_functions") or {}
    versions = [v for v in value if isinstance(functions, Mapping) and v in functions]
    if versions:
        raise JammiValidationError(
            subject,
            f"merge_functions names {', '.join(versions)}, a group's version: a version "
            "orders the group's changes and is not combined",
            f"remove {', '.join(versions)} from merge_functions",
        )
    _refuse_combinations(opts, draft, owner, subject)
    return {"version_groups": tuple(groups)}


def _refuse_combinations(
    opts: Mapping[str, Any], draft: MutableTableDefinition, owner: Mapping[str, str], subject: str
) -> None:
    if draft.history == "scd2":
        raise JammiValidationError(
            subject,
            "'version_groups' cannot be combined with history: scd2: an interval is the "
            "whole row between two times, and a group's own version would change part of "
            "a row at a time of its own",
            "remove version_groups, or keep history: none",
        )
    if draft.version_column:
        return
    if opts.get("delete_when") or opts.get("truncate_when"):
        raise JammiValidationError(
            subject,
            "'version_groups' with delete_when or truncate_when needs a version_column: "
            "deletes follow version_column, and only a version orders a delete against "
            "the groups' changes",
            "set version_column (e.g. the change's commit time)",
        )
    rule_columns = opts.get("rule_columns") or ()
    engine = {
        opts.get("identity_column"),
        *([rule_columns] if isinstance(rule_columns, str) else rule_columns),
    }
    ungrouped = [c for c in draft.column_names if c not in draft.primary_key and c not in owner]
    ungrouped = [c for c in ungrouped if c not in engine and c != draft.tenant_from]
    if ungrouped:
        raise JammiValidationError(
            subject,
            f"without a version_column every value column must be in a version group; "
            f"{', '.join(ungrouped)} {'is' if len(ungrouped) == 1 else 'are'} in none",
            "add them to a group, or set version_column for the columns in no group",
        )


def groups_of(definition: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{version: [columns]}`` from a definition dict."""
    return {
        str(v): [str(c) for c in cols]
        for v, cols in dict(definition.get("version_groups") or {}).items()
    }


def group_of(definition: Mapping[str, Any]) -> dict[str, str]:
    """Each grouped column (a group's version included) and its group's version."""
    return {c: v for v, cols in groups_of(definition).items() for c in (v, *cols)}


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
    batch = _Batch.of(definition, batch_columns, tenant)
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


class _Batch:
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
    ) -> _Batch:
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


def ambiguous_rows_sql(definition: Mapping[str, Any], source: str, batch: _Batch) -> str:
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
    batch: _Batch,
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


def _ref(prefix: str, name: str, quote: bool) -> str:
    return prefix + (quote_identifier(name) if quote else name)


def _newer_sql(s: str, t: str) -> str:
    """A batch version ``s`` newer than the stored ``t`` (a NULL batch version never is;
    a stored NULL is older than any)."""
    return f"coalesce({s} > {t}, {s} is not null)"


def main_newer_sql(definition: Mapping[str, Any], s: str, t: str, quote: bool) -> str:
    """The row's ``version_column`` newer than the stored one (true without one), as
    version_rule.sql's mutable_version_newer."""
    parts = version_parts(definition)
    if not parts:
        return "true"

    def version(prefix: str) -> str:
        refs = [_ref(prefix, p, quote) for p in parts]
        if len(refs) == 1:
            return refs[0]
        return "named_struct(" + ", ".join(f"'v{i}', {r}" for i, r in enumerate(refs)) + ")"

    return f"coalesce({version(s)} > {version(t)}, true)"


def grouped_value(
    definition: Mapping[str, Any],
    column: str,
    new: str,
    s: str,
    t: str,
    quote: bool,
    restarted: str,
) -> str:
    """A value column's new value under the groups: ``new`` (the rule's value from the
    batch's ``s`` and the stored ``t`` row) when the column's group version is newer (its
    row's ``version_column``, for a column in no group), else the stored value; after a
    delete in the batch (``restarted``) the batch's own value."""
    version = group_of(definition).get(column)
    if version is None:
        guard = main_newer_sql(definition, s, t, quote)
    else:
        guard = _newer_sql(_ref(s, version, quote), _ref(t, version, quote))
    return (
        f"case when {restarted} then {_ref(s, column, quote)} when {guard} then {new} "
        f"else {_ref(t, column, quote)} end"
    )


def grouped_newer(
    definition: Mapping[str, Any], newer: str, is_delete: str, s: str, t: str, quote: bool
) -> str:
    """The planner's ``newer`` fact under the groups: a delete is newer by
    ``version_column`` alone (``newer``); any other row also when it carries a newer
    version of a group."""
    groups = [_newer_sql(_ref(s, v, quote), _ref(t, v, quote)) for v in groups_of(definition)]
    return f"(({newer}) or (not {is_delete} and ({' or '.join(groups)})))"
