"""A view holds no state: a model that was a view and becomes a mutable_table replaces
it on its next run (docs/mutable_table.md#existing-relations)."""

from __future__ import annotations

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    registry_rows,
    rows,
    run,
    table_rows,
)

ORDERS = """
{{ config(materialized=var('materialized', 'view'), primary_key=['id']) }}
select * from values (1, {{ var('amount', 10) }}), (2, 20) as t(id, amount)
"""


class TestAViewBecomesAMutableTable(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"orders.sql": ORDERS}

    def test_the_view_is_replaced_and_the_table_takes_its_rows(self, project):
        run(project, "orders")
        kinds = {r[1]: r for r in rows(project, f"show views in {project.test_schema}")}
        assert "orders" in kinds
        run(project, "orders", {"materialized": "mutable_table"})
        assert "orders" not in {r[1] for r in rows(project, f"show views in {project.test_schema}")}
        assert table_rows(project, "orders", "id, amount") == [(1, 10), (2, 20)]
        assert registry_rows(project, "orders") != []
        # and it goes on as a mutable table
        run(project, "orders", {"materialized": "mutable_table", "amount": 11})
        assert table_rows(project, "orders", "id, amount") == [(1, 11), (2, 20)]
