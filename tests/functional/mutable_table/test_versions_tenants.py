"""mutable_table_as_of() in a tenant-bound run: scoped exactly like tenant_scoped() (the
bound tenant's rows and shared rows), accepted by the tenant read guard; a read of a
kept version's files without the scope is refused (docs/versions.md)."""

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku'], tenant_from='tenant') }}
select * from values ('acme', 'a', {{ var('price', 1) }}), ('globex', 'g', 2),
  (cast(null as string), 's', 3) as t(tenant, sku, price)
"""

AS_OF = """
{{ config(materialized='table') }}
select sku, price from {{ mutable_table_as_of(ref('prices'), version=var('as_of', 0)) }} as p
"""

UNSCOPED = """
{{ config(materialized='table') }}
select sku, price from parquet.`{{ var('path', '/nowhere') }}` as p
"""


def first_version(project, fmt: str) -> int:
    if fmt == "delta":
        history = rows(project, f"describe history {project.test_schema}.prices")
        return min(int(r[0]) for r in history)
    return 1


class TestAsOfInBoundRuns(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"prices.sql": PRICES, "prices_as_of.sql": AS_OF, "unscoped.sql": UNSCOPED}

    def test_as_of_is_scoped_and_guarded(self, project, fmt):
        run(project, "prices", {"price": 1})
        run(project, "prices", {"price": 10})
        version = first_version(project, fmt)
        run(project, "prices_as_of", {"as_of": version, "jammi_tenant": "acme"})
        assert table_rows(project, "prices_as_of", "sku, price") == [("a", 1), ("s", 3)]
        run(project, "prices_as_of", {"as_of": version})
        assert table_rows(project, "prices_as_of", "sku, price") == [
            ("a", 1),
            ("g", 2),
            ("s", 3),
        ]
        if fmt == "parquet":
            location = [
                r[1]
                for r in rows(project, f"describe table extended {project.test_schema}.prices")
                if r[0] == "Location"
            ][0]
            result = run(
                project, "unscoped", {"path": location, "jammi_tenant": "acme"}, expect_pass=False
            )
            assert "without the adapter's tenant scope" in result.results[0].message
