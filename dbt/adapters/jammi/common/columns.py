"""A model's output columns as the definitions take them: (name, type) pairs, each name
valid and unique, each type in the model's type set (common/types.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import TYPE_SET_SPARK
from dbt.adapters.jammi.common.validation import validate_column_name, validate_column_type

SchemaInput = Union[Mapping[str, str], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str


def output_columns(
    schema: list[Any], subject: str, type_set: str = TYPE_SET_SPARK
) -> list[ColumnDef]:
    """The columns of ``schema`` (a list of (name, type) pairs), checked, each with the
    type it is stored as under ``type_set``."""
    if not schema:
        raise JammiValidationError(
            subject, "the model outputs no columns", "select at least one column"
        )
    columns = []
    seen: set[str] = set()
    for entry in schema:
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise JammiValidationError(
                subject,
                f"schema entry {entry!r} is not a (name, type) pair",
                "pass the schema as {'id': 'bigint', ...} or [('id', 'bigint'), ...]",
            )
        name, spark_type = entry
        validate_column_name(name, subject)
        if name.lower() in seen:
            raise JammiValidationError(
                subject,
                f"column '{name}' appears more than once in the output",
                "alias one of the duplicates",
            )
        seen.add(name.lower())
        columns.append(ColumnDef(name, validate_column_type(name, spark_type, subject, type_set)))
    return columns


def single_column(option: str, value: Any, subject: str) -> str:
    """``value`` as one column name for ``option``."""
    if not isinstance(value, str) or not value:
        raise JammiValidationError(
            subject,
            f"'{option}' must be one column name, got {value!r}",
            f"set {option} to a column name such as 'updated_at'",
        )
    return value


def schema_pairs(columns: Sequence[Any]) -> list[tuple[str, str]]:
    """``(name, type)`` of each column as dbt or a query's description gives it: a pair,
    a mapping with ``name`` and ``data_type``, or a column object."""
    pairs = []
    for column in columns:
        if isinstance(column, (tuple, list)):
            pairs.append((str(column[0]), str(column[1])))
        elif isinstance(column, Mapping):
            pairs.append((str(column["name"]), str(column["data_type"])))
        else:
            pairs.append((column.name, column.data_type))
    return pairs
