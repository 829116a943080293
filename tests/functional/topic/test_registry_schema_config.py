"""A registry_schema that is not a plain schema name fails the model before anything is
written, with a message naming the model, the option and the fix (mutable_table and
topic models alike)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.topic.fixtures import TopicProject, rows

MUTABLE_SQL = """
{{ config(materialized='mutable_table', primary_key=['id'], registry_schema='x.y --') }}
select 1 as id, 'a' as v
"""
TOPIC_SQL = """
{{ config(materialized='topic', topic_name='cdc.bad', registry_schema='x.y --') }}
select 1 as id, 'a' as v
"""


class TestRegistrySchemaValidated(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": MUTABLE_SQL, "cdc_bad.sql": TOPIC_SQL}

    def test_spliced_registry_schema_is_refused_before_any_write(self, project):
        results = run_dbt(["run"], expect_pass=False)
        assert sorted(str(r.status) for r in results) == ["error", "error"]
        for result in results:
            assert f"'{result.node.name}': registry_schema 'x.y --'" in result.message
            assert "Fix: set registry_schema to a plain schema name" in result.message
        stored = [r for r in rows(f"SHOW TABLES IN {project.test_schema}") if not r[2]]
        assert stored == []
