"""BaseDocsGenerate with Spark's catalog vocabulary (types, owner, table stats)."""

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate


class AnyStats:
    """Spark reports a table's size in bytes for seeds; the value varies by file layout."""

    def __eq__(self, other):
        return isinstance(other, dict) and "has_stats" in other

    def __repr__(self):
        return "<AnyStats>"


class TestDocsGenerateJammi(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return expected_catalog.base_expected_catalog(
            project,
            role=getpass.getuser(),
            id_type="long",
            text_type="string",
            time_type="timestamp",
            view_type="view",
            table_type="table",
            model_stats=expected_catalog.no_stats(),
            seed_stats=AnyStats(),
        )


class TestCatalogIgnoresSessionTempViews:
    """An embedded session keeps temporary views (e.g. dbt-spark's `<model>__dbt_tmp`)
    for the life of the process; they belong to no schema and must not break the catalog."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"kept.sql": "select 1 as id"}

    def test_docs_generate_with_a_leftover_temp_view(self, project):
        from dbt.tests.util import run_dbt

        run_dbt(["run"])
        project.run_sql("create or replace temporary view leftover__dbt_tmp as select 1 as x")
        catalog = run_dbt(["docs", "generate"])
        names = {node.metadata.name for node in catalog.nodes.values()}
        assert names == {"kept"}
