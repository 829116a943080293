"""A feed whose schema moves, under on_schema_change: sync_all_columns: each change is
evolved in place or refused with the fix as docs/mutable_table.md's table says, never a
changed value (#missing-and-new-columns)."""

from __future__ import annotations

import pyspark
import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

CONFIG = """
{{ config(materialized='mutable_table', primary_key=['id'], on_schema_change='sync_all_columns',
          tblproperties=var('props', {})) }}
"""
# stage 1, then stage 2 (the source moved)
WIDENED = (
    CONFIG
    + """
select 1 as id, {{ 'cast(3000000000 as bigint)' if var('stage') == 2 else 'cast(7 as int)' }} as qty
"""
)
STRUCT_FIELD = (
    CONFIG
    + """
select 1 as id,
  {{ "named_struct('a', 2, 'b', 'new')" if var('stage') == 2 else "named_struct('a', 1)" }} as info
"""
)
ADDED = (
    CONFIG
    + """
select 1 as id, 10 as qty{{ ", 'new' as note" if var('stage') == 2 else '' }}
"""
)
DROPPED = (
    CONFIG
    + """
select 1 as id, 10 as qty{{ ", 'old' as note" if var('stage') == 1 else '' }}
"""
)
DELTA_PROPS = {"delta.enableTypeWidening": "true", "delta.columnMapping.mode": "name"}
DELTA_4 = int(pyspark.__version__.split(".")[0]) >= 4


def column_types(project, table: str) -> dict:
    described = rows(project, f"describe {project.test_schema}.{table}")
    return {r[0]: r[1] for r in described if r[0] and not r[0].startswith("#")}


class TestSchemaEvolution(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "widened.sql": WIDENED,
            "struct_field.sql": STRUCT_FIELD,
            "added.sql": ADDED,
            "dropped.sql": DROPPED,
        }

    def stages(self, project, fmt, model, evolves):
        """Stage 1, then stage 2, which passes or fails as ``evolves`` says; the rows
        before stage 2 and its result."""
        props = DELTA_PROPS if fmt == "delta" else {}
        run(project, model, {"stage": 1, "props": props})
        before = table_rows(project, model)
        result = run(project, model, {"stage": 2, "props": props}, expect_pass=evolves)
        return before, result.results[0]

    def test_a_type_widened_with_a_value_that_needs_it(self, project, fmt):
        widens = fmt == "iceberg" or (fmt == "delta" and DELTA_4)
        before, result = self.stages(project, fmt, "widened", widens)
        if widens:
            assert result.status == "success", result.message
            assert column_types(project, "widened")["qty"] == "bigint"
            assert table_rows(project, "widened", "id, qty") == [(1, 3000000000)]
        else:
            # parquet/orc: the metastore keeps the type; Delta 3: widens up to int only
            assert result.status == "error"
            assert "qty" in result.message and "3000000000" in result.message
            assert table_rows(project, "widened") == before
            assert column_types(project, "widened")["qty"] == "int"

    def test_a_struct_field_added(self, project, fmt):
        evolves = fmt in ("delta", "iceberg")
        before, result = self.stages(project, fmt, "struct_field", evolves)
        if evolves:
            assert result.status == "success", result.message
            assert column_types(project, "struct_field")["info"] == "struct<a:int,b:string>"
            assert table_rows(project, "struct_field", "id, info.a, info.b") == [(1, 2, "new")]
        else:
            assert result.status == "error"
            assert "info" in result.message and "nested types must stay the same" in (
                result.message
            )
            assert table_rows(project, "struct_field") == before

    def test_a_column_added(self, project, fmt):
        _, result = self.stages(project, fmt, "added", True)
        assert result.status == "success", result.message
        assert table_rows(project, "added", "id, qty, note") == [(1, 10, "new")]

    def test_a_column_dropped(self, project, fmt):
        evolves = fmt in ("delta", "iceberg")
        before, result = self.stages(project, fmt, "dropped", evolves)
        if evolves:
            assert result.status == "success", result.message
            assert "note" not in column_types(project, "dropped")
            assert table_rows(project, "dropped", "id, qty") == [(1, 10)]
        else:
            assert result.status == "error"
            assert "no longer outputs column(s) note" in result.message
            assert "partial_updates: true" in result.message
            assert table_rows(project, "dropped") == before
