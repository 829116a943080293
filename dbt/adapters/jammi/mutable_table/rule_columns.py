"""Config ``rule_columns``: columns the model outputs for the rules that the table does
not store as values (docs/mutable_table.md#rule-columns).

``delete_when``, ``truncate_when`` and ``tenant_from`` read the batch only, so a column
listed here is read by them and never stored. A version column listed here is still
compared against on later runs, so the engine keeps it under a reserved name,
``_jammi_version_<name>`` (``stored_name``), which the run's batch carries beside the
model's columns (``aliased_source_sql``): every planner, check and applier then reads
the version by that name on both sides, as it reads any stored column.

Refused, naming the model: a key, index, ordering, identity, TTL, scd2 interval or
tracked column, a merge function's or a listed partial update's column in
``rule_columns`` (each is a stored value), and a name the model does not output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from dbt.adapters.jammi.common.columns import ColumnDef
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import column_list, quote_identifier, require_columns

if TYPE_CHECKING:
    from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# A version column kept by the engine: this prefix and the model's name for it.
VERSION_PREFIX = "_jammi_version_"


def validate_rule_columns(value: Any, names: Sequence[str], subject: str) -> tuple[str, ...]:
    """The listed columns (each an output column), or () when the config is unset."""
    if value is None:
        return ()
    listed = column_list(value, "rule_columns", subject, allow_empty=True)
    require_columns(listed, names, "rule_columns", subject)
    return tuple(dict.fromkeys(listed))


def refuse_stored_roles(
    rule_columns: Sequence[str], roles: Mapping[str, Sequence[str]], subject: str
) -> None:
    """Raise when a rule column also has a role that needs it stored: ``roles`` maps
    each option to the columns it names."""
    for option, columns in roles.items():
        clash = [c for c in columns if c in rule_columns]
        if clash:
            raise JammiValidationError(
                subject,
                f"rule_columns lists {', '.join(clash)}, which {option} names: that column "
                "is stored, and a rule column is not",
                f"remove {', '.join(clash)} from rule_columns (or from {option})",
            )


def stored_name(column: str) -> str:
    """The reserved column that keeps a version column listed in ``rule_columns``."""
    return f"{VERSION_PREFIX}{column}"


def stored_columns(
    columns: Sequence[ColumnDef], rule_columns: Sequence[str], version: Sequence[str]
) -> list[ColumnDef]:
    """The table's columns: the rule columns left out, a version among them kept under
    its reserved name (in its place)."""
    kept = []
    for column in columns:
        if column.name not in rule_columns:
            kept.append(column)
        elif column.name in version:
            kept.append(ColumnDef(stored_name(column.name), column.type))
    return kept


def stored_version(version: Sequence[str], rule_columns: Sequence[str]) -> list[str]:
    """The version columns by their stored names, in comparison order."""
    return [stored_name(c) if c in rule_columns else c for c in version]


def aliases(definition: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(model column, stored name) of each version column in ``rule_columns``."""
    listed = definition.get("rule_columns") or ()
    version = definition.get("version_column")
    parts = [version] if isinstance(version, str) else list(version or ())
    return [
        (str(p)[len(VERSION_PREFIX) :], str(p))
        for p in parts
        if str(p).startswith(VERSION_PREFIX) and str(p)[len(VERSION_PREFIX) :] in listed
    ]


def aliased_source_sql(definition: Mapping[str, Any], source: str) -> str:
    """The batch with each version column in ``rule_columns`` also under its stored name
    (the batch unchanged when there is none)."""
    pairs = aliases(definition)
    if not pairs:
        return source
    extra = ", ".join(f"{quote_identifier(m)} as {quote_identifier(s)}" for m, s in pairs)
    return f"(select *, {extra} from {source} as batch)"


def aliased_batch_columns(
    definition: Mapping[str, Any], batch_columns: Sequence[Sequence[str]]
) -> list[list[str]]:
    """The batch's (name, type) pairs with the stored names ``aliased_source_sql`` adds."""
    types = {str(n): str(t) for n, t in batch_columns}
    return [[str(n), str(t)] for n, t in batch_columns] + [
        [s, types[m]] for m, s in aliases(definition)
    ]


def without_rule_columns(
    definition: MutableTableDefinition, value: Any, names: Sequence[str], subject: str
) -> MutableTableDefinition:
    """The definition with ``rule_columns`` taken out of its stored columns: each is
    refused where another option needs it stored, and a version column among them is
    kept under its reserved name."""
    listed = validate_rule_columns(value, names, subject)
    if not listed:
        return definition
    partial = definition.partial_updates
    refuse_stored_roles(
        listed,
        {
            "primary_key": definition.primary_key,
            "indexes": [c for index in definition.indexes for c in index.columns],
            "ordering_column": [definition.ordering_column or ""],
            "identity_column": [definition.identity_column or ""],
            "ttl_column": [definition.ttl_column or ""],
            "merge_functions": [c for c, _ in definition.merge_functions],
            "partial_updates": partial if isinstance(partial, tuple) else (),
            "track_columns": definition.track_columns,
            "valid_from": [definition.valid_from] if definition.history == "scd2" else [],
            "version_groups": [c for v, cols in definition.version_groups for c in (v, *cols)],
        },
        subject,
    )
    version = stored_version(definition.version_columns, listed)
    return replace(
        definition,
        columns=tuple(stored_columns(definition.columns, listed, definition.version_columns)),
        version_column=(
            None
            if not version
            else version[0]
            if isinstance(definition.version_column, str)
            else tuple(version)
        ),
        rule_columns=listed,
    )
