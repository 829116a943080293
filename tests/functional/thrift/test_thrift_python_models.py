"""A Python model over a Spark Thrift Server (issue 37): refused before any SQL of its
own runs, with a message naming the methods that run Python (session, connect); the
SQL models of the same run build. Runs only with JAMMI_TEST_METHOD=thrift (`make thrift-lane`)."""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests.functional.mutable_table.util import table_exists

pytestmark = [
    pytest.mark.thrift,
    pytest.mark.skipif(
        os.environ.get("JAMMI_TEST_METHOD", "session") != "thrift",
        reason="needs JAMMI_TEST_METHOD=thrift",
    ),
]

PY_ORDERS = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.ref("orders")
"""


class TestPythonModelsOverThrift:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": "{{ config(materialized='table') }} select 1 as order_id",
            "py_orders.py": PY_ORDERS,
        }

    def test_python_models_stop_before_any_sql(self, project):
        results, log = run_dbt_and_capture(["--debug", "run"], expect_pass=False)
        status = {r.node.name: r for r in results.results}
        assert status["orders"].status == "success"
        refused = status["py_orders"]
        assert refused.status == "error"
        assert "connection method 'thrift' cannot run Python models" in refused.message
        assert "method: session" in refused.message
        assert "method: connect" in refused.message
        # statements are logged per node's connection: the SQL model's are, and none ran
        # on the Python model's
        assert "On model.test.orders: " in log
        assert "On model.test.py_orders: " not in log
        assert not table_exists(project, "py_orders")
