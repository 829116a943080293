"""The tenant read guard through a Python model's reads (issue 37): in a run bound to
'acme', dbt.ref() and dbt.source() hand the model acme's and the shared rows only, and
session.sql() is scoped like a SQL model's statement (also when its rows are collected
into Python); session.table() of a tenant-scoped table (also collected), the table's
files by path, a union with a scoped read and a hand-written filter fail the model before
anything is written. Unbound, the same probes read every tenant's rows."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.tenancy.plan import UNNAMED_SCAN
from tests.conftest import test_file_format
from tests.functional.mutable_table.test_tenant_read_guard import PRICES  # the SQL probes' table
from tests.functional.mutable_table.util import rows, run, table_exists

SOURCES = """
version: 2
sources:
  - name: jammi
    schema: "{{ target.schema }}"
    tables:
      - name: prices
"""

TABLE = 'def model(dbt, session):\n    dbt.config(materialized="table")\n'

# read through dbt: scoped by the adapter
SCOPED = {
    "py_ref": TABLE + '    return dbt.ref("prices").select("sku", "tenant_id")\n',
    "py_source": TABLE + '    return dbt.source("jammi", "prices").select("sku", "tenant_id")\n',
    "py_filtered_ref": TABLE + '    prices = dbt.ref("prices")\n'
    '    return prices.where(prices.price > 0).select("sku", "tenant_id")\n',
    "py_session_sql": TABLE
    + '    return session.sql(f"select sku, tenant_id from {dbt.this.schema}.prices")\n',
    "py_collected_sql": TABLE
    + '    got = session.sql(f"select sku, tenant_id from {dbt.this.schema}.prices")\n'
    '    return session.createDataFrame(got.collect(), "sku string, tenant_id string")\n',
}

# read around dbt: refused
REFUSED = {
    "py_session_table": TABLE
    + '    return session.table(f"{dbt.this.schema}.prices").select("sku", "tenant_id")\n',
    "py_collected_table": TABLE
    + '    got = session.table(f"{dbt.this.schema}.prices").select("sku", "tenant_id")\n'
    '    return session.createDataFrame(got.collect(), "sku string, tenant_id string")\n',
    "py_union": TABLE + '    scoped = dbt.ref("prices").select("sku", "tenant_id")\n'
    '    raw = session.table(f"{dbt.this.schema}.prices").select("sku", "tenant_id")\n'
    "    return scoped.union(raw)\n",
    "py_forged_filter": TABLE + '    raw = session.table(f"{dbt.this.schema}.prices")\n'
    "    return raw.where(\"(tenant_id = 'acme' or tenant_id is null) or true\")"
    '.select("sku", "tenant_id")\n',
    "py_by_path": TABLE
    + '    described = session.sql(f"describe table extended {dbt.this.schema}.prices")\n'
    "    facts = {r[0]: r[1] for r in described.collect()}\n"
    '    files = session.read.format(facts["Provider"]).load(facts["Location"])\n'
    '    return files.select("sku", "tenant_id")\n',
}

# a mutable_table whose batch comes from dbt.ref: a bound run writes its own rows only
PY_MUTABLE = """
def model(dbt, session):
    dbt.config(materialized="mutable_table", primary_key=["sku"])
    return dbt.ref("prices").select("sku", "price")
"""

ACME = {"jammi_tenant": "acme"}
GUARD = "without the adapter's tenant scope"


@pytest.mark.spark4_path
class TestPythonTenantReads:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "prices.sql": PRICES,
            "sources.yml": SOURCES,
            "py_mutable.py": PY_MUTABLE,
            **{f"{name}.py": code for name, code in {**SCOPED, **REFUSED}.items()},
        }

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": test_file_format()}}

    @pytest.fixture(scope="class", autouse=True)
    def tenants(self, project):
        run(project, "prices", {"batch": "shared"})
        run(project, "prices", {"batch": "acme", **ACME})
        run(project, "prices", {"batch": "globex", "jammi_tenant": "globex"})

    @pytest.fixture(scope="class")
    def bound_results(self, project):
        """One run bound to acme of every probe (one dbt invocation)."""
        results = run(project, " ".join([*SCOPED, *REFUSED]), ACME, expect_pass=False)
        return {r.node.name: r for r in results.results}

    def skus(self, project, table: str) -> list[str]:
        got = rows(project, f"select distinct sku from {project.test_schema}.{table} order by 1")
        return [r[0] for r in got]

    @pytest.mark.parametrize("name", SCOPED)
    def test_reads_through_dbt_are_scoped(self, project, bound_results, name):
        result = bound_results[name]
        assert result.status == "success", result.message
        assert self.skus(project, name) == ["a", "s"]  # acme's and the shared row, no 'g'

    @pytest.mark.parametrize("name", REFUSED)
    def test_reads_around_dbt_fail_and_write_nothing(self, project, bound_results, name):
        result = bound_results[name]
        assert result.status == "error", result.message
        if name == "py_by_path" and test_file_format() == "iceberg":
            # Iceberg's catalog refuses a read of a table's files by path itself
            assert not table_exists(project, name)
            return
        assert GUARD in result.message
        read = UNNAMED_SCAN if name == "py_by_path" else f"{project.test_schema}.prices"
        assert read in result.message
        assert "dbt.ref(" in result.message  # the fix names the Python way
        assert not table_exists(project, name)

    def test_unbound_runs_read_every_tenant(self, project, bound_results):
        unbound = ["py_session_table", "py_collected_table", "py_collected_sql", "py_union"]
        run(project, " ".join(unbound))  # the admin reads everything
        for name in unbound:
            assert self.skus(project, name) == ["a", "g", "s"], name

    def test_bound_mutable_table_writes_its_tenants_rows(self, project):
        run(project, "py_mutable", ACME)
        got = rows(
            project,
            f"select sku, tenant_id from {project.test_schema}.py_mutable order by 1",
        )
        assert got == [("a", "acme"), ("s", "acme")]
