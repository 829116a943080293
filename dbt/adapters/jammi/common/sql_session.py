"""The SQL interface the adapter's services are given: statements on the thread's
connection (a model's, which the tenant guard checks in a bound run, or the adapter's
own, which it trusts), and what a connection knows of its server (the Spark version,
the default catalog). The adapter builds one (impl.py) and hands it to each service
it composes; a test hands a service a fake with the same methods."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Callable, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.validation import sql_string_literal

# Spark's optimizer infers filters from every alias of a constrained column; over the
# change set's projection (one CASE on the change kind per column) that inference grows
# combinatorially: a 3-row unique index check planned for 100 s and ran out of heap on
# Delta, 7 s without it. The statements that filter a change set are planned without it.
CONSTRAINT_PROPAGATION = "spark.sql.constraintPropagation.enabled"

# Where a connection's handle keeps its server's Spark version (``spark_version``).
SPARK_VERSION_ATTR = "_jammi_spark_version"
# ... and its default catalog's name (``default_catalog``).
DEFAULT_CATALOG_ATTR = "_jammi_default_catalog"
# The catalog Spark resolves ``schema.table`` in when spark.sql.defaultCatalog is unset.
DEFAULT_CATALOG = "spark_catalog"

Execute = Callable[..., tuple[Any, Any]]


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


class SqlSession:
    """Statements on the thread's connection. ``execute`` is the adapter's own
    (dbt's ``BaseAdapter.execute``), ``connections`` its connection manager,
    ``credentials`` the profile's."""

    def __init__(self, execute: Execute, connections: Any, credentials: Any) -> None:
        self._execute = execute
        self.connections = connections
        self.credentials = credentials

    @property
    def tenant_guard(self) -> Any:
        """The run's tenant read guard (tenancy/guard.py), on the connection manager."""
        return self.connections.tenant_guard

    def thread_connection(self) -> Any:
        return self.connections.get_thread_connection()

    def running_node(self) -> Optional[str]:
        """The name of the connection of the node this thread runs, if it has one."""
        connection = self.connections.get_if_exists()
        return None if connection is None else connection.name

    def execute(self, sql: str, fetch: bool = False) -> tuple[Any, Any]:
        """``sql`` as a model's statement: the tenant guard checks it in a bound run."""
        return self._execute(sql, fetch=fetch)

    def trusted(self, sql: str) -> Any:
        """``sql``'s result (an agate table). For statements the adapter generates
        itself: the tenant read guard trusts them (the connection manager's
        ``trusted_statements``)."""
        with self.connections.trusted_statements():
            _, table = self._execute(sql, fetch=True)
        return table

    def rows(self, sql: str) -> Sequence[Sequence[Any]]:
        """Rows of a statement the adapter generates itself (``trusted``)."""
        return [tuple(row) for row in self.trusted(sql).rows]

    def table_listed(self, relation: str) -> bool:
        """Whether ``schema.identifier`` is listed in its schema (``show tables``)."""
        schema, _, identifier = relation.rpartition(".")
        literal = sql_string_literal(identifier)
        found = self.rows(f"show tables in {schema} like {literal}")
        return any(str(row[1]).lower() == identifier.lower() for row in found if len(row) > 1)

    def table_properties(self, relation: str) -> dict[str, str]:
        """A table's properties (``show tblproperties``)."""
        return {str(r[0]): str(r[1]) for r in self.rows(f"show tblproperties {relation}")}

    def without_constraint_propagation(self, sql: str) -> Any:
        """``sql``'s result (an agate table), planned with Spark's constraint propagation
        off; the session's own setting is put back afterwards, also when ``sql`` fails.
        Only the plan's shape changes, never its result."""
        _, current = self._execute(f"set {CONSTRAINT_PROPAGATION}", fetch=True)
        before = str(current.rows[0][1]) if current.rows else "true"
        if before.strip().lower() == "false":
            return self._execute(sql, fetch=True)[1]
        self._execute(f"set {CONSTRAINT_PROPAGATION}=false")
        try:
            return self._execute(sql, fetch=True)[1]
        finally:
            self._execute(f"set {CONSTRAINT_PROPAGATION}={before}")

    @property
    def local_filesystem(self) -> bool:
        """Whether the adapter reaches the session's file system (the embedded session);
        over a server it does not, and leaves directories to the user's storage tools."""
        return bool(getattr(self.credentials, "is_session", False))

    def spark_version(self) -> str:
        """The server's Spark version (``select version()``, once per connection; the
        embedded session runs the installed PySpark's own Spark, so no statement)."""
        handle = self.thread_connection().handle
        version = getattr(handle, SPARK_VERSION_ATTR, None)
        if version is None and self.local_filesystem:
            import pyspark

            version = str(pyspark.__version__)
            setattr(handle, SPARK_VERSION_ATTR, version)
        if version is None:
            rows = self.rows("select version()")
            version = str(rows[0][0]) if rows else ""
            setattr(handle, SPARK_VERSION_ATTR, version)
        return str(version)

    def default_catalog(self) -> str:
        """The catalog dbt's ``schema.table`` names resolve in (``spark.sql.defaultCatalog``,
        once per connection): where Iceberg's procedures are called."""
        handle = self.thread_connection().handle
        catalog = getattr(handle, DEFAULT_CATALOG_ATTR, None)
        if catalog is None:
            rows = self.rows("set spark.sql.defaultCatalog")
            catalog = default_catalog_name(rows[0][1] if rows else None)
            setattr(handle, DEFAULT_CATALOG_ATTR, catalog)
        return str(catalog)
