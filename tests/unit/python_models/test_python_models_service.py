"""The Python models' face toward Jinja: a Python model over a SQL-only connection
method fails before the adapter touches a connection or a Spark session."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.python_models.python_models_service import (
    PythonModelsService,
    batch_view_name,
)


class RemoteSql:
    """The service's SQL interface over a SQL-only method: anything but the profile's
    credentials fails the test."""

    def __init__(self, method):
        self.credentials = SimpleNamespace(method=method)

    def __getattr__(self, name):
        raise AssertionError(f"the connection was used ({name}) before the method check")


def RemoteAdapter(method):  # noqa: N802 - the service over a connection it must not touch
    return PythonModelsService(RemoteSql(method))


@pytest.mark.parametrize("method", ["thrift", "http", "odbc"])
def test_a_python_model_over_sql_only_methods_stops_before_any_sql(method):
    model = {"name": "orders", "schema": "analytics", "alias": "orders"}
    with pytest.raises(JammiValidationError, match="method: session"):
        RemoteAdapter(method).batch_sql(model, "def model(dbt, session): ...")


def test_batch_views_are_one_per_model_and_plain_identifiers():
    assert batch_view_name("analytics", "orders") == "jammi_python_batch__analytics__orders"
    assert batch_view_name("Sales-EU", "Orders") == "jammi_python_batch__sales_eu__orders"


def test_after_a_node_without_a_python_batch_no_spark_session_is_asked_for(monkeypatch):
    def no_session():
        raise AssertionError("a Spark session was asked for after a SQL model")

    monkeypatch.setattr(
        "dbt.adapters.jammi.python_models.python_models_service._session", no_session
    )
    RemoteAdapter("thrift").drop_batch()  # post_model_hook of every node
