"""Which column types each role of a mutable table's definition accepts.

Value columns take any type of the model's type set (common/types.py). A column that
identifies, orders or versions rows must compare as a whole value: never an array, a
map or a struct. A version rule compares its columns in order (a list is compared as
Spark compares structs, field by field), so each must be orderable and exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional, Union

from dbt.adapters.jammi.common.columns import single_column
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import (
    INTEGER_TYPES,
    TYPE_SET_JAMMI,
    holds_variant,
    is_nested,
    is_version_type,
)
from dbt.adapters.jammi.common.validation import column_list, require_columns
from dbt.adapters.jammi.mutable_table.table_format import table_format

VersionColumn = Union[str, tuple[str, ...]]


def refuse_nested(
    columns: Sequence[str], types: Mapping[str, str], option: str, subject: str
) -> None:
    """A key, index or ordering column compares whole values: no nested types."""
    for column in columns:
        spark_type = types.get(column, "")
        if is_nested(spark_type):
            raise JammiValidationError(
                subject,
                f"{option} column '{column}' has the nested type {spark_type}; {option} "
                "columns are compared as whole values",
                f"use a scalar column for {option} (e.g. one field: {column}.field, or a "
                f"hash: sha2(to_json({column}), 256)), and keep '{column}' as a value column",
            )


def validate_version_column(
    value: Any,
    names: Sequence[str],
    types: Mapping[str, str],
    primary_key: Sequence[str],
    type_set: str,
    subject: str,
) -> Optional[VersionColumn]:
    """``version_column``: one column name, or a list compared in order (``['batch_at',
    'seq']``: a later batch_at wins, an equal one with a higher seq). Returns the name,
    or the tuple of names for a list of several."""
    if value is None:
        return None
    if isinstance(value, str) and value:
        columns = [value]
    elif isinstance(value, (list, tuple)) and value:
        columns = column_list(value, "version_column", subject)
    else:
        raise JammiValidationError(
            subject,
            f"'version_column' must be a column name or a list of them, got {value!r}",
            "set version_column: 'updated_at', or ['batch_at', 'seq'] to compare in order",
        )
    require_columns(columns, names, "version_column", subject)
    for column in columns:
        spark_type = types[column]
        if type_set == TYPE_SET_JAMMI and spark_type not in INTEGER_TYPES:
            raise JammiValidationError(
                subject,
                f"version_column '{column}' has type {spark_type}",
                "use an integer column (e.g. bigint epoch milliseconds or a counter); "
                "type_set: spark (the default) also takes dates, timestamps, decimals "
                "and strings",
            )
        if not is_version_type(spark_type):
            raise JammiValidationError(
                subject,
                f"version_column '{column}' has type {spark_type}, which a version rule "
                "cannot compare exactly",
                "use a whole number, decimal, date, timestamp or string column, or cast "
                f"it: cast({column} as bigint) as {column}",
            )
        if column in primary_key:
            raise JammiValidationError(
                subject,
                f"version_column '{column}' is part of the primary key",
                "choose a version column outside the primary key",
            )
    return columns[0] if len(columns) == 1 else tuple(columns)


def validate_tenant_from(
    value: Any,
    names: Sequence[str],
    types: Mapping[str, str],
    primary_key: Sequence[str],
    subject: str,
) -> Optional[str]:
    """``tenant_from``: the string column whose value becomes each row's tenant_id."""
    if value is None:
        return None
    tenant_from = single_column("tenant_from", value, subject)
    require_columns([tenant_from], names, "tenant_from", subject)
    if types[tenant_from] != "string":
        raise JammiValidationError(
            subject,
            f"tenant_from column '{tenant_from}' has type {types[tenant_from]}",
            f"cast it: cast(... as string) as {tenant_from}",
        )
    if tenant_from in primary_key:
        raise JammiValidationError(
            subject,
            f"tenant_from column '{tenant_from}' is part of the primary key; the "
            "tenant is already part of the effective key",
            f"remove '{tenant_from}' from primary_key",
        )
    return tenant_from


def version_columns(version_column: Optional[VersionColumn]) -> tuple[str, ...]:
    """The version rule's columns in comparison order (empty without a rule)."""
    if not version_column:
        return ()
    if isinstance(version_column, str):
        return (version_column,)
    return tuple(version_column)


# The formats that store Spark 4's variant: parquet (Spark's own writer) and Delta 4 (its
# variantType table feature, enabled by the table's first variant column).
VARIANT_FORMATS = ("parquet", "delta")


def variant_refusal(
    columns: Sequence[Sequence[str]], file_format: str
) -> Optional[tuple[str, str]]:
    """(problem, fix) when a variant column would be stored in a format that does not
    keep it (orc has no variant; Iceberg only in its format version 3), or None."""
    held = [str(c[0]) for c in columns if holds_variant(str(c[1]))]
    if not held or table_format(file_format).stores_variant:
        return None
    return (
        f"column '{held[0]}' holds a variant, which file_format {file_format} does not store",
        f"use file_format {' or '.join(VARIANT_FORMATS)}, or store its JSON text: "
        f"to_json({held[0]}) as {held[0]}",
    )
