"""A model that becomes a mutable_table keeps the table another materialization built:
every stored row stays, the next batch applies to them, and a table whose stored keys
are NULL or duplicated is refused untouched (docs/mutable_table.md#existing-relations)."""

from __future__ import annotations

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    properties,
    registry_rows,
    rows,
    run,
    table_rows,
)

# one model, built first by dbt's table or incremental materialization, then by
# mutable_table; its rows come from vars, so the incremental runs leave rows that no
# later run of the model could recreate
ORDERS = """
{{ config(materialized=var('materialized'), unique_key='id',
          incremental_strategy=var('strategy', none), primary_key=['id'], version_column='v',
          full_refresh=var('full_refresh', none)) }}
select * from values {{ var('rows') }} as t(id, amount, v)
"""


def columns(project, table: str) -> list[str]:
    return [r[0] for r in rows(project, f"describe {project.test_schema}.{table}")]


class TestAdoptingExistingTables(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS, "totals.sql": ORDERS, "dupes.sql": ORDERS}

    def test_a_table_model_becomes_a_mutable_table(self, project, fmt):
        run(project, "totals", {"materialized": "table", "rows": "(1, 10, 1), (2, 20, 1)"})
        assert "jammi.kind" not in properties(project, "totals")
        # id 1 at an older version loses to the stored row; id 2 is newer; id 3 is new
        batch = "(1, 99, 0), (2, 21, 2), (3, 30, 1)"
        run(project, "totals", {"materialized": "mutable_table", "rows": batch})
        assert table_rows(project, "totals", "id, amount, v, tenant_id") == [
            (1, 10, 1, None),
            (2, 21, 2, None),
            (3, 30, 1, None),
        ]
        assert properties(project, "totals")["jammi.kind"] == "mutable_table"
        assert registry_rows(project, "totals") == [("totals", fmt)]
        # and it goes on as a mutable table
        run(project, "totals", {"materialized": "mutable_table", "rows": "(3, 31, 2)"})
        assert table_rows(project, "totals", "id, amount") == [(1, 10), (2, 21), (3, 31)]

    def test_an_incremental_model_keeps_its_history(self, project, fmt):
        strategy = "append" if fmt == "parquet" else "merge"
        base = {"materialized": "incremental", "strategy": strategy}
        run(project, "orders", {**base, "rows": "(1, 10, 1), (2, 20, 1)"})
        run(project, "orders", {**base, "rows": "(3, 30, 1)"})
        run(project, "orders", {**base, "rows": "(4, 40, 1)"})
        # rows 1 to 4 exist only in the table now: the model's output is id 2 and 5
        run(
            project,
            "orders",
            {"materialized": "mutable_table", "rows": "(2, 22, 3), (5, 50, 1)"},
        )
        assert table_rows(project, "orders", "id, amount, v") == [
            (1, 10, 1),
            (2, 22, 3),
            (3, 30, 1),
            (4, 40, 1),
            (5, 50, 1),
        ]
        assert columns(project, "orders")[:4] == ["id", "amount", "v", "tenant_id"]

    def test_null_or_duplicate_stored_keys_are_refused_untouched(self, project, fmt):
        stored = "(1, 10, 1), (1, 11, 1), (cast(null as int), 5, 1), (2, 20, 1)"
        run(project, "dupes", {"materialized": "table", "rows": stored})
        before = table_rows(project, "dupes", "id, amount, v", order="1, 2")
        result = run(
            project,
            "dupes",
            {"materialized": "mutable_table", "rows": "(3, 30, 1)"},
            expect_pass=False,
        )
        message = result.results[0].message
        assert "NULL or duplicate primary keys" in message
        assert "id=1: 2 rows" in message and "id=None: 1 rows" in message
        assert "Fix:" in message
        assert table_rows(project, "dupes", "id, amount, v", order="1, 2") == before
        assert "tenant_id" not in columns(project, "dupes")
        assert "jammi.kind" not in properties(project, "dupes")
        # a permitted rebuild drops it and starts from the model's output
        run(
            project,
            "dupes",
            {"materialized": "mutable_table", "rows": "(3, 30, 1)", "full_refresh": True},
            extra=["--full-refresh"],
        )
        assert table_rows(project, "dupes", "id, amount, v") == [(3, 30, 1)]
        assert properties(project, "dupes")["jammi.kind"] == "mutable_table"
