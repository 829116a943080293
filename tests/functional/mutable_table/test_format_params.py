"""Two class-scoped `fmt` params in one pytest process (what the delta lane does with
parquet and delta): each gets its own dbt project directory and schema."""

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, registry_rows, run, table_rows

ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, '{{ config.get("file_format") }}' as fmt
"""

SEEN: list[tuple[str, str]] = []


# connection_agnostic: the test harness's own fixtures
@pytest.mark.connection_agnostic
class TestEachFormatParamGetsItsOwnProject(MutableProjectBase):
    # Both formats of the rewrite applier, so this runs on every lane.
    @pytest.fixture(scope="class", params=["parquet", "orc"])
    def fmt(self, request):
        return request.param

    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": ITEMS}

    def test_fresh_project_and_schema(self, project, fmt):
        root, schema = str(project.project_root), project.test_schema
        assert all(root != r and schema != s for r, s in SEEN)
        assert schema.endswith(f"_{fmt}")
        run(project)
        assert table_rows(project, "items", "id, fmt") == [(1, fmt)]
        assert registry_rows(project, "items") == [("items", fmt)]
        SEEN.append((root, schema))
