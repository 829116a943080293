"""Config ``merge_functions``: how a change combines with a key's stored value, per column.

Validated here, rendered by the change-set planner (``change_set.sql``). The re-run rule:
``sum`` is the one function a repeated batch would change (it would add the increments
twice), so a table with a ``sum`` column needs ``version_column``; rows at or below the
key's stored version are then ignored and re-running a batch is a no-op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import is_nested, is_numeric
from dbt.adapters.jammi.mutable_table.column_types import VersionColumn, version_columns

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# The definition options this rule owns (registered in rules/registry.py).
OPTIONS = ("merge_functions",)

MERGE_FUNCTIONS = ("sum", "min", "max", "last_non_null", "first")


def combines_in_batch(definition: Mapping[str, Any]) -> bool:
    """Whether the history-none planner combines a key's batch rows newer than its
    stored version among themselves first, and reads the stored rows apart from its key
    decisions (``change_set.sql``'s joined shape): merge functions under a version rule,
    without hard deletes. Under ``version_groups`` the batch is already one row per key,
    combined by the groups' own versions (rules/version_groups.py)."""
    return (
        bool(definition.get("merge_functions"))
        and not definition.get("version_groups")
        and bool(definition.get("version_column"))
        and definition.get("hard_deletes") != "delete"
    )


def definition_fields(
    opts: Mapping[str, Any], draft: MutableTableDefinition, subject: str
) -> dict[str, Any]:
    """The definition's ``merge_functions``, validated against its columns and key."""
    return {
        "merge_functions": validate_merge_functions(
            opts.get("merge_functions"),
            subject,
            {c.name: c.type for c in draft.columns},
            list(draft.primary_key),
            draft.version_column,
            draft.tenant_from,
            draft.history,
        )
    }


def validate_merge_functions(
    value: Any,
    subject: str,
    types: Mapping[str, str],
    primary_key: Sequence[str],
    version_column: Optional[VersionColumn],
    tenant_from: Optional[str],
    history: str,
) -> tuple[tuple[str, str], ...]:
    """The ``(column, function)`` pairs of a ``merge_functions`` config, in column order."""
    if value is None or value == {}:
        return ()
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise JammiValidationError(
            subject,
            f"'merge_functions' must map column names to functions, got {value!r}",
            "write merge_functions: {clicks: sum, first_seen: min, last_seen: max}",
        )
    if history != "none":
        raise JammiValidationError(
            subject,
            "merge_functions is set with history: scd2; every scd2 interval holds the "
            "values of one change, so there is no stored value to combine with",
            "remove merge_functions, or keep history: none",
        )
    for column, function in value.items():
        if column not in types:
            raise JammiValidationError(
                subject,
                f"merge_functions column '{column}' is not in the model's output "
                f"(columns: {', '.join(types)})",
                f"add '{column}' to the model's select list or fix merge_functions",
            )
        if function not in MERGE_FUNCTIONS:
            raise JammiValidationError(
                subject,
                f"merge_functions gives column '{column}' the function {function!r}",
                f"use one of: {', '.join(MERGE_FUNCTIONS)}",
            )
        role = _engine_role(column, primary_key, version_column, tenant_from)
        if role:
            raise JammiValidationError(
                subject,
                f"merge_functions names '{column}', which is the {role}; its value "
                "identifies or orders a change and is never combined",
                f"remove '{column}' from merge_functions",
            )
        if function == "sum" and not is_numeric(types[column]):
            raise JammiValidationError(
                subject,
                f"merge_functions sums column '{column}' of type {types[column]}",
                f"sum a numeric column, or cast it: cast({column} as bigint) as {column}",
            )
        if function in ("min", "max") and (types[column] == "binary" or is_nested(types[column])):
            raise JammiValidationError(
                subject,
                f"merge_functions takes the {function} of {types[column]} column '{column}'",
                f"use first or last_non_null for {types[column].split('<')[0]} columns",
            )
    if version_column is None and "sum" in value.values():
        summed = next(c for c, f in value.items() if f == "sum")
        raise JammiValidationError(
            subject,
            f"merge_functions sums '{summed}' but no version_column is set: re-running a "
            "batch would add its values a second time",
            "set version_column (e.g. the event time in epoch milliseconds, or a topic "
            "event's offset); rows at or below a key's stored version are then ignored",
        )
    return tuple((c, value[c]) for c in types if c in value)


def _engine_role(
    column: str,
    primary_key: Sequence[str],
    version_column: Optional[VersionColumn],
    tenant_from: Optional[str],
) -> Optional[str]:
    if column in primary_key:
        return "primary key"
    if column in version_columns(version_column):
        return "version_column"
    if column == tenant_from:
        return "tenant_from column"
    return None
