"""Profile fields: dbt-spark's credentials plus an optional tenant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.spark.connections import SparkConnectionMethod, SparkCredentials

from dbt.adapters.jammi.common.validation import validate_tenant_value

# Embedded-session defaults, each only where neither the profile nor Spark's launcher
# (spark-submit --conf, spark-defaults.conf) sets it. See docs/architecture.md.
#
# Launch settings: they configure the JVM/SparkContext and mean nothing to SQL.
LAUNCH_DEFAULTS = {
    "spark.ui.enabled": "false",
}
# Spark SQL settings: applied ONCE, when the adapter creates the local session, never
# through `server_side_parameters` (dbt-spark re-applies those before every statement,
# which would undo every `SET` from a dbt-spark macro or a user's hook). Nothing here may
# change what a query means except the session time zone, which is documented.
SESSION_SQL_DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
}
# dbt-spark 1.11's credentials write `spark.sql.ansi.enabled = false` into
# `server_side_parameters`, over the profile's own value, and its cursors re-apply it
# before every statement. dbt-jammi keeps the profile's value when it has one and
# otherwise leaves the setting to Spark (off on 3.5, on on 4.x) and to `SET`.
ANSI_MODE = "spark.sql.ansi.enabled"


@dataclass
class JammiCredentials(SparkCredentials):
    tenant: Optional[str] = None
    # Where the embedded session keeps its metastore and warehouse; relative paths
    # resolve against the dbt project directory. Default: <project>/.spark
    session_dir: Optional[str] = None

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        if data.get("method") == "session" and not data.get("host"):
            data["host"] = "localhost"
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

    @property
    def type(self) -> str:
        return "jammi"

    @property
    def unique_field(self) -> str:
        return self.host or "session"

    @property
    def is_session(self) -> bool:
        return self.method == SparkConnectionMethod.SESSION

    def _connection_keys(self) -> tuple[str, ...]:
        return (*super()._connection_keys(), "tenant", "session_dir")
