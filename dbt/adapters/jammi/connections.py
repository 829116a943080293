"""Connection manager: dbt-spark's, with embedded-session defaults and a Java check."""

from __future__ import annotations

from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark.connections import SparkConnectionManager

from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.hive_compat import make_empty_results_safe
from dbt.adapters.jammi.session import (
    apply_session_defaults,
    ensure_java,
    start_embedded_session,
)


class JammiConnectionManager(SparkConnectionManager):
    TYPE = "jammi"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        credentials = getattr(profile, "credentials", None)
        if isinstance(credentials, JammiCredentials):
            apply_session_defaults(credentials, getattr(profile, "project_root", None))

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        credentials = connection.credentials
        if isinstance(credentials, JammiCredentials) and credentials.is_session:
            ensure_java()
            start_embedded_session(credentials.server_side_parameters)
        connection = super().open(connection)
        if isinstance(credentials, JammiCredentials) and credentials.is_session:
            from dbt.adapters.jammi.session_bindings import with_exact_bindings

            connection.handle = with_exact_bindings(connection.handle)
        # PyHive vs Spark 3.4+ Thrift Server: DDL/DML results fetch as empty (thrift/http).
        make_empty_results_safe(connection.handle)
        return connection
