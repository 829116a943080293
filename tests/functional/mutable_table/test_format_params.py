"""Two class-scoped `fmt` params in one pytest process (what the delta lane does with
parquet and delta): each gets its own dbt project directory and schema."""

from pathlib import Path

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, registry_rows, run, table_rows

ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, '{{ config.get("file_format") }}' as fmt
"""


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
        # Each param's project directory and schema are named after its own format, so
        # the two params of one process never share either (whichever runs first, and
        # also when only one runs); a directory reused from the other param would hold
        # its `project_<other format>` name, or fail its `mkdir models`.
        root, schema = Path(str(project.project_root)), project.test_schema
        assert root.name.startswith(f"project_{fmt}")
        assert schema.endswith(f"_{fmt}")
        assert sorted(p.name for p in (root / "models").iterdir()) == ["items.sql"]
        run(project)
        assert table_rows(project, "items", "id, fmt") == [(1, fmt)]
        assert registry_rows(project, "items") == [("items", fmt)]
