"""Tenant scope: bound runs stamp and only touch their own rows; reads are scoped."""

import json

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    rows,
    run,
    table_rows,
)

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku'], hard_deletes='delete') }}
{% set b = var('batch', 'shared') %}
select * from values
{% if b == 'shared' %} ('a', 1), ('s', 100)
{% elif b == 'shared2' %} ('s', 101)
{% elif b == 'acme' %} ('a', 10), ('b', 20)
{% elif b == 'acme2' %} ('a', 11)
{% elif b == 'globex' %} ('a', 30)
{% endif %}
as t(sku, price)
"""

READER = """
{{ config(materialized='table') }}
select sku, price, tenant_id from {{ tenant_scoped(ref('prices')) }}
"""

CONFIG_LOOKUP = """
{{ config(materialized='mutable_table', primary_key=['setting'], tenant_from='tenant') }}
select * from values ('acme', 'currency', 'EUR'),
  ('globex', 'currency', '{{ var("globex_currency", "USD") }}'),
  (cast(null as string), 'currency', 'GBP') as t(tenant, setting, value)
"""

LEAKY = """
{{ config(materialized='mutable_table', primary_key=['sku']) }}
select sku, max(price) as price from {{ ref('prices') }} group by sku
"""

# dbt's table and view materializations carry the tenant read guard on jammi
GUARDED_TABLE = """
{{ config(materialized='table') }}
select * from {{ ref('prices') }}
"""

GUARDED_VIEW = """
{{ config(materialized='view') }}
select sku from {{ ref('prices') }}
"""

EVIL = "x'); drop table prices; --"


class TestMutableTenants(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "prices.sql": PRICES,
            "reader.sql": READER,
            "config_lookup.sql": CONFIG_LOOKUP,
            "leaky.sql": LEAKY,
            "guarded_table.sql": GUARDED_TABLE,
            "guarded_view.sql": GUARDED_VIEW,
        }

    def test_tenant_binding(self, project):
        order = "coalesce(tenant_id, ''), sku"
        run(project, "prices", {"batch": "shared"})
        run(project, "prices", {"batch": "acme", "jammi_tenant": "acme"})
        run(project, "prices", {"batch": "globex", "jammi_tenant": "globex"})
        assert table_rows(project, "prices", "tenant_id, sku, price", order) == [
            (None, "a", 1),
            (None, "s", 100),
            ("acme", "a", 10),
            ("acme", "b", 20),
            ("globex", "a", 30),
        ]
        # hard_deletes in a bound run only ever deletes that tenant's absent keys
        run(project, "prices", {"batch": "acme2", "jammi_tenant": "acme"})
        # an unbound run (no tenant_from) only touches the shared rows
        run(project, "prices", {"batch": "shared2"})
        assert table_rows(project, "prices", "tenant_id, sku, price", order) == [
            (None, "s", 101),
            ("acme", "a", 11),
            ("globex", "a", 30),
        ]

        # a tenant value is data: quotes and SQL are stored literally, never executed
        run(project, "prices", {"batch": "acme2", "jammi_tenant": EVIL})
        assert table_rows(project, "prices", "tenant_id, sku, price", order)[-1] == (EVIL, "a", 11)
        assert len(table_rows(project, "prices")) == 4

        # reads through tenant_scoped see the tenant's own rows plus shared ones
        run(project, "reader", {"jammi_tenant": "acme"})
        assert table_rows(project, "reader", "tenant_id, sku, price", order) == [
            (None, "s", 101),
            ("acme", "a", 11),
        ]
        run(project, "reader")
        assert len(table_rows(project, "reader")) == 4

    def test_tenant_from(self, project):
        run(project, "config_lookup")
        assert table_rows(project, "config_lookup", "tenant_id, setting, value", "1") == [
            (None, "currency", "GBP"),
            ("acme", "currency", "EUR"),
            ("globex", "currency", "USD"),
        ]
        found = rows(
            project,
            f"select value from {project.test_schema}.config_lookup "
            "where tenant_id = 'acme' and setting = 'currency'",
        )
        assert found == [("EUR",)]

    def test_tenant_from_in_a_bound_run_writes_the_bound_tenants_rows(self, project):
        run(project, "config_lookup")  # unbound: every tenant's rows and the shared one
        bound = {"jammi_tenant": "globex", "globex_currency": "CHF"}
        _, log = run_dbt_and_capture(["run", "-s", "config_lookup", "--vars", json.dumps(bound)])
        # the same model bound to globex: globex's row is written, acme's row and the
        # shared row are skipped (only an unbound run writes them) and the run says so
        assert "skipped 2 row(s) whose tenant names another tenant or none" in log
        assert table_rows(project, "config_lookup", "tenant_id, setting, value", "1") == [
            (None, "currency", "GBP"),
            ("acme", "currency", "EUR"),
            ("globex", "currency", "CHF"),
        ]

    def test_plain_reads_are_scoped_in_a_bound_run(self, project):
        run(project, "prices", {"batch": "acme", "jammi_tenant": "acme"})
        run(project, "leaky guarded_table guarded_view", {"jammi_tenant": "acme"})
        schema = project.test_schema
        visible = rows(
            project,
            f"select sku, price, tenant_id from {schema}.prices "
            "where tenant_id = 'acme' or tenant_id is null order by 1, 2",
        )
        assert len(visible) < len(table_rows(project, "prices"))  # another tenant's rows exist
        got = rows(
            project, f"select sku, price, tenant_id from {schema}.guarded_table order by 1, 2"
        )
        assert got == visible
        skus = sorted({sku for sku, _, _ in visible})
        assert [
            r[0] for r in rows(project, f"select sku from {schema}.guarded_view order by 1")
        ] == [sku for sku, _, _ in visible]
        maxima = {sku: max(p for s, p, _ in visible if s == sku) for sku in skus}
        assert (
            dict(rows(project, f"select sku, price from {schema}.leaky where tenant_id = 'acme'"))
            == maxima
        )
        # unbound runs read the whole table as usual
        run(project, "guarded_table")
        assert len(table_rows(project, "guarded_table")) == len(table_rows(project, "prices"))
