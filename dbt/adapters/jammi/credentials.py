"""Profile fields: dbt-spark's credentials plus an optional tenant."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials
from dbt_common.dataclass_schema import StrEnum
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.connect_url import (
    DEFAULT_PORT,
    ConnectUrl,
    connect_url,
    is_url,
    url_port,
)
from dbt.adapters.jammi.common.validation import validate_tenant_value

# Embedded-session defaults, each only where neither the profile nor Spark's launcher
# (spark-submit --conf, spark-defaults.conf) sets it. See docs/architecture.md.
#
# Launch settings: they configure the JVM/SparkContext and mean nothing to SQL.
LAUNCH_DEFAULTS = {
    "spark.ui.enabled": "false",
}
# Parquet writes a date before 1582 or a timestamp before 1900 as it is (the proleptic
# Gregorian calendar Spark computes in) instead of failing the write: Spark 3.5's
# default, EXCEPTION, fails it with a stack trace (Spark 4 defaults to CORRECTED). A
# server needs the same settings in its own conf (docs/connecting.md).
PARQUET_REBASE_DEFAULTS = {
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
}
# Spark SQL settings: applied ONCE, when the adapter creates the local session, never
# through `server_side_parameters` (dbt-spark re-applies those before every statement,
# which would undo every `SET` from a dbt-spark macro or a user's hook). Nothing here may
# change what a query means except the session time zone, which is documented.
SESSION_SQL_DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    **PARQUET_REBASE_DEFAULTS,
}
# dbt-spark 1.11's credentials write `spark.sql.ansi.enabled = false` into
# `server_side_parameters`, over the profile's own value, and its cursors re-apply it
# before every statement. dbt-jammi keeps the profile's value when it has one and
# otherwise leaves the setting to Spark (off on 3.5, on on 4.x) and to `SET`.
ANSI_MODE = "spark.sql.ansi.enabled"


# The Python packages Spark Connect's client imports (the extra `dbt-jammi[connect]`).
CONNECT_PACKAGES = ("grpc", "grpc_status", "google.rpc", "pyarrow", "pandas")


class JammiConnectionMethod(StrEnum):
    """dbt-spark's methods, and ``connect``: a Spark Connect server (docs/connecting.md)."""

    THRIFT = "thrift"
    HTTP = "http"
    ODBC = "odbc"
    SESSION = "session"
    CONNECT = "connect"


@dataclass
class JammiCredentials(SparkCredentials):
    method: JammiConnectionMethod = None  # type: ignore[assignment]
    tenant: Optional[str] = None
    # Where the embedded session keeps its metastore and warehouse; relative paths
    # resolve against the dbt project directory. Default: <project>/.spark
    session_dir: Optional[str] = None

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        if data.get("method") == "session" and not data.get("host"):
            data["host"] = "localhost"
        if data.get("method") == "connect" and data.get("port") is None:
            # Spark Connect's port, not dbt-spark's 443: the URL's own, else 15002
            host = data.get("host")
            data["port"] = url_port(str(host)) if is_url(host) else DEFAULT_PORT
        return data

    def __post_init__(self) -> None:
        chosen = {str(k): str(v) for k, v in (self.server_side_parameters or {}).items()}
        super().__post_init__()
        if ANSI_MODE in chosen:
            self.server_side_parameters[ANSI_MODE] = chosen[ANSI_MODE]
        else:
            self.server_side_parameters.pop(ANSI_MODE, None)
        if self.tenant is not None:
            validate_tenant_value(self.tenant, "profile field 'tenant'")
        if self.is_connect:
            self.connect_url()  # a bad address fails here, naming its profile field
            missing = [p for p in CONNECT_PACKAGES if not _importable(p)]
            if missing:
                raise DbtRuntimeError(
                    "method: connect needs Spark Connect's client packages "
                    f"({', '.join(missing)} missing): pip install 'dbt-jammi[connect]'"
                )

    @property
    def type(self) -> str:
        return "jammi"

    @property
    def unique_field(self) -> str:
        return self.host or "session"

    @property
    def is_session(self) -> bool:
        """The embedded session: Spark's JVM and file system in this process."""
        return self.method == SparkConnectionMethod.SESSION

    @property
    def is_connect(self) -> bool:
        """A Spark Connect server: a remote SparkSession, SQL and plans as text."""
        return self.method == JammiConnectionMethod.CONNECT

    def connect_url(self) -> ConnectUrl:
        return connect_url(self.host, self.port, self.token, self.use_ssl, self.user)

    def _connection_keys(self) -> tuple[str, ...]:
        """What `dbt debug` shows (never the token)."""
        return (*super()._connection_keys(), "tenant", "session_dir")


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
