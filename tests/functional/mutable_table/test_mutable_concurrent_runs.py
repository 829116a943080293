"""What one run may do to the table and leftovers of another (issue 9, defects 2 and 3).

- A table that exists is never taken for a first run: not when dbt-spark's schema
  listing hits a table dropped meanwhile (TABLE_OR_VIEW_NOT_FOUND), and not when the
  listing misses it altogether; in the second case the run fails clearly and the
  table keeps every row (the registration undo only removes what the run created).
- A run removes another run's staging table only when that run is provably gone.

The listing failures are injected by patching the adapter in this process (dbt runs
in-process in pytest), so the thrift lane runs these too.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from dbt.adapters.spark import impl as spark_impl
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.mutable_table.commit.ownership import holder_properties, this_holder
from tests.functional.mutable_table.util import leftovers, registry_rows, rows, run, table_rows

# parquet's rewrite applier and version claims; Delta's are in their own tests
pytestmark = pytest.mark.parquet_only

STOCK = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet') }}
select * from values ({{ var('batch', 1) }}, 'batch {{ var('batch', 1) }}') as t(id, label)
"""


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout.strip())


def _stage(project, name: str, holder: str, created_ms: int) -> None:
    project.run_sql(
        f"create table {project.test_schema}.{name} using parquet tblproperties ("
        f"'jammi.holder' = '{holder}', 'jammi.created_ms' = '{created_ms}') as select 1 as x"
    )


class TestExistingTableIsNeverAFirstRun:
    @pytest.fixture(scope="class")
    def models(self):
        return {"stock.sql": STOCK}

    def test_listing_that_hits_a_vanished_table_is_repeated(self, project, monkeypatch):
        run(project, "stock", {"batch": 1})
        original = spark_impl.SparkAdapter.execute_macro
        failures = {"left": 2}

        def flaky(self, macro_name, *args, **kwargs):
            if macro_name == spark_impl.LIST_RELATIONS_MACRO_NAME and failures["left"] > 0:
                failures["left"] -= 1
                raise DbtRuntimeError(
                    "[TABLE_OR_VIEW_NOT_FOUND] The table or view `x`.`stock__jammi_changes_1` "
                    "cannot be found."
                )
            return original(self, macro_name, *args, **kwargs)

        monkeypatch.setattr(spark_impl.SparkAdapter, "execute_macro", flaky)
        run(project, "stock", {"batch": 2})
        assert failures["left"] == 0
        assert table_rows(project, "stock", "id, label") == [(1, "batch 1"), (2, "batch 2")]

    def test_a_missed_table_fails_clearly_and_keeps_its_rows(self, project, monkeypatch):
        run(project, "stock", {"batch": 1})  # the table exists (a no-op if it did already)
        before = table_rows(project, "stock", "id, label")
        assert (1, "batch 1") in before
        monkeypatch.setattr(JammiAdapter, "list_relations_without_caching", lambda self, s: [])
        result = run(project, "stock", {"batch": 3}, expect_pass=False)
        assert "created by another run" in result.results[0].message
        monkeypatch.undo()
        assert table_rows(project, "stock", "id, label") == before
        assert registry_rows(project, "stock") == [("stock", "parquet")]
        assert leftovers(project, "stock") == []
        run(project, "stock", {"batch": 3})
        assert table_rows(project, "stock", "id, label") == [*before, (3, "batch 3")]


class TestStagingOfOtherRuns:
    @pytest.fixture(scope="class")
    def models(self):
        return {"stock.sql": STOCK}

    def test_only_provably_abandoned_staging_is_dropped(self, project):
        run(project, "stock", {"batch": 1})
        now_ms = int(rows(project, "select unix_millis(current_timestamp())")[0][0])
        live = holder_properties(this_holder("session"), now_ms)
        dead = f"{this_holder('session').host}:{_dead_pid()}:session"
        _stage(project, "stock__jammi_changes_live", live["jammi.holder"], now_ms)
        _stage(project, "stock__jammi_changes_remote", "otherhost:1:thrift", now_ms)
        _stage(project, "stock__jammi_changes_dead", dead, now_ms)
        _stage(project, "stock__jammi_changes_old", "otherhost:1:thrift", now_ms - 2 * 86_400_000)

        run(project, "stock", {"batch": 2})
        assert table_rows(project, "stock", "id") == [(1,), (2,)]
        # a live run's staging (this process, or another host's) stays; a dead run's,
        # or one older than a day, is gone
        assert leftovers(project, "stock") == [
            "stock__jammi_changes_live",
            "stock__jammi_changes_remote",
        ]


@pytest.mark.session_only
class TestCommitOfAnotherConnectionIsSeen:
    """Another connection (a second Spark session on the same metastore, as a second
    dbt process on one Thrift server) commits a version after this connection has read
    the table: this connection's cached resolution of the table is stale, and a run that
    planned from it would drop the other commit's rows."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"stock.sql": STOCK}

    def test_a_run_plans_from_the_version_the_metastore_points_at(self, project):
        from pyspark.sql import SparkSession

        run(project, "stock", {"batch": 1})
        assert table_rows(project, "stock", "id") == [(1,)]  # this session resolves it now
        table = f"{project.test_schema}.stock"
        other = SparkSession.getActiveSession().newSession()
        current = [r for r in other.sql(f"describe table extended {table}").collect()]
        base = next(r[1] for r in current if r[0] == "Location").rsplit("/", 1)[0]
        newer = f"{base}/v0000000009_other"
        other.sql(
            f"insert overwrite directory '{newer}' using parquet "
            f"select id, label, tenant_id from {table} union all select 99, 'other', null"
        )
        other.sql(f"alter table {table} set location '{newer}'")

        run(project, "stock", {"batch": 2})
        assert table_rows(project, "stock", "id") == [(1,), (2,), (99,)]
