"""Config ``expire_snapshots``: on Iceberg, ``versions_kept`` also bounds what is stored.

Without it (the default) an Iceberg table's ``versions_kept`` bounds what
``mutable_table_history``, ``mutable_table_as_of`` and ``rollback_mutable_table`` offer,
and older snapshots stay readable to Spark (``VERSION AS OF``) until someone expires
them -- as a Delta table's versions stay until a VACUUM; the adapter never vacuums a
Delta table. With ``expire_snapshots: true`` a run (and a rollback) that leaves the
table with more snapshots than ``versions_kept`` ends by expiring the others with
Iceberg's procedure::

    CALL <catalog>.system.expire_snapshots(
      table => 'schema.table', older_than => TIMESTAMP '...', retain_last => <versions_kept>)

``retain_last`` keeps the newest ``versions_kept`` ancestors of the current snapshot,
exactly the versions the history offers. ``older_than`` (Iceberg's default: five days
ago, which would keep every recent snapshot) is a day past this client's clock, so that
``retain_last`` alone decides whatever the session's time zone or a server's clock skew.
Iceberg then deletes the files only expired snapshots referenced. An expired snapshot is
gone for every reader, not only for the adapter.

The catalog is the session's default one (``spark.sql.defaultCatalog``): dbt-spark names
a table ``schema.table``, which resolves there -- ``spark_catalog``, which Iceberg's
``SparkSessionCatalog`` replaces, or an Iceberg catalog service such as a REST catalog
(docs/formats.md). Its procedures (``CALL``) are Iceberg's SQL extensions
(``spark.sql.extensions``), which the table's write order statement needs too.

Refused, before any SQL runs, on a table whose format is not Iceberg: parquet/orc runs
already remove the versions beyond ``versions_kept``, and a Delta table's storage is
its VACUUM's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import require_bool, sql_string_literal
from dbt.adapters.jammi.mutable_table.run_errors import MutableRunError
from dbt.adapters.jammi.mutable_table.table_format import table_format

OPTION = "expire_snapshots"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
# older_than this far past the client's clock (module docstring)
CLOCK_MARGIN_MS = 24 * 3600 * 1000
# what Spark says when it cannot parse CALL or find Iceberg's procedure
_NO_PROCEDURES = ("PARSE_SYNTAX_ERROR", "Syntax error", "mismatched input", "NoSuchProcedure")


def validate_expire_snapshots(value: Any, subject: str) -> bool:
    """``expire_snapshots``: true or false (false when unset)."""
    if value is None:
        return False
    return require_bool(value, OPTION, subject)


def expiry_refusal(definition: Mapping[str, Any], file_format: str) -> Optional[tuple[str, str]]:
    """(problem, fix) when ``expire_snapshots`` is set on a table that is not Iceberg's."""
    stored_as = table_format(file_format)
    if not definition.get(OPTION) or stored_as.expires_snapshots:
        return None
    keeps = stored_as.storage_kept_by()
    return (
        f"expire_snapshots: true is set with file_format {file_format}; it expires "
        f"Iceberg snapshots, and {keeps}",
        "remove expire_snapshots, or use file_format iceberg",
    )


def snapshot_count_sql(relation: str) -> str:
    return f"select count(*) from {relation}.snapshots"


def expire_snapshots_sql(
    catalog: str, schema: str, identifier: str, versions_kept: int, now_ms: int
) -> str:
    """The procedure call that keeps the newest ``versions_kept`` snapshots of the table;
    ``catalog``: the session's default catalog, where ``schema.identifier`` resolves."""
    older_than = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((now_ms + CLOCK_MARGIN_MS) / 1000))
    return (
        f"call {catalog}.system.expire_snapshots("
        f"table => {sql_string_literal(f'{schema}.{identifier}')}, "
        f"older_than => timestamp {sql_string_literal(older_than)}, "
        f"retain_last => {max(1, int(versions_kept))})"
    )


def expiry_error(model_name: str, exc: Exception) -> Exception:
    """The error a failed procedure call raises: the missing extensions named with the
    fix, anything else as it came."""
    message = str(exc)
    if not any(marker in message for marker in _NO_PROCEDURES):
        return exc
    return MutableRunError(
        f"mutable_table '{model_name}': expire_snapshots: true, but the session cannot "
        f"call Iceberg's procedures ({message.splitlines()[0][:200]}). The run's batch is "
        "committed; no snapshot was expired.\n"
        f"  Fix: add spark.sql.extensions: {EXTENSIONS} to the session (docs/formats.md, "
        "Iceberg), or remove expire_snapshots"
    )
