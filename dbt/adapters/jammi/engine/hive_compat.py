"""PyHive against a Spark 3.4+ Thrift Server: statements without rows fetch as empty.

Spark 3.4+ answers FetchResults for DDL/DML (CREATE, INSERT, ALTER, CACHE, DROP ...) with a
row set whose `columns` is None; PyHive 0.7 zips over it and raises
"TypeError: 'NoneType' object is not iterable". dbt-spark only fetches results of queries,
but `run_query()` fetches every statement, so the mutable_table and topic
materializations hit it on `method: thrift` / `http`. Known upstream: apache/kyuubi#7106
(PyHive fix in kyuubi's fork), dbt-labs/dbt-spark#885.

A failed statement can also be polled before its error is recorded: the server marks the
operation ERROR, then throws, and the runner of the asynchronous statement stores the
exception after that (Hive's operation classes, which Spark's Thrift server keeps). A
poll in between reads ERROR_STATE with no errorMessage, and dbt-spark raises "Query
failed with status: ERROR_STATE": the adapter cannot tell a table that does not exist yet
(a first run's registry read) from any other failure. Seen on Spark 4.1 over Thrift on a
loaded machine: a first run with `changelog: true` failed so.

The fix wraps the connection's Thrift client once, at open: a FetchResults response with
no columns is turned into an empty column list, which PyHive reads as "no rows"; an
operation status of ERROR_STATE without its message is asked again, a few times over
about three seconds, until the message is there.
"""

from __future__ import annotations

import time
from typing import Any

# TCLIService's TOperationState.ERROR_STATE (PyHive's TCLIService.ttypes)
ERROR_STATE = 5
# The pauses before asking again for a failed operation's message (3.15 s in all).
ERROR_MESSAGE_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


class _SparkThriftClient:
    """Delegates to PyHive's TCLIService client; normalises column-less row sets, and
    waits for a failed operation's error message."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._sleep = time.sleep

    def GetOperationStatus(self, req: Any) -> Any:  # noqa: N802 (Thrift method name)
        response = self._client.GetOperationStatus(req)
        for wait in ERROR_MESSAGE_WAITS:
            if response.operationState != ERROR_STATE or response.errorMessage:
                break
            self._sleep(wait)
            response = self._client.GetOperationStatus(req)
        return response

    def FetchResults(self, req: Any) -> Any:  # noqa: N802 (Thrift method name)
        response = self._client.FetchResults(req)
        results = getattr(response, "results", None)
        if results is not None and results.columns is None and not results.rows:
            results.columns = []
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def normalize_thrift_answers(handle: Any) -> None:
    """`handle`: dbt-spark's PyhiveConnectionWrapper (method thrift/http); else a no-op."""
    hive_connection: Any = getattr(handle, "handle", None)
    client = getattr(hive_connection, "_client", None)
    if client is None or isinstance(client, _SparkThriftClient):
        return
    if not hasattr(client, "FetchResults"):
        return
    hive_connection._client = _SparkThriftClient(client)
