"""A mutable table's secondary indexes (``indexes:``): the config's form and each index's
rules (a unique valid name, existing columns, a boolean ``unique``). Unique indexes are
checked by the change-set planner (macros/mutable_table/checks.sql)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import (
    column_list,
    require_bool,
    require_columns,
    validate_table_id,
)


@dataclass(frozen=True)
class MutableIndexDef:
    name: str
    columns: tuple[str, ...]
    unique: bool = False


def config_indexes(value: Any, subject: str) -> list[tuple[Any, Any, Any]]:
    """The ``(name, columns, unique)`` of each entry of an ``indexes`` config."""
    found: list[tuple[Any, Any, Any]] = []
    indexes = value or []
    if not isinstance(indexes, list):
        raise JammiValidationError(
            subject,
            f"'indexes' must be a list, got {indexes!r}",
            "write indexes: [{name: by_sku, columns: [sku], unique: true}]",
        )
    for index in indexes:
        if not isinstance(index, Mapping) or set(index) - {"name", "columns", "unique"}:
            raise JammiValidationError(
                subject,
                f"index {index!r} is not of the form {{name, columns, unique}}",
                "write each index as {name: by_sku, columns: [sku], unique: true}",
            )
        found.append((index.get("name"), index.get("columns"), index.get("unique", False)))
    return found


def build_indexes(
    raw: Sequence[tuple[Any, Any, Any]], names: list[str], subject: str
) -> tuple[MutableIndexDef, ...]:
    """The indexes, each checked against the columns ``names``."""
    indexes = []
    seen: set[str] = set()
    for raw_name, raw_columns, raw_unique in raw:
        if not isinstance(raw_name, str):
            raise JammiValidationError(
                subject,
                f"an index has no name (got {raw_name!r})",
                "give every index a name, e.g. {name: by_sku, columns: [sku]}",
            )
        label = f"index '{raw_name}'"
        try:
            validate_table_id(raw_name, subject)
        except JammiValidationError as exc:
            raise JammiValidationError(subject, f"{label}: {exc.problem}", exc.fix) from None
        if raw_name in seen:
            raise JammiValidationError(
                subject,
                f"{label} is defined more than once",
                "give every index a unique name",
            )
        seen.add(raw_name)
        columns = column_list(raw_columns, f"{label} columns", subject)
        require_columns(columns, names, label, subject)
        unique = require_bool(raw_unique, f"{label} unique", subject)
        indexes.append(MutableIndexDef(raw_name, tuple(columns), unique))
    return tuple(indexes)
