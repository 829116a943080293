"""The session's table formats, as a service: whether the session has Delta Lake and
Iceberg (probed once per connection, kept on its handle), and the format a model's
``file_format`` resolves to there, or the profile's fix when the session lacks it."""

from __future__ import annotations

from typing import Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine.jar_releases import iceberg_packages_hint, packages_hint
from dbt.adapters.jammi.engine.session import (
    SessionCapabilities,
    cached_capabilities,
    remember_capabilities,
)
from dbt.adapters.jammi.mutable_table.definition import validate_file_format


class SessionFormats:
    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql

    def capabilities(self) -> SessionCapabilities:
        """Probe the session once per connection (cached on the connection handle)."""
        handle = self.sql.thread_connection().handle
        capabilities = cached_capabilities(handle)
        if capabilities is None:
            _, table = self.sql.execute("SET spark.sql.extensions", fetch=True)
            value = table.rows[0][1] if len(table.rows) else None
            catalog = self.sql.default_catalog()
            _, table = self.sql.execute(f"SET spark.sql.catalog.{catalog}", fetch=True)
            implementation = table.rows[0][1] if len(table.rows) else None
            capabilities = SessionCapabilities.from_extensions(value, implementation, catalog)
            remember_capabilities(handle, capabilities)
        return capabilities

    def delta_available(self) -> bool:
        return self.capabilities().delta

    def iceberg_available(self) -> bool:
        return self.capabilities().iceberg

    def resolve(self, requested: Optional[str], model_name: str) -> str:
        """``auto`` picks, in this order: delta when the session has Delta Lake active,
        iceberg when its session catalog is Iceberg's (and Delta is absent), else parquet."""
        requested = validate_file_format((requested or "auto").lower(), f"model '{model_name}'")
        if requested == "auto":
            if self.delta_available():
                return "delta"
            return "iceberg" if self.iceberg_available() else "parquet"
        if requested == "iceberg" and not self.iceberg_available():
            raise JammiValidationError(
                f"model '{model_name}'",
                "file_format 'iceberg' is configured but this Spark session's catalog is not "
                "Iceberg's",
                "add to the profile's server_side_parameters: spark.jars.packages: the "
                f"Iceberg runtime for your Spark ({iceberg_packages_hint()}), "
                "spark.sql.extensions: org.apache.iceberg.spark.extensions."
                "IcebergSparkSessionExtensions, spark.sql.catalog.spark_catalog: "
                "org.apache.iceberg.spark.SparkSessionCatalog, "
                "spark.sql.catalog.spark_catalog.type: hive (or an Iceberg catalog service "
                "as the session's spark.sql.defaultCatalog, docs/formats.md) -- or set "
                "file_format: auto",
            )
        if requested == "delta" and not self.delta_available():
            raise JammiValidationError(
                f"model '{model_name}'",
                "file_format 'delta' is configured but this Spark session has no Delta Lake",
                "install the extra (pip install 'dbt-jammi[delta]') and add to the profile's "
                "server_side_parameters: spark.jars.packages: the Delta release for your "
                f"Spark ({packages_hint()}), "
                "spark.sql.extensions: io.delta.sql.DeltaSparkSessionExtension, "
                "spark.sql.catalog.spark_catalog: org.apache.spark.sql.delta.catalog."
                "DeltaCatalog -- or set file_format: auto",
            )
        return requested
