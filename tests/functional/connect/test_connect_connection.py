"""The connect lane really runs over a Spark Connect server, not the embedded session.

Runs only with JAMMI_TEST_METHOD=connect (`make connect-lane` sets it and starts the
server from scripts/connect_server.py); skipped everywhere else.
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt

# spark4_path: the Connect client is PySpark's own, and PySpark 4's is another
pytestmark = [
    pytest.mark.skipif(
        os.environ.get("JAMMI_TEST_METHOD", "session") != "connect",
        reason="needs JAMMI_TEST_METHOD=connect",
    ),
    pytest.mark.spark4_path,
]

ORDERS_SQL = """
{{ config(materialized='table') }}
select 1 as order_id, 'c' as op union all
select 2 as order_id, 'd' as op
"""

# pyspark.sql.functions builds Connect expressions only in Connect mode (engine/connect.py)
PY_COUNTS = """
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    kind = type(session).__module__
    counts = dbt.ref("orders").groupBy("op").agg(F.count("*").alias("n"))
    return counts.select("op", "n", F.lit(kind).alias("kind"))
"""


class TestConnectConnection:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS_SQL, "py_counts.py": PY_COUNTS}

    def test_sql_and_python_models_run_on_the_connect_server(self, project):
        assert project.adapter.config.credentials.method == "connect"
        # The app name the loopback server is started with: the SQL ran in that JVM.
        app_name = project.run_sql("set spark.app.name", fetch="one")[1]
        assert app_name == "jammi-connect-server"

        results = run_dbt(["run"])
        assert sorted(r.status for r in results) == ["success", "success"]
        rows = project.run_sql(
            f"select op, n, kind from {project.test_schema}.py_counts order by op", fetch="all"
        )
        # the model received Spark Connect's remote session
        kind = "pyspark.sql.connect.session"
        assert [tuple(r) for r in rows] == [("c", 1, kind), ("d", 1, kind)]
        # and no Spark of its own started in this process
        from pyspark import SparkContext

        assert SparkContext._active_spark_context is None
