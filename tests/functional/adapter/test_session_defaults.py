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


# dbt-jammi's own writers with the overwrite mode dbt-spark leaves behind (DYNAMIC): the
# rewrite applier and topic publishing write with INSERT OVERWRITE DIRECTORY into fresh
# directories, which has no partition columns for the mode to act on.
KEYED = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select * from values
{% if var('batch', 1) == 1 %} (1, 'a'), (2, 'b') {% else %} (2, 'b2'), (3, 'c') {% endif %}
as t(id, label)
"""

DYN_EVENTS = """
{{ config(materialized='topic', topic_name='dyn.events') }}
select {{ var('batch', 1) }} as n
"""

SEEN_EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select n from {{ topic_events(ref('dyn_events')) }}
"""


class TestDbtSparkSettingsSurviveJammiDefaults:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "by_day.sql": PARTITIONED_INSERT_OVERWRITE,
            "zone_from_pre_hook.sql": ZONE_FROM_PRE_HOOK,
            "keyed.sql": KEYED,
            "dyn_events.sql": DYN_EVENTS,
            "seen_events.sql": SEEN_EVENTS,
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

    def test_jammi_writers_under_dynamic_partition_overwrite(self, project):
        project.run_sql("set spark.sql.sources.partitionOverwriteMode = DYNAMIC")
        try:
            for batch in (1, 2):
                run_dbt(
                    ["run", "--select", "keyed dyn_events seen_events", "--vars", f"batch: {batch}"]
                )
        finally:
            project.run_sql("set spark.sql.sources.partitionOverwriteMode = STATIC")
        schema = project.test_schema
        keyed = project.run_sql(f"select id, label from {schema}.keyed order by id", fetch="all")
        assert [tuple(row) for row in keyed] == [(1, "a"), (2, "b2"), (3, "c")]
        seen = project.run_sql(f"select n from {schema}.seen_events order by n", fetch="all")
        assert [tuple(row) for row in seen] == [(1,), (2,)]


# dbt-spark's session wrapper rendered seed bindings as '{value}': NULL became 'None', a
# quote broke the insert and big integers went through float().
SEED_CELLS = """id,name,big
1,O'Brien \\ Sons,9007199254740993
2,,
"""


class TestSeedCellsKeepTheirValues:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"cells.csv": SEED_CELLS}

    def test_null_quotes_and_exact_numbers(self, project):
        run_dbt(["seed"])
        rows = project.run_sql(
            f"select id, name, big from {project.test_schema}.cells order by id",
            fetch="all",
        )
        assert [tuple(row) for row in rows] == [
            (1, "O'Brien \\ Sons", 9007199254740993),
            (2, None, None),
        ]
