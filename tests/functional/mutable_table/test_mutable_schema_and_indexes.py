"""Secondary indexes (unique enforcement) and on_schema_change."""

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    properties,
    run,
    table_rows,
    table_version,
)

INDEXED = """
{{ config(materialized='mutable_table', primary_key=['id'],
          indexes=[{'name': 'by_code', 'columns': ['code'], 'unique': true},
                   {'name': 'by_cat', 'columns': ['cat']}]) }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} (1, 'A', 'x'), (2, 'B', 'y')
{% elif b == 2 %} (3, 'A', 'z')
{% else %} (2, 'C', 'y'), (3, 'B', 'z')
{% endif %}
as t(id, code, cat)
"""

EVOLVING = """
{{ config(materialized='mutable_table', primary_key=['id'],
          on_schema_change=var('osc', 'fail')) }}
{% if var('batch', 1) == 1 %}
select 1 as id, 'a' as label
{% else %}
select 2 as id, 'b' as label, 7 as score
{% endif %}
"""


# connection_agnostic: the index check and schema change are planner SQL
@pytest.mark.connection_agnostic
class TestMutableIndexesAndSchema(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"indexed.sql": INDEXED, "evolving.sql": EVOLVING}

    def test_unique_index(self, project, fmt):
        run(project, "indexed", {"batch": 1})
        if fmt == "iceberg":  # the index columns are the table's write order
            assert "code" in properties(project, "indexed").get("sort-order", "")
        before = table_version(project, "indexed", fmt)
        result = run(project, "indexed", {"batch": 2}, expect_pass=False)
        message = result.results[0].message
        assert "unique index 'by_code'" in message and "code='A'" in message
        assert table_rows(project, "indexed", "id, code, cat") == [(1, "A", "x"), (2, "B", "y")]
        assert table_version(project, "indexed", fmt) == before
        # a batch that keeps the index unique in the next state is fine (2 frees 'B')
        run(project, "indexed", {"batch": 3})
        assert table_rows(project, "indexed", "id, code, cat") == [
            (1, "A", "x"),
            (2, "C", "y"),
            (3, "B", "z"),
        ]

    def test_on_schema_change(self, project):
        run(project, "evolving", {"batch": 1})
        result = run(project, "evolving", {"batch": 2}, expect_pass=False)
        assert "new column(s) score" in result.results[0].message
        assert table_rows(project, "evolving") == [(1, "a", None)]

        run(project, "evolving", {"batch": 2, "osc": "append_new_columns"})
        assert table_rows(project, "evolving", "id, label, score, tenant_id") == [
            (1, "a", None, None),
            (2, "b", 7, None),
        ]
