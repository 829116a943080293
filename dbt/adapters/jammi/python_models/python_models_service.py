"""The Python models' service: what the jammi materializations call for a model written
in Python (``adapter.python_model_batch_sql`` on the face, impl.py;
docs/python_models.md).

A Python model runs in two steps. Its program runs in this process on the embedded
session (model_program.py); the DataFrame it returns is checked by the tenant guard on
its analyzed plan (tenancy/bound_dataframe.py) and registered as a temporary view,
:func:`batch_view_name`. Then the materialization reads that view as it reads a SQL
model's output (:meth:`PythonModelsService.batch_sql`): ``table`` and ``incremental`` through
dbt-spark's SQL path, ``mutable_table`` and ``topic`` as their batch, with every rule and
check of a SQL model. dbt's own route for Python (``submit_python_job``, a job sent to a
Databricks cluster) is not taken.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from dbt.adapters.jammi.common.sql_session import SqlSession
from dbt.adapters.jammi.engine.connect import remote_session
from dbt.adapters.jammi.python_models.methods import check_python_method
from dbt.adapters.jammi.python_models.model_program import run_model_program
from dbt.adapters.jammi.tenancy.bound_dataframe import (
    TenantBoundSession,
    check_dataframe,
    scoped_read,
)


def batch_view_name(schema: str, identifier: str) -> str:
    """The temporary view a Python model's DataFrame is read through, one per model
    (the embedded session's temporary views are shared by dbt's threads)."""
    plain = re.sub(r"[^a-z0-9_]", "_", f"{schema}__{identifier}".lower())
    return f"jammi_python_batch__{plain}"


def _method_name(method: Any) -> str:
    return str(getattr(method, "value", method))


def _session(connection: Any) -> Any:
    """The SparkSession the model runs on: the remote one of a ``method: connect``
    handle, else the embedded session."""
    remote = remote_session(getattr(connection, "handle", None))
    if remote is not None:
        return remote
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


class PythonModelsService:
    """A Python model's program run, and its batch view kept for the node that made it
    (one per dbt thread)."""

    def __init__(self, sql: SqlSession) -> None:
        self.sql = sql
        # the batch view each of dbt's threads holds for the Python model it runs
        self.batches: dict[int, str] = {}

    def batch_sql(self, model: Mapping[str, Any], program: str) -> str:
        """Run ``model``'s program (its compiled code) and return the query that reads
        its DataFrame; the materialization reads it as a SQL model's output. Fails
        before any SQL on a connection method that does not run Python."""
        name = str(model["name"])
        check_python_method(_method_name(self.sql.credentials.method), name)
        connection = self.sql.thread_connection()
        guard = self.sql.tenant_guard
        session = _session(connection)

        def load_relation(relation: str) -> Any:
            return scoped_read(guard, connection, session, relation)

        model_session = session
        if guard.tenant is not None:
            model_session = TenantBoundSession(session, guard, connection)
        dataframe = run_model_program(program, model_session, load_relation, name)
        check_dataframe(guard, connection, dataframe)
        view = batch_view_name(str(model["schema"]), str(model["alias"]))
        dataframe.createOrReplaceTempView(view)
        self.batches[threading.get_ident()] = view
        return f"select * from {view}"

    def drop_batch(self) -> None:
        """Drop the batch view of the node this thread ran, if it ran a Python model
        (the adapter's post_model_hook: after the node, also when it failed)."""
        view = self.batches.pop(threading.get_ident(), None)
        if view is not None:
            _session(self.sql.thread_connection()).catalog.dropTempView(view)
