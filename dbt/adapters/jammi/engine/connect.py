"""``method: connect``: a Spark Connect server through a remote SparkSession.

The handle is dbt-spark's own session handle (``SessionConnectionWrapper`` over its
pyodbc-like ``Connection`` and ``Cursor``, with the adapter's exact bindings,
engine/bindings.py); only the cursor's SparkSession differs: the remote one of the
profile's URL instead of the embedded one. One remote session per URL and process, so
every dbt thread, the tenant guard and a Python model's DataFrame see the same
temporary views (a Python model's batch is one). Spark's plan objects are not in reach
over Connect (no py4j gateway): the guard reads printed plans, as over Thrift
(tenancy/plan_text.py).

Before the session is made, the server is asked for a gRPC channel within the
profile's ``connect_timeout``: Spark Connect's client would otherwise retry an
unreachable address for minutes before its first statement fails.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Optional

from dbt.adapters.spark.session import Connection as SessionConnection
from dbt.adapters.spark.session import Cursor as SessionCursor
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.connect_url import ConnectUrl
from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.engine.bindings import JammiSessionConnectionWrapper

_SESSIONS: dict[str, Any] = {}
_SESSIONS_LOCK = threading.Lock()


class RemoteCursor(SessionCursor):
    """dbt-spark's session cursor on a given (remote) SparkSession."""

    def __init__(self, spark: Any) -> None:
        super().__init__()
        self._spark = spark

    def execute(self, sql: str, *parameters: Any) -> None:
        from pyspark.errors import AnalysisException

        if parameters:
            sql = sql % parameters
        try:
            self._df = self._spark.sql(sql)
        except AnalysisException as exc:
            raise DbtRuntimeError(str(exc)) from exc


class RemoteConnection(SessionConnection):
    def __init__(self, spark: Any) -> None:
        super().__init__()
        self.spark = spark

    def cursor(self) -> RemoteCursor:
        return RemoteCursor(self.spark)


def open_connect_handle(credentials: JammiCredentials) -> JammiSessionConnectionWrapper:
    """The connection handle of a ``method: connect`` profile."""
    return JammiSessionConnectionWrapper(RemoteConnection(connect_session(credentials)))


def remote_session(handle: Any) -> Optional[Any]:
    """The remote SparkSession behind a ``method: connect`` handle, else None."""
    connection = getattr(handle, "handle", None)
    return connection.spark if isinstance(connection, RemoteConnection) else None


def connect_session(credentials: JammiCredentials) -> Any:
    """The process's remote SparkSession for the profile's URL, made on first use with
    the profile's ``server_side_parameters`` set once on it."""
    url = credentials.connect_url()
    key = url.render()
    with _SESSIONS_LOCK:
        spark = _SESSIONS.get(key)
        if spark is None:
            wait_for_server(url, float(credentials.connect_timeout or 10))
            from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

            # What `SparkSession.builder.remote(url).getOrCreate()` sets: PySpark's
            # functions (pyspark.sql.functions, Column, Window) build Connect
            # expressions in this process instead of asking for a local SparkContext.
            os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
            spark = RemoteSparkSession.builder.remote(key).create()
            _apply_parameters(spark, credentials.server_side_parameters, url)
            _SESSIONS[key] = spark
        return spark


def wait_for_server(url: ConnectUrl, timeout: float) -> None:
    """A DbtRuntimeError naming the profile's ``host`` unless the server at ``url``
    accepts a gRPC channel within ``timeout`` seconds."""
    import grpc
    from pyspark.sql.connect.client import core

    # PySpark 4 parses URLs in DefaultChannelBuilder; 3.5's ChannelBuilder takes the URL
    builder: Any = getattr(core, "DefaultChannelBuilder", core.ChannelBuilder)
    try:
        channel = builder(url.render()).toChannel()
    except Exception as exc:
        raise _unreachable(url, f"{type(exc).__name__}: {exc}") from exc
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        raise _unreachable(url, f"no answer within {timeout:.0f}s (connect_timeout)") from None
    finally:
        channel.close()


def _unreachable(url: ConnectUrl, why: str) -> DbtRuntimeError:
    return DbtRuntimeError(
        f"method: connect cannot reach a Spark Connect server at {url.redacted()} "
        f"(profile fields 'host' and 'port'): {why}. Check that the server runs "
        "(sbin/start-connect-server.sh, docs/connecting.md) and that host, port and "
        "use_ssl/token match it."
    )


def _apply_parameters(spark: Any, parameters: dict[str, str], url: ConnectUrl) -> None:
    for key, value in parameters.items():
        try:
            spark.conf.set(key, value)
        except Exception as exc:
            raise DbtRuntimeError(
                f"method: connect ({url.redacted()}): the server refused "
                f"server_side_parameters '{key}': {exc}"
            ) from exc
