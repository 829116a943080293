"""dbt's `table` materialization on an Iceberg session (the iceberg lane): with
`file_format: iceberg` a re-run replaces the rows (jammi__create_table_as: create on the
first run, Iceberg's atomic replace-as-select after), while a parquet `table` model
cannot be re-created there -- Iceberg's SparkSessionCatalog drops a non-Iceberg table's
metastore entry but keeps its files (the trap docs/formats.md, "Iceberg", names)."""

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


class TestIcebergTableModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"totals.sql": SNAPSHOT, "plain_totals.sql": SNAPSHOT}

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
