"""The process tests' reader on a Spark Connect server (JAMMI_CONNECT_URL, set by
`scripts/connect_server.py`): ThriftSql's interface (tests/process/harness.py) over a
remote SparkSession, so the Thrift races run unchanged over `method: connect`. Each
read opens a fresh remote session, as ThriftSql opens a fresh connection: a session
caches table metadata and would not see what other sessions committed since."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator


def connect_url() -> str:
    return os.environ.get("JAMMI_CONNECT_URL", "sc://127.0.0.1:15002")


class ConnectSql:
    def __init__(self, url: str) -> None:
        self.url = url

    @contextlib.contextmanager
    def session(self) -> Iterator:
        """One fresh remote session for reads that belong together: yields ``rows(sql)``."""
        from pyspark.sql.connect.session import SparkSession

        spark = SparkSession.builder.remote(self.url).create()

        def rows(sql: str, fetch: bool = True) -> list[tuple]:
            frame = spark.sql(sql)
            return [tuple(r) for r in frame.collect()] if fetch else []

        try:
            yield rows
        finally:
            with contextlib.suppress(Exception):
                spark.stop()

    def rows(self, sql: str) -> list[tuple]:
        with self.session() as rows:
            return rows(sql)

    def execute(self, sql: str) -> None:
        with self.session() as rows:
            rows(sql, fetch=False)

    def table_exists(self, schema: str, table: str) -> bool:
        return any(r[1] == table for r in self.rows(f"show tables in {schema} like '{table}'"))
