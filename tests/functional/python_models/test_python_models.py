"""Python models (def model(dbt, session)) on the embedded session (issue 37): table,
incremental (append, insert_overwrite, merge), mutable_table and topic, with dbt.ref,
dbt.source, dbt.config, dbt.this and dbt.is_incremental; the state each run leaves is
read back from Spark."""

from __future__ import annotations

import pytest

from tests.conftest import MERGE_LANE_FORMATS, test_file_format
from tests.functional.mutable_table.util import rows, run, table_exists

# spark4_path: the models' DataFrames are PySpark's own (over Connect, its client's)
pytestmark = pytest.mark.spark4_path

SRC = """
{{ config(materialized='table') }}
select * from values (1, 'a'), (2, 'b') as t(id, name)
"""

SOURCES = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: src
"""

# dbt.config: a value the model sets and reads back
PY_TABLE = """
def model(dbt, session):
    dbt.config(materialized="table", min_id=2)
    min_id = dbt.config.get("min_id")
    src = dbt.ref("src")
    return src.where(src.id >= min_id).withColumn("doubled", src.id * 2)
"""

PY_SOURCE = """
def model(dbt, session):
    dbt.config(materialized="table")
    return dbt.source("raw", "src").selectExpr("id", "upper(name) as name")
"""

# each run appends the source's rows shifted past the largest id in dbt.this
PY_APPEND = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    src = dbt.ref("src")
    if dbt.is_incremental:
        top = session.sql(f"select max(id) from {dbt.this}").collect()[0][0]
        return src.selectExpr(f"id + {top} as id", "name")
    return src
"""

# the second run replaces partition p2 only
PY_OVERWRITE = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="insert_overwrite",
               partition_by=["part"], file_format="parquet")
    if dbt.is_incremental:
        return session.sql("select 20 as id, 'p2' as part")
    return session.sql("select 1 as id, 'p1' as part union all select 2, 'p2'")
"""

PY_MERGE = """
def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="merge", unique_key="id")
    if dbt.is_incremental:
        return session.sql("select 2 as id, 'B' as name union all select 3, 'c'")
    return dbt.ref("src")
"""

PY_MUTABLE = """
def model(dbt, session):
    dbt.config(materialized="mutable_table", primary_key=["id"])
    if dbt.is_incremental:
        return session.sql("select 2 as id, 'B' as name union all select 3, 'c'")
    return dbt.ref("src")
"""

# a batch with a duplicate key: the mutable_table's batch checks refuse it
PY_MUTABLE_DUPLICATES = """
def model(dbt, session):
    dbt.config(materialized="mutable_table", primary_key=["id"])
    return session.sql("select 1 as id, 'a' as name union all select 1, 'b'")
"""

PY_TOPIC = """
def model(dbt, session):
    dbt.config(materialized="topic", topic_name="py.events")
    return dbt.ref("src").selectExpr("id", "name as what")
"""

PY_NOT_A_DATAFRAME = """
def model(dbt, session):
    dbt.config(materialized="table")
    return [1, 2]
"""

PYTHON_MODELS = {
    "py_table.py": PY_TABLE,
    "py_source.py": PY_SOURCE,
    "py_append.py": PY_APPEND,
    "py_overwrite.py": PY_OVERWRITE,
    "py_merge.py": PY_MERGE,
    "py_mutable.py": PY_MUTABLE,
    "py_mutable_duplicates.py": PY_MUTABLE_DUPLICATES,
    "py_topic.py": PY_TOPIC,
    "py_not_a_dataframe.py": PY_NOT_A_DATAFRAME,
}


# models whose second run is asserted (incremental, mutable_table, topic, a replaced table)
RUN_TWICE = ["py_table", "py_append", "py_overwrite", "py_mutable", "py_topic"]
RUN_ONCE = ["py_source", "py_mutable_duplicates", "py_not_a_dataframe"]


class TestPythonModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {"src.sql": SRC, "sources.yml": SOURCES, **PYTHON_MODELS}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": test_file_format()}}

    @pytest.fixture(scope="class")
    def results(self, project):
        """Every model run in one invocation, then the ones with a second run in another
        (merge only where the lane's format merges); results by model name."""
        twice = RUN_TWICE + (["py_merge"] if test_file_format() in MERGE_LANE_FORMATS else [])
        run(project, "src")
        first = run(project, " ".join(twice + RUN_ONCE), expect_pass=False)
        second = run(project, " ".join(twice))
        return {r.node.name: r for r in [*first.results, *second.results]}

    def table(self, project, name: str, columns: str = "*") -> list[tuple]:
        return rows(project, f"select {columns} from {project.test_schema}.{name} order by 1")

    def test_table_reads_ref_and_config(self, project, results):
        assert self.table(project, "py_table") == [(2, "b", 4)]  # replaced, not appended

    def test_table_reads_source(self, project, results):
        assert self.table(project, "py_source") == [(1, "A"), (2, "B")]

    def test_incremental_append_reads_this(self, project, results):
        assert self.table(project, "py_append", "id, name") == [
            (1, "a"),
            (2, "b"),
            (3, "a"),
            (4, "b"),
        ]
        # dbt-spark's SQL path: the batch went through a temporary view, no __dbt_tmp table
        found = rows(project, f"show tables in {project.test_schema} like 'py_append__dbt_tmp'")
        assert [r for r in found if not r[2]] == []

    def test_incremental_insert_overwrite_replaces_its_partitions(self, project, results):
        assert self.table(project, "py_overwrite", "id, part") == [(1, "p1"), (20, "p2")]

    def test_incremental_merge_updates_by_unique_key(self, project, results):
        if test_file_format() not in MERGE_LANE_FORMATS:
            pytest.skip("merge needs Delta or Iceberg (their lanes run this)")
        assert self.table(project, "py_merge", "id, name") == [(1, "a"), (2, "B"), (3, "c")]

    def test_mutable_table_applies_the_dataframe_as_its_batch(self, project, results):
        assert self.table(project, "py_mutable", "id, name") == [(1, "a"), (2, "B"), (3, "c")]
        views = rows(project, f"show views in {project.test_schema} like 'jammi_python*'")
        assert views == []  # every batch view of a successful run was dropped

    def test_mutable_table_batch_checks_hold(self, project, results):
        result = results["py_mutable_duplicates"]
        assert result.status == "error"
        assert "deduplicate in the model" in result.message
        assert not table_exists(project, "py_mutable_duplicates")

    def test_topic_publishes_the_dataframe(self, project, results):
        got = rows(
            project,
            f"select _offset, count(*) from {project.test_schema}.py_topic group by 1 order by 1",
        )
        assert got == [(1, 2), (2, 2)]

    def test_a_model_returning_no_dataframe_fails_clearly(self, project, results):
        result = results["py_not_a_dataframe"]
        assert "returned builtins.list, not a DataFrame" in result.message
        assert not table_exists(project, "py_not_a_dataframe")
