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
