"""The thrift lane really runs over a Spark Thrift Server, not the embedded session.

Runs only with JAMMI_TEST_METHOD=thrift (`make thrift-lane` sets it and starts the
server from scripts/thrift_server.py); skipped everywhere else.
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import run_dbt

pytestmark = [
    pytest.mark.thrift,
    pytest.mark.skipif(
        os.environ.get("JAMMI_TEST_METHOD", "session") != "thrift",
        reason="needs JAMMI_TEST_METHOD=thrift",
    ),
]

ORDERS_SQL = """
select 1 as order_id, 'c' as op union all
select 2 as order_id, 'd' as op
"""


class TestThriftConnection:
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": "{{ config(materialized='table') }}" + ORDERS_SQL}

    def test_models_build_over_thrift(self, project):
        assert project.adapter.config.credentials.method == "thrift"
        # The app name the loopback server is started with: the SQL ran in that JVM.
        app_name = project.run_sql("set spark.app.name", fetch="one")[1]
        assert app_name == "jammi-thrift-server"

        results = run_dbt(["run"])
        assert [r.status for r in results] == ["success"]
        rows = project.run_sql(
            f"select op, count(*) from {project.test_schema}.orders group by op order by op",
            fetch="all",
        )
        assert [tuple(r) for r in rows] == [("c", 1), ("d", 1)]

    def test_statements_without_rows_fetch_empty(self, project):
        # Spark 3.4+ returns no columns for DDL/DML; PyHive alone raises on fetching them
        # (dbt/adapters/jammi/hive_compat.py). run_query() fetches every statement.
        table = f"{project.test_schema}.ddl_fetch"
        assert project.run_sql(f"create table {table} (id int) using parquet", fetch="all") == []
        assert project.run_sql(f"insert into {table} values (1)", fetch="all") == []
        assert project.run_sql(f"select id from {table}", fetch="all") == [(1,)]
