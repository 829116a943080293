"""dbt-tests-adapter base suites with `file_format: delta` (the suites dbt-spark runs on
Delta only), and the rebuild of existing Delta tables (engine/delta_replace.py): a `table`
model re-run and an incremental --full-refresh, with the same columns, new columns and
new partitioning. Run by the Delta lane (`make delta-lane`)."""

import pytest
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import BaseIncrementalUniqueKey
from dbt.tests.util import run_dbt, write_file

from dbt.adapters.jammi.engine.delta_replace import replace_as_select_unsupported
from tests.conftest import test_file_format
from tests.functional.mutable_table.util import rows

pytestmark = [
    pytest.mark.delta,
    pytest.mark.skipif(
        test_file_format() != "delta", reason="Delta Lake is not on this session (delta lane)"
    ),
]

DELTA = {"+file_format": "delta"}
DELTA_MERGE = {"+file_format": "delta", "+incremental_strategy": "merge"}


class TestSimpleMaterializationsDelta(BaseSimpleMaterializations):
    """Re-runs `table` models and turns a view into a table and an incremental: the
    rebuild of an existing Delta table."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": DELTA, "seeds": DELTA}


class TestIncrementalDelta(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": DELTA_MERGE, "seeds": DELTA}


class TestSnapshotCheckColsDelta(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": DELTA, "models": DELTA, "snapshots": DELTA}


class TestSnapshotTimestampDelta(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": DELTA, "models": DELTA, "snapshots": DELTA}


class TestUniqueKeyDelta(BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": DELTA_MERGE, "seeds": DELTA}


class TestMergeExcludeColumnsDelta(BaseMergeExcludeColumns):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": DELTA}


INCREMENTAL_PREDICATES_SQL = """
{{ config(materialized='incremental', unique_key='id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""


class TestIncrementalPredicatesDelta(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**DELTA_MERGE, "+incremental_predicates": ["dbt_internal_dest.id != 2"]}}

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": INCREMENTAL_PREDICATES_SQL}


class TestOnSchemaChangeDelta(BaseIncrementalOnSchemaChangeSetup):
    """Merge with on_schema_change: ignore, fail, append_new_columns. Delta cannot drop a
    column without column mapping, so sync_all_columns removing one is a clear error."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**DELTA_MERGE, "+unique_key": "id"}}

    def test_run_incremental_ignore(self, project):
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_fail_on_schema_change(self, project):
        run_dbt(["run", "--models", "model_a incremental_fail", "--full-refresh"])
        second = run_dbt(["run", "--models", "model_a incremental_fail"], expect_pass=False)
        assert "Compilation Error" in second[1].message

    def test_run_incremental_append_new_columns(self, project):
        self.run_incremental_append_new_columns(project)


def _table_model(columns: str, partition_by: str | None = None) -> str:
    partition = f", partition_by='{partition_by}'" if partition_by else ""
    return (
        f"{{{{ config(materialized='table', file_format='delta'{partition}) }}}}\n"
        f"select {columns} from range(3)"
    )


def _history(project, table: str) -> list[str]:
    found = rows(project, f"describe history {project.test_schema}.{table}")
    return [r[4] for r in sorted(found, key=lambda r: r[0])]  # operation, by version


def _partitions(project, table: str) -> list[str]:
    detail = project.run_sql(f"describe detail {project.test_schema}.{table}", fetch="one")
    return list(detail[7] or [])  # partitionColumns


def _keeps_replace_as_select(project) -> bool:
    """True where dbt-spark's `create or replace table ... as select` runs unchanged
    (Spark 4, Spark up to 3.5.5); False where the adapter rebuilds around it."""
    version = project.run_sql("select version()", fetch="one")[0]
    return not replace_as_select_unsupported(str(version))


class TestDeltaTableRebuild:
    """An existing Delta table rebuilt by a `table` model re-run and an incremental
    --full-refresh: rows replaced, schema and partitioning as the model now says, the
    previous versions kept in the table's history. On Spark 4 the rebuild is dbt-spark's
    own replace-as-select, one commit either way."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "rebuilt.sql": _table_model("id, 'a' as label"),
            "refreshed.sql": (
                "{{ config(materialized='incremental', file_format='delta', "
                "incremental_strategy='append') }}\n"
                "select id, {{ var('n', 1) }} as n from range(2)"
            ),
        }

    def test_same_columns_is_one_overwrite_commit(self, project):
        run_dbt(["run", "--select", "rebuilt"])
        run_dbt(["run", "--select", "rebuilt"])
        assert rows(
            project, f"select id, label from {project.test_schema}.rebuilt order by id"
        ) == [
            (0, "a"),
            (1, "a"),
            (2, "a"),
        ]
        rebuild = "CREATE OR REPLACE TABLE AS SELECT"
        if not _keeps_replace_as_select(project):
            rebuild = "WRITE"  # insert overwrite
        assert _history(project, "rebuilt") == ["CREATE TABLE AS SELECT", rebuild]

    def test_new_columns_and_partitioning_replace_the_table(self, project):
        new_model = _table_model("id, 'b' as label, id * 10 as tens", partition_by="label")
        write_file(new_model, project.project_root, "models", "rebuilt.sql")
        run_dbt(["run", "--select", "rebuilt"])
        found = rows(
            project, f"select id, label, tens from {project.test_schema}.rebuilt order by id"
        )
        assert found == [(0, "b", 0), (1, "b", 10), (2, "b", 20)]
        assert _partitions(project, "rebuilt") == ["label"]
        if _keeps_replace_as_select(project):
            assert _history(project, "rebuilt")[-1] == "CREATE OR REPLACE TABLE AS SELECT"
        else:
            assert _history(project, "rebuilt")[-2:] == ["REPLACE TABLE", "WRITE"]
        # the rows before the rebuild are still in the history
        before = rows(project, f"select label from {project.test_schema}.rebuilt version as of 1")
        assert {r[0] for r in before} == {"a"}

    def test_full_refresh_of_an_incremental(self, project):
        run_dbt(["run", "--select", "refreshed"])
        run_dbt(["run", "--select", "refreshed", "--vars", "{n: 2}"])
        assert len(rows(project, f"select * from {project.test_schema}.refreshed")) == 4
        run_dbt(["run", "--select", "refreshed", "--full-refresh", "--vars", "{n: 3}"])
        assert rows(project, f"select id, n from {project.test_schema}.refreshed order by id") == [
            (0, 3),
            (1, 3),
        ]
