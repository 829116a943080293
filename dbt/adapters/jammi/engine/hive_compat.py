"""PyHive against a Spark 3.4+ Thrift Server: statements without rows fetch as empty.

Spark 3.4+ answers FetchResults for DDL/DML (CREATE, INSERT, ALTER, CACHE, DROP ...) with a
row set whose `columns` is None; PyHive 0.7 zips over it and raises
"TypeError: 'NoneType' object is not iterable". dbt-spark only fetches results of queries,
but `run_query()` fetches every statement, so the mutable_table and topic
materializations hit it on `method: thrift` / `http`. Known upstream: apache/kyuubi#7106
(PyHive fix in kyuubi's fork), dbt-labs/dbt-spark#885.

The fix wraps the connection's Thrift client once, at open: a FetchResults response with
no columns is turned into an empty column list, which PyHive reads as "no rows".
"""

from __future__ import annotations

from typing import Any


class _EmptyResultSafeClient:
    """Delegates to PyHive's TCLIService client; normalises column-less row sets."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def FetchResults(self, req: Any) -> Any:  # noqa: N802 (Thrift method name)
        response = self._client.FetchResults(req)
        results = getattr(response, "results", None)
        if results is not None and results.columns is None and not results.rows:
            results.columns = []
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def make_empty_results_safe(handle: Any) -> None:
    """`handle`: dbt-spark's PyhiveConnectionWrapper (method thrift/http); else a no-op."""
    hive_connection: Any = getattr(handle, "handle", None)
    client = getattr(hive_connection, "_client", None)
    if client is None or isinstance(client, _EmptyResultSafeClient):
        return
    if not hasattr(client, "FetchResults"):
        return
    hive_connection._client = _EmptyResultSafeClient(client)
