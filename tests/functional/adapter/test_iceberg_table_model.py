"""dbt's `table` and `incremental` materializations on an Iceberg session (the iceberg
lane): with
`file_format: iceberg` a re-run replaces the rows (jammi__create_table_as: create on the
first run, Iceberg's atomic replace-as-select after), while a parquet `table` model
cannot be re-created there -- Iceberg's SparkSessionCatalog drops a non-Iceberg table's
metastore entry but keeps its files (the trap docs/formats.md, "Iceberg", names). An
Iceberg table the listing marks as Iceberg (engine/listing.py) takes dbt-spark's Iceberg
paths of each incremental strategy: append, merge and insert_overwrite."""

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import test_file_format

pytestmark = pytest.mark.skipif(
    test_file_format() != "iceberg", reason="needs Iceberg's session catalog (iceberg lane)"
)

SNAPSHOT = """
{{ config(materialized='table', file_format=var('format', 'iceberg')) }}
select {{ var('n', 1) }} as n
"""


def provider(project, table: str) -> str:
    described = project.run_sql(
        f"describe table extended {project.test_schema}.{table}", fetch="all"
    )
    return next(str(r[1]).strip().lower() for r in described if str(r[0]).strip() == "Provider")


# var rows: [[day, id, amount]]
INCREMENTAL = """
{{ config(materialized='incremental', file_format='iceberg', STRATEGY) }}
select * from values
{% for day, id, amount in var('rows', [[0, 0, 0]]) %}
  ({{ day }}, {{ id }}, {{ amount }}){{ ',' if not loop.last }}
{% endfor %}
as t(day, id, amount)
"""
STRATEGIES = {
    "appended": "incremental_strategy='append'",
    "merged": "incremental_strategy='merge', unique_key='id'",
    "overwritten": "incremental_strategy='insert_overwrite', partition_by=['day']",
}


class TestIcebergTableModel:
    @pytest.fixture(scope="class")
    def models(self):
        incremental = {
            f"{name}.sql": INCREMENTAL.replace("STRATEGY", strategy)
            for name, strategy in STRATEGIES.items()
        }
        return {"totals.sql": SNAPSHOT, "plain_totals.sql": SNAPSHOT, **incremental}

    def test_each_incremental_strategy_on_an_iceberg_table(self, project):
        first = "{rows: [[1, 1, 10], [1, 2, 20], [2, 3, 30]]}"
        second = "{rows: [[1, 2, 21], [3, 4, 40]]}"
        for batch in (first, second):
            run_dbt(["run", "--select", *STRATEGIES, "--vars", batch])
        found = {
            name: sorted(
                tuple(r)
                for r in project.run_sql(
                    f"select day, id, amount from {project.test_schema}.{name}", fetch="all"
                )
            )
            for name in STRATEGIES
        }
        assert found["appended"] == [(1, 1, 10), (1, 2, 20), (1, 2, 21), (2, 3, 30), (3, 4, 40)]
        assert found["merged"] == [(1, 1, 10), (1, 2, 21), (2, 3, 30), (3, 4, 40)]
        # day 1 replaced by the second batch's rows of it; day 2 kept; day 3 added
        assert found["overwritten"] == [(1, 2, 21), (2, 3, 30), (3, 4, 40)]
        assert {provider(project, name) for name in STRATEGIES} == {"iceberg"}

    def test_an_iceberg_table_model_re_runs(self, project):
        run_dbt(["run", "--select", "totals", "--vars", "{n: 1}"])
        run_dbt(["run", "--select", "totals", "--vars", "{n: 2}"])
        assert provider(project, "totals") == "iceberg"
        found = project.run_sql(f"select n from {project.test_schema}.totals", fetch="all")
        assert [tuple(r) for r in found] == [(2,)]

    def test_a_parquet_table_model_cannot_be_re_created(self, project):
        args = ["run", "--select", "plain_totals", "--vars"]
        run_dbt([*args, "{n: 1, format: parquet}"])
        results = run_dbt([*args, "{n: 2, format: parquet}"], expect_pass=False)
        assert "LOCATION_ALREADY_EXISTS" in results.results[0].message
