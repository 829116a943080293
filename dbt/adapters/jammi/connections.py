"""Connection manager: dbt-spark's, with embedded-session defaults and a Java check."""

from __future__ import annotations

from typing import Any, ContextManager, Optional, cast

from dbt.adapters.contracts.connection import Connection, ConnectionState
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.connections import CONNECTION_LOST_EXCEPTIONS, SparkConnectionManager
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import refusal_message
from dbt.adapters.jammi.common.validation import validate_tenant_value
from dbt.adapters.jammi.credentials import JammiCredentials
from dbt.adapters.jammi.engine.hive_compat import normalize_thrift_answers
from dbt.adapters.jammi.engine.session import (
    apply_session_defaults,
    ensure_java,
    start_embedded_session,
)
from dbt.adapters.jammi.engine.spark_errors import quiet_query_context_logs
from dbt.adapters.jammi.tenancy.bound_statement import scoped_statement
from dbt.adapters.jammi.tenancy.guard import TenantGuard

logger = AdapterLogger("Jammi")

# What a lost Thrift/HTTP connection raises (dbt-spark types the tuple as bare types).
CONNECTION_LOST = cast(tuple[type[BaseException], ...], CONNECTION_LOST_EXCEPTIONS)


class JammiConnectionManager(SparkConnectionManager):
    TYPE = "jammi"

    def __init__(self, profile: Any, mp_context: Any) -> None:
        super().__init__(profile, mp_context)
        credentials = getattr(profile, "credentials", None)
        if isinstance(credentials, JammiCredentials):
            apply_session_defaults(credentials, getattr(profile, "project_root", None))
            quiet_query_context_logs()
        self.tenant_guard = TenantGuard(lambda: bound_tenant_of(profile))

    def add_query(
        self,
        sql: str,
        auto_begin: bool = True,
        bindings: Optional[Any] = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """dbt-spark's add_query, behind the tenant read guard in a bound run: the
        statement runs as it is, scoped by the adapter, or not at all."""
        sql = scoped_statement(self.tenant_guard, self.get_thread_connection(), sql, bindings)
        return super().add_query(sql, auto_begin, bindings, *args, **kwargs)

    def execute(
        self,
        sql: str,
        auto_begin: bool = False,
        fetch: bool = False,
        limit: Optional[int] = None,
    ) -> Any:
        """dbt's, except that a refusal the adapter raised inside the statement
        (common/errors.REFUSAL_MARKER) is shown as it is, without Spark's error and stack
        trace around it, whether the statement fails when it runs or when its rows are
        fetched (a session's query runs lazily)."""
        try:
            return super().execute(sql, auto_begin, fetch, limit)
        except Exception as exc:
            refusal = refusal_message(str(exc))
            if refusal is None:
                raise
            raise DbtRuntimeError(refusal) from exc

    def trusted_statements(self) -> ContextManager[None]:
        """Within it, this thread's statements are the adapter's own: the tenant read
        guard runs them unchecked."""
        return self.tenant_guard.trusted()

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        credentials = connection.credentials
        if isinstance(credentials, JammiCredentials) and credentials.is_connect:
            return cls._open_connect(connection, credentials)
        if isinstance(credentials, JammiCredentials) and credentials.is_session:
            ensure_java()
            start_embedded_session(credentials.server_side_parameters)
        connection = super().open(connection)
        if isinstance(credentials, JammiCredentials) and credentials.is_session:
            from dbt.adapters.jammi.engine.bindings import with_exact_bindings

            connection.handle = with_exact_bindings(connection.handle)
        # PyHive vs Spark 3.4+ Thrift Server (thrift/http): DDL/DML results fetch as empty,
        # and a failed statement keeps its message (engine/hive_compat.py).
        normalize_thrift_answers(connection.handle)
        return connection

    @classmethod
    def _open_connect(cls, connection: Connection, credentials: JammiCredentials) -> Connection:
        """``method: connect``: dbt-spark's session handle on the profile's remote
        SparkSession (engine/connect.py)."""
        if connection.state == ConnectionState.OPEN:
            return connection
        from dbt.adapters.jammi.engine.connect import open_connect_handle

        connection.handle = open_connect_handle(credentials)
        connection.state = ConnectionState.OPEN
        return connection

    @classmethod
    def _close_handle(cls, connection: Connection) -> None:
        """Close the handle; a connection whose server is gone is closed already.

        When a Thrift server dies under a statement, dbt releases the node's connection
        while the statement's error propagates, and PyHive's ``CloseSession`` over the
        dead socket raises ``TTransportException('unexpected exception')``. Raised from
        the release, that error replaced the statement's own ("Connection lost while
        polling query status ... TSocket read 0 bytes"): the run reported "unexpected
        exception" and nothing else. There is no session left to close on a lost
        connection, so the error is only logged."""
        try:
            super()._close_handle(connection)
        except CONNECTION_LOST as exc:
            logger.debug(f"connection '{connection.name}' was lost before its close: {exc!r}")


def bound_tenant_of(profile: Any) -> Optional[str]:
    """The tenant a run is bound to: var jammi_tenant (--vars, then dbt_project.yml's
    top-level vars), else the profile field ``tenant``; None when unbound."""
    cli_vars = getattr(profile, "cli_vars", None) or {}
    if "jammi_tenant" in cli_vars and cli_vars["jammi_tenant"] is not None:
        return validate_tenant_value(
            cli_vars["jammi_tenant"], "tenant binding (var 'jammi_tenant')"
        )
    project_vars = getattr(getattr(profile, "vars", None), "vars", None) or {}
    if project_vars.get("jammi_tenant") is not None:
        return validate_tenant_value(project_vars["jammi_tenant"], "var 'jammi_tenant'")
    tenant = getattr(getattr(profile, "credentials", None), "tenant", None)
    if tenant is None:
        return None
    return validate_tenant_value(tenant, "profile field 'tenant'")
