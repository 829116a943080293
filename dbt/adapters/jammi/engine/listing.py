"""Listing a schema's relations when other runs create and drop tables in it.

dbt-spark lists a schema with ``SHOW TABLE EXTENDED IN <schema> LIKE '*'``, which reads
every table's metadata. If a table is dropped between Spark listing the names and
reading that table (another run removing its staging table, say), the statement fails
with ``TABLE_OR_VIEW_NOT_FOUND``, and dbt-spark returns an empty list for the schema, as
if it held nothing. A mutable_table run that believed this would take its existing table
for a first run. Here the listing is repeated until it succeeds; only a schema that does
not exist lists as empty, and a listing that keeps failing is an error, never "empty".
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, TypeVar

from dbt.adapters.spark.impl import SCHEMA_NOT_FOUND_MESSAGES, TABLE_OR_VIEW_NOT_FOUND_MESSAGES
from dbt_common.exceptions import DbtRuntimeError

LISTING_ATTEMPTS = 5
# An Iceberg table of Iceberg's SparkSessionCatalog, as the Hive metastore lists it:
# "Provider: hive", with Iceberg's own table property.
_ICEBERG_IN_METASTORE = re.compile(r"\btable_type=ICEBERG\b", re.IGNORECASE)

T = TypeVar("T")


def list_relations_retrying_vanished(
    list_once: Callable[[], list[T]],
    dbt_spark_listing: Callable[[], list[T]],
    schema: str,
    attempts: int = LISTING_ATTEMPTS,
) -> list[T]:
    """``list_once()`` (one ``SHOW TABLE EXTENDED``), repeated while tables vanish under
    it; errors of other kinds go to ``dbt_spark_listing()`` with its engine fallbacks."""
    last = ""
    for _ in range(attempts):
        try:
            return list_once()
        except DbtRuntimeError as exc:
            message = getattr(exc, "msg", "") or str(exc)
            if any(m in message for m in SCHEMA_NOT_FOUND_MESSAGES):
                return []
            if not any(m in message for m in TABLE_OR_VIEW_NOT_FOUND_MESSAGES):
                return dbt_spark_listing()
            last = message
    raise DbtRuntimeError(
        f"could not list the relations of {schema}: tables kept disappearing while it was "
        f"listed ({attempts} attempts; last error: {last.splitlines()[0] if last else '?'}). "
        "Re-run; if it persists, look for a process dropping tables in that schema."
    )


def marked_iceberg(relation: Any) -> Any:
    """``relation`` with ``is_iceberg`` set when its listing says the table is Iceberg's.

    dbt-spark tells an Iceberg table by "Provider: iceberg" in ``SHOW TABLE EXTENDED``.
    Under Iceberg's SparkSessionCatalog that statement reads the Hive metastore's entry,
    which says "Provider: hive" and carries ``table_type=ICEBERG`` among its properties,
    so every Iceberg table listed as another format and dbt-spark's snapshot refused its
    own table on the second run (docs/formats.md, "Iceberg")."""
    information = getattr(relation, "information", None) or ""
    if getattr(relation, "is_iceberg", False) or not _ICEBERG_IN_METASTORE.search(information):
        return relation
    return dataclasses.replace(relation, is_iceberg=True)
