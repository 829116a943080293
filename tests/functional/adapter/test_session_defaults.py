"""What dbt-spark's macros and users' SQL `SET` must keep doing under `type: jammi`.

dbt-spark's session cursor re-applies the profile's `server_side_parameters` before every
statement, so a Spark SQL setting the adapter put there would undo every `SET` of that
setting: dbt-spark's `insert_overwrite` sets `partitionOverwriteMode = DYNAMIC` and then
replaced the whole table instead of the partitions it selected.
"""

import pytest
from dbt.tests.util import run_dbt

PARTITIONED_INSERT_OVERWRITE = """
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['day'],
    file_format='parquet',
) }}
{% if is_incremental() %}
select 20 as id, 'b' as day
{% else %}
select 1 as id, 'a' as day union all select 2 as id, 'b' as day
{% endif %}
"""

# A pre-hook SET must still hold when the model's own statement runs (and a post-hook
# puts the process-wide session back for the tests that follow).
ZONE_FROM_PRE_HOOK = """
{{ config(
    materialized='table',
    file_format='parquet',
    pre_hook="set spark.sql.session.timeZone = America/New_York",
    post_hook="set spark.sql.session.timeZone = UTC",
) }}
select current_timezone() as zone
"""


class TestDbtSparkSettingsSurviveJammiDefaults:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "by_day.sql": PARTITIONED_INSERT_OVERWRITE,
            "zone_from_pre_hook.sql": ZONE_FROM_PRE_HOOK,
        }

    def test_insert_overwrite_replaces_only_the_selected_partitions(self, project):
        run_dbt(["run", "--select", "by_day"])
        run_dbt(["run", "--select", "by_day"])
        rows = project.run_sql(
            f"select id, day from {project.test_schema}.by_day order by day", fetch="all"
        )
        assert [tuple(row) for row in rows] == [(1, "a"), (20, "b")]

    def test_a_set_in_a_pre_hook_holds_for_the_model(self, project):
        run_dbt(["run", "--select", "zone_from_pre_hook"])
        rows = project.run_sql(
            f"select zone from {project.test_schema}.zone_from_pre_hook", fetch="all"
        )
        assert [tuple(row) for row in rows] == [("America/New_York",)]
