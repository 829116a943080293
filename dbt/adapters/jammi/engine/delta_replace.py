"""Replacing an existing Delta table from a query, on stacks where Spark's
replace-as-select cannot write into Delta.

dbt-spark rebuilds an existing delta table (a `table` model re-run, an incremental
``--full-refresh``) with ``create or replace table ... using delta as select``. From
Spark 3.5.6 on (SPARK-51936) a replace-as-select overwrites the staged table, which Delta
Lake before 3.3.2 does not declare (delta-io/delta#4671: "Table ... does not support
truncate in batch mode"): every such rebuild fails. Spark 4 with Delta 4 is not affected.

On an affected stack the adapter rebuilds in one of two ways (``replace_mode``):

- ``overwrite`` -- the query's columns (names, types, order) and the partition columns
  equal the table's: ``insert overwrite table``. One Delta commit: readers see the old
  rows or the new rows, a crash leaves the old version.
- ``replace`` -- anything else changed: ``replace table <t> (<columns>) using delta ...``
  (no query, so no staged write) and then ``insert into``. Two Delta commits: between them
  the table is empty; after a crash there the rows are still in the previous version
  (``restore table <t> to version as of <n>``) and the next run rebuilds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier

OVERWRITE = "overwrite"
REPLACE = "replace"
# a stack that is not affected: dbt-spark's replace-as-select applies
REPLACE_AS_SELECT = "replace_as_select"

_VERSION = re.compile(r"^\s*(\d+)\.(\d+)\.(\d+)")


def replace_as_select_unsupported(spark_version: Optional[str]) -> bool:
    """True for Spark 3.5.6 and later 3.x, where a Delta replace-as-select fails unless
    Delta is 3.3.2 or newer (which SQL cannot tell): the adapter then avoids it."""
    match = _VERSION.match(spark_version or "")
    if not match:
        return False
    major, minor, patch = (int(part) for part in match.groups())
    return major == 3 and (minor, patch) >= (5, 6)


def partition_columns(value: Any) -> list[str]:
    """``DESCRIBE DETAIL``'s ``partitionColumns``: a list on the embedded session, a JSON
    array string over Thrift."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        parsed = json.loads(text) if text.startswith("[") else [text]
        return [str(name) for name in parsed]
    return [str(name) for name in value]


def wanted_partition_columns(partition_by: Any) -> list[str]:
    """The model's ``partition_by`` config as a list of column names."""
    if partition_by is None:
        return []
    if isinstance(partition_by, str):
        return [partition_by]
    return [str(name) for name in partition_by]


def _normalized(columns: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    return [(str(name).lower(), re.sub(r"\s+", "", str(dtype)).lower()) for name, dtype in columns]


def replace_mode(
    query_columns: Sequence[Sequence[str]],
    table_columns: Sequence[Sequence[str]],
    wanted_partitions: Sequence[str],
    table_partitions: Sequence[str],
) -> str:
    """``overwrite`` when the rebuild keeps the table's columns and partitioning (one
    atomic commit), else ``replace`` (see the module docstring)."""
    same_columns = _normalized(query_columns) == _normalized(table_columns)
    same_partitions = [p.lower() for p in wanted_partitions] == [
        p.lower() for p in table_partitions
    ]
    return OVERWRITE if same_columns and same_partitions else REPLACE


def contract_ordered(
    columns: Sequence[Sequence[str]], contract_columns: Optional[Sequence[str]]
) -> list[list[str]]:
    """The model's output ``columns`` as its enforced contract's subquery selects them:
    the contract's columns, in its order (names matched case-insensitively). Unchanged
    without a contract, or when the output lacks one of its columns (the contract's own
    check then fails the model, naming the difference)."""
    if not contract_columns:
        return [list(column) for column in columns]
    by_name = {str(name).lower(): [str(name), str(dtype)] for name, dtype in columns}
    wanted = [str(name).lower() for name in contract_columns]
    if any(name not in by_name for name in wanted):
        return [list(column) for column in columns]
    return [by_name[name] for name in wanted]


def column_list_sql(columns: Sequence[Sequence[str]]) -> str:
    """``(`a` bigint, `b` string)`` for ``replace table``, from ``DESCRIBE QUERY`` pairs."""
    return "(" + ", ".join(f"{quote_identifier(name)} {dtype}" for name, dtype in columns) + ")"


def table_columns(rows: Sequence[Sequence[Any]]) -> list[list[str]]:
    """(name, type) of ``DESCRIBE TABLE`` rows: the columns before the first blank or
    ``#`` row (the partition section after it repeats partition columns)."""
    columns = []
    for row in rows:
        if len(row) < 2 or not row[0] or str(row[0]).strip().startswith("#"):
            break
        columns.append([str(row[0]), str(row[1])])
    return columns
