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
        # (dbt/adapters/jammi/engine/hive_compat.py). run_query() fetches every statement.
        table = f"{project.test_schema}.ddl_fetch"
        assert project.run_sql(f"create table {table} (id int) using parquet", fetch="all") == []
        assert project.run_sql(f"insert into {table} values (1)", fetch="all") == []
        assert project.run_sql(f"select id from {table}", fetch="all") == [(1,)]


# The Thrift lanes put their server on a standalone cluster (scripts/spark_cluster.py)
# and say so with JAMMI_THRIFT_CLUSTER=1; `--local` lanes run the server in one JVM.
ON_CLUSTER = os.environ.get("JAMMI_THRIFT_CLUSTER") == "1"


@pytest.mark.skipif(not ON_CLUSTER, reason="the server runs in local mode (--local)")
class TestTasksRunOnExecutors:
    def test_tasks_run_in_executor_jvms_of_their_own(self, project):
        master = project.run_sql("set spark.master", fetch="one")[1]
        assert master.startswith("spark://"), master
        # reflect() is not deterministic, so Spark evaluates it in the tasks, in the JVM
        # that runs each one: its command line names the executor backend and its id.
        rows = project.run_sql(
            "select distinct reflect('java.lang.System', 'getProperty', 'sun.java.command')"
            " from range(0, 64, 1, 8)",
            fetch="all",
        )
        commands = sorted(r[0] for r in rows)
        assert all("CoarseGrainedExecutorBackend" in c for c in commands), commands
        executor_ids = {c.split("--executor-id", 1)[1].split()[0] for c in commands}
        assert len(executor_ids) == 2, commands  # two workers, one executor each
