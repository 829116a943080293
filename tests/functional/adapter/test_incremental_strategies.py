"""dbt-spark's incremental strategies without Delta: `append`, `insert_overwrite` with
`partition_by` (dynamic partition overwrite), `microbatch`, and `on_schema_change`.

These run dbt-spark's own macros under `type: jammi`: the adapter must leave them doing
exactly what they do under `type: spark`.
"""

import pytest
from dbt.tests.adapter.basic.test_incremental import BaseIncremental
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.util import run_dbt

pytestmark = pytest.mark.dbt_spark_suite


class TestIncrementalInsertOverwritePartitionedJammi(BaseIncremental):
    """The second run selects only the new ids: the table keeps every other partition
    only if dbt-spark's `partitionOverwriteMode = DYNAMIC` holds for its insert."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "name": "incremental",
            "models": {
                "+file_format": "parquet",
                "+incremental_strategy": "insert_overwrite",
                "+partition_by": "id",
            },
        }


class TestMicrobatchJammi(BaseMicrobatch):
    """dbt-spark's microbatch is insert_overwrite of one partition per batch; it takes
    no unique_key and needs a partition column that the batches map onto."""

    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        return """
{{ config(
    materialized='incremental',
    incremental_strategy='microbatch',
    event_time='event_time',
    batch_size='day',
    begin=modules.datetime.datetime(2020, 1, 1, 0, 0, 0),
    partition_by=['event_day'],
    file_format='parquet',
) }}
select id, event_time, to_date(event_time) as event_day from {{ ref('input_model') }}
"""


class OnSchemaChangeWithoutDroppingColumns(BaseIncrementalOnSchemaChangeSetup):
    """`ignore`, `append_new_columns` (adding) and `fail`, as under `type: spark`. Not run,
    because dbt-spark does not do them on any format: `sync_all_columns` (it refuses to
    drop columns: "Apache Spark does not support dropping columns from tables") and
    `append_new_columns` when the model also stops selecting a column (its insert selects
    every target column from the new rows: UNRESOLVED_COLUMN)."""

    def test_run_incremental_ignore(self, project):
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_append_new_columns(self, project):
        self.run_incremental_append_new_columns(project)

    def test_run_incremental_fail_on_schema_change(self, project):
        select = "model_a incremental_fail"
        run_dbt(["run", "--select", select, "--full-refresh"])
        results = run_dbt(["run", "--select", select], expect_pass=False)
        assert "Compilation Error" in results[1].message


class TestInsertOverwriteOnSchemaChangeJammi(OnSchemaChangeWithoutDroppingColumns):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+file_format": "parquet",
                "+partition_by": "id",
                "+incremental_strategy": "insert_overwrite",
            }
        }
