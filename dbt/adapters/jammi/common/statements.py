"""One statement, its rows: what the Python-side protocols (commit claims, offset claims,
topic registration) run through the adapter's connection."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Optional

from dbt.adapters.base.meta import AdapterMeta
from dbt_common.exceptions import DbtRuntimeError

# Spark's optimizer infers filters from every alias of a constrained column; over the
# change set's projection (one CASE on the change kind per column) that inference grows
# combinatorially: a 3-row unique index check planned for 100 s and ran out of heap on
# Delta, 7 s without it. The statements that filter a change set are planned without it.
CONSTRAINT_PROPAGATION = "spark.sql.constraintPropagation.enabled"

# Where a connection's handle keeps its server's Spark version (``_spark_version``).
SPARK_VERSION_ATTR = "_jammi_spark_version"
# ... and its default catalog's name (``_default_catalog``).
DEFAULT_CATALOG_ATTR = "_jammi_default_catalog"
# The catalog Spark resolves ``schema.table`` in when spark.sql.defaultCatalog is unset.
DEFAULT_CATALOG = "spark_catalog"


def default_catalog_name(setting: Optional[str]) -> str:
    """``spark.sql.defaultCatalog`` as the session reports it: a plain identifier (it is
    spliced into ``SET`` and ``CALL`` statements), ``spark_catalog`` when unset."""
    name = "" if setting in (None, "<undefined>") else str(setting).strip()
    if not name:
        return DEFAULT_CATALOG
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise DbtRuntimeError(
            f"spark.sql.defaultCatalog is {name!r}: the adapter needs a catalog name of "
            "letters, digits and underscores. Fix: name the catalog that way in the "
            "profile's server_side_parameters (spark.sql.catalog.<name>)."
        )
    return name


class StatementsMixin(metaclass=AdapterMeta):
    """``_run_sql`` and ``_execute_trusted``, shared by the adapter's mixins."""

    def _run_query_without_constraint_propagation(self, sql: str) -> Any:
        """``sql``'s result (an agate table), planned with Spark's constraint propagation
        off; the session's own setting is put back afterwards, also when ``sql`` fails.
        Only the plan's shape changes, never its result."""
        execute = self.execute  # type: ignore[attr-defined]
        _, current = execute(f"set {CONSTRAINT_PROPAGATION}", fetch=True)
        before = str(current.rows[0][1]) if current.rows else "true"
        if before.strip().lower() == "false":
            return execute(sql, fetch=True)[1]
        execute(f"set {CONSTRAINT_PROPAGATION}=false")
        try:
            return execute(sql, fetch=True)[1]
        finally:
            execute(f"set {CONSTRAINT_PROPAGATION}={before}")

    def _execute_trusted(self, sql: str) -> Any:
        """``sql``'s result (an agate table). For statements the adapter generates
        itself: the tenant read guard trusts them (the connection manager's
        ``trusted_statements``)."""
        with self.connections.trusted_statements():  # type: ignore[attr-defined]
            _, table = self.execute(sql, fetch=True)  # type: ignore[attr-defined]
        return table

    def _run_sql(self, sql: str) -> Sequence[Sequence[Any]]:
        """Rows of a statement the adapter generates itself (``_execute_trusted``)."""
        return [tuple(row) for row in self._execute_trusted(sql).rows]

    def _has_local_filesystem(self) -> bool:
        """Whether the adapter reaches the session's file system (the embedded session);
        over a server it does not, and leaves directories to the user's storage tools."""
        return bool(getattr(self.config.credentials, "is_session", False))  # type: ignore[attr-defined]

    def _spark_version(self) -> str:
        """The server's Spark version (``select version()``, once per connection; the
        embedded session runs the installed PySpark's own Spark, so no statement)."""
        handle = self.connections.get_thread_connection().handle  # type: ignore[attr-defined]
        version = getattr(handle, SPARK_VERSION_ATTR, None)
        if version is None and self._has_local_filesystem():
            import pyspark

            version = str(pyspark.__version__)
            setattr(handle, SPARK_VERSION_ATTR, version)
        if version is None:
            rows = self._run_sql("select version()")
            version = str(rows[0][0]) if rows else ""
            setattr(handle, SPARK_VERSION_ATTR, version)
        return str(version)

    def _default_catalog(self) -> str:
        """The catalog dbt's ``schema.table`` names resolve in (``spark.sql.defaultCatalog``,
        once per connection): where Iceberg's procedures are called."""
        handle = self.connections.get_thread_connection().handle  # type: ignore[attr-defined]
        catalog = getattr(handle, DEFAULT_CATALOG_ATTR, None)
        if catalog is None:
            rows = self._run_sql("set spark.sql.defaultCatalog")
            catalog = default_catalog_name(rows[0][1] if rows else None)
            setattr(handle, DEFAULT_CATALOG_ATTR, catalog)
        return str(catalog)
