"""Config ``version_groups``: ``{version column: [columns]}``, each group of value
columns ordered by its own version (docs/mutable_table.md#version-groups).

Several writers of one wide row, each sending its own columns and its own version:
a group's columns change only when the row's value of the group's version is newer than
the stored one, whatever order the batches arrive in, and a row whose group version is
NULL leaves the group as it is. The columns in no group follow ``version_column``, and
so do deletes (a delete needs a version to be ordered against: without
``version_column`` there are no deletes, and every value column is in a group).

A run applies the rule in two places:

- **The batch** (rules/version_group_batch.py) becomes one row per key before any
  planner sees it: each group's columns from the key's row with the newest group
  version, the other columns from the row with the newest ``version_column``. A delete
  that is newer than the stored version ends the key: the key's rows before it are
  dropped, and when rows follow it the combined row is flagged (the key starts afresh:
  no stored value is kept). Two rows of a key at the same newest version of one part
  that differ in that part's columns are refused before anything is written; identical
  ones are one change.
- **The planner** (``grouped_value``, ``grouped_newer``; through ``PlannerRules``):
  each value's new value is guarded by its group's version (the columns in no group by
  the row's), and a row that is not newer by ``version_column`` still updates the
  groups it carries newer versions of. Tombstones compare ``version_column``, as
  deletes do.

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

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import column_list, quote_identifier, require_columns
from dbt.adapters.jammi.mutable_table.rules.version_sql import (
    version_parts,
)

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("version_groups",)

_UNORDERED = ("map<", "array<", "struct<", "variant", "binary")


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
