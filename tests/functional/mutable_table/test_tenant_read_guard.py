"""The tenant read guard against every read path (issues 10 and 25): a run bound to
'acme' must never read 'globex' rows. Each probe below read globex rows on cbd0805 and
was refused on 3366926; now the adapter scopes each of them itself and the run sees
acme's and the shared rows only. What it cannot scope (a table's files read by path, a
view that does not pass tenant_id through) still fails before it writes anything."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.jammi.tenancy.plan import UNNAMED_SCAN
from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_exists

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku']) }}
{% set b = var('batch', 'shared') %}
select * from values
{% if b == 'shared' %} ('s', 1) {% elif b == 'acme' %} ('a', 10) {% else %} ('g', 99) {% endif %}
as t(sku, price)
"""

EVENTS = """
{{ config(materialized='topic', topic_name='tenant.events') }}
select '{{ var('who', 'shared') }}' as who
"""

SOURCES = """
version: 2
sources:
  - name: jammi
    schema: "{{ target.schema }}"
    tables:
      - name: prices
"""

EPHEMERAL = "{{ config(materialized='ephemeral') }} select * from {{ ref('prices') }}"

# every one of these read globex rows in a run bound to acme on cbd0805
PROBES = {
    "leak_source": "select * from {{ source('jammi', 'prices') }}",
    "leak_plain": "select * from {{ target.schema }}.prices",
    "leak_catalog": "select * from spark_catalog.{{ target.schema }}.prices",
    "leak_backticked": "select * from `{{ target.schema }}`.`prices`",
    "leak_spaced": "select * from {{ target.schema }} . prices",
    "leak_forged": "select * from {{ ref('prices') }} "
    "where (tenant_id = 'acme' or tenant_id is null) or true",
    "leak_ephemeral": "select * from {{ ref('eph') }}",
}

# what the adapter cannot scope, refused as before: the table's own files, by path
# (parquet.`<version dir>` or delta.`<location>`), and a view whose rows mix tenants
TOTALS_VIEW = "{{ config(materialized='view') }} select count(*) as n from {{ ref('prices') }}"
REFUSED = {
    "leak_by_path": """
-- depends_on: {{ ref('prices') }}
{% set ns = namespace(location='') -%}
{%- if execute -%}
  {%- for row in run_query('describe table extended ' ~ ref('prices')) -%}
    {%- if row[0] == 'Location' -%}{%- set ns.location = row[1] -%}{%- endif -%}
  {%- endfor -%}
{%- endif -%}
select sku, price, tenant_id from {{ config.get('file_format') }}.`{{ ns.location }}`
""",
    "refused_totals": "select * from {{ ref('totals') }}",
}

# a MERGE reads its source (Delta keeps it in a field of a leaf command, not a child)
LEAK_MERGE = """
{% macro leak_merge() %}
  {% do run_query("merge into " ~ target.schema ~ ".sink t using " ~ target.schema
     ~ ".prices s on t.sku = s.sku when not matched then insert (sku) values (s.sku)") %}
{% endmacro %}
"""
SINK = "{{ config(materialized='table') }} select 'none' as sku where false"

# these were already refused on cbd0805
PROBES |= {
    "blocked_ref": "select * from {{ ref('prices') }}",
    "blocked_cte": "with p as (select * from {{ ref('prices') }}) select * from p",
    "blocked_subquery": "select * from (select sku, price from {{ ref('prices') }}) x",
    "blocked_view": "{{ config(materialized='view') }} select * from {{ ref('prices') }}",
    "blocked_incremental": "{{ config(materialized='incremental') }} "
    "select * from {{ ref('prices') }}",
    "blocked_topic_view": "select * from {{ ref('events') }}",
}

LEAK_THIS = """
{{ config(materialized='mutable_table', primary_key=['sku']) }}
select 'x' as sku,
  {% if is_incremental() %}(select max(price) + 1 from {{ this }}){% else %}0{% endif %} as price
"""

SCOPED_THIS = """
{{ config(materialized='mutable_table', primary_key=['sku']) }}
select 'x' as sku,
  {% if is_incremental() %}(select max(price) + 1 from {{ tenant_scoped(this) }})
  {% else %}0{% endif %} as price
"""

TABLE = "{{ config(materialized='table') }}\n"
SCOPED = {
    "ok_ref": "select sku, tenant_id from {{ tenant_scoped(ref('prices')) }}",
    "ok_source": "select sku, tenant_id from {{ tenant_scoped(source('jammi', 'prices')) }}",
    "ok_backing": "select who, tenant_id from {{ topic_backing_table(ref('events')) }}",
    "ok_range": "select who, tenant_id from {{ topic_range(ref('events'), 1) }}",
    "ok_events": "select who, event_tenant_id as tenant_id "
    "from {{ topic_events(ref('events'), where=\"who <> 'nobody'\") }}",
}

ESCAPING_WHERE = """
select * from {{ topic_events(ref('events'), where="true) or (true") }}
"""

LEAK_TEST = "select * from {{ ref('prices') }} where tenant_id = 'globex'"

LEAK_OPERATION = """
{% macro leak_operation() %}
  {% set n = run_query('select count(*) from ' ~ target.schema ~ '.prices').rows[0][0] %}
  {% do log('prices visible: ' ~ n, info=true) %}
{% endmacro %}
"""

ACME = {"jammi_tenant": "acme"}
GUARD = "without the adapter's tenant scope"


# spark4_path: the guard reads Spark's analyzed plans, whose classes change with Spark 4.
# guard_reader: runs once per plan reader (the embedded lane's JVM reader, the Thrift
# lane's printed-plan reader); Delta's and Iceberg's printed plans are golden files read
# by tests/unit/tenancy/test_golden_plans.py, their MERGE runs in TestMergeSourceIsScoped.
@pytest.mark.spark4_path
@pytest.mark.guard_reader
class TestTenantReadGuard(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "prices.sql": PRICES,
            "sink.sql": SINK,
            "events.sql": EVENTS,
            "sources.yml": SOURCES,
            "eph.sql": EPHEMERAL,
            "totals.sql": TOTALS_VIEW,
            "leak_this.sql": LEAK_THIS,
            "scoped_this.sql": SCOPED_THIS,
            **{f"{name}.sql": sql for name, sql in {**PROBES, **REFUSED}.items()},
            **{f"{name}.sql": TABLE + sql for name, sql in SCOPED.items()},
        }

    @pytest.fixture(scope="class")
    def tests(self):
        return {"leak_test.sql": LEAK_TEST}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"leak_operation.sql": LEAK_OPERATION, "leak_merge.sql": LEAK_MERGE}

    @pytest.fixture(scope="class", autouse=True)
    def tenants(self, project):
        run(project, "prices", {"batch": "shared"})
        run(project, "prices", {"batch": "acme", **ACME})
        run(project, "prices", {"batch": "globex", "jammi_tenant": "globex"})
        run(project, "events", {"who": "shared"})
        run(project, "events", {"who": "acme", **ACME})
        run(project, "events", {"who": "globex", "jammi_tenant": "globex"})
        run(project, "totals")  # unbound: the admin's view over every tenant

    @pytest.fixture(scope="class")
    def bound_results(self, project):
        """One run bound to acme of every probe (one dbt invocation)."""
        names = [*PROBES, *REFUSED]
        results = run(project, " ".join(names), ACME, expect_pass=False)
        return {r.node.name: r for r in results.results}

    @pytest.mark.parametrize("name", PROBES)
    @pytest.mark.iceberg_lane_skip
    def test_plain_reads_are_scoped(self, project, bound_results, name):
        result = bound_results[name]
        assert result.status == "success", result.message
        column, seen = (
            ("who", ["acme", "shared"]) if name == "blocked_topic_view" else ("sku", ["a", "s"])
        )
        got = rows(
            project, f"select distinct {column} from {project.test_schema}.{name} order by 1"
        )
        assert [r[0] for r in got] == seen  # acme's and the shared rows, never globex's

    @pytest.mark.parametrize("name", REFUSED)
    @pytest.mark.iceberg_lane_skip
    def test_what_cannot_be_scoped_fails_and_writes_nothing(
        self, project, bound_results, name, fmt
    ):
        result = bound_results[name]
        assert result.status == "error", result.message
        if fmt == "iceberg" and name == "leak_by_path":
            # Spark itself refuses to read an Iceberg table's files by path
            assert "direct query on files: iceberg" in result.message
            assert not table_exists(project, name)
            return
        assert GUARD in result.message
        read = UNNAMED_SCAN if name == "leak_by_path" else f"{project.test_schema}.prices"
        assert read in result.message
        assert not table_exists(project, name)

    @pytest.mark.iceberg_lane_skip
    def test_unbound_runs_read_every_tenant(self, project, bound_results):
        run(project, " ".join(PROBES))  # the admin reads everything, as before
        got = rows(project, f"select count(*) from {project.test_schema}.leak_forged")
        assert got == [(3,)]

    def test_this_is_scoped_like_any_read(self, project):
        run(project, "leak_this scoped_this")  # first runs: no read of this, price 0
        for _ in range(2):  # globex's row climbs to 2
            run(project, "leak_this scoped_this", {"jammi_tenant": "globex"})
        run(project, "leak_this scoped_this", ACME)  # sees its own and the shared row: 0 + 1
        for table in ("leak_this", "scoped_this"):
            got = rows(
                project,
                f"select tenant_id, price from {project.test_schema}.{table} "
                "order by 1 nulls first",
            )
            assert got == [(None, 0), ("acme", 1), ("globex", 2)], table

    def test_scoped_paths_see_own_and_shared_rows_only(self, project):
        run(project, " ".join(SCOPED), ACME)
        for name in SCOPED:
            got = rows(project, f"select distinct tenant_id from {project.test_schema}.{name}")
            assert sorted(got, key=str) == sorted([("acme",), (None,)], key=str), name

    @pytest.mark.iceberg_lane_skip
    def test_tests_operations_and_show_are_scoped(self, project, fmt):
        if fmt == "iceberg":
            pytest.skip(
                "re-creates a parquet audit table: Iceberg's SparkSessionCatalog drops a "
                "non-Iceberg table's metastore entry but keeps its files (docs/formats.md)"
            )
        results = run_dbt(
            ["test", "--select", "leak_test", "--store-failures", "--vars", json.dumps(ACME)]
        )
        assert results.results[0].status == "pass"  # globex's row is outside the scope
        audit = f"{project.test_schema}_dbt_test__audit"
        assert rows(project, f"select count(*) from {audit}.leak_test") == [(0,)]
        # unbound, the same test sees globex's row (and stores it)
        results = run_dbt(["test", "--select", "leak_test", "--store-failures"], expect_pass=False)
        assert results.results[0].status == "fail"
        assert rows(project, f"select count(*) from {audit}.leak_test") == [(1,)]

        _, log = run_dbt_and_capture(
            ["run-operation", "leak_operation", "--vars", json.dumps(ACME)]
        )
        assert "prices visible: 2" in log
        inline = f"select * from {project.test_schema}.prices where tenant_id = 'globex'"
        shown = run_dbt(["show", "--inline", inline, "--vars", json.dumps(ACME)])
        assert len(shown.results[0].agate_table.rows) == 0
        shown = run_dbt(["show", "--inline", inline])  # unbound: the admin sees everything
        assert len(shown.results[0].agate_table.rows) == 1


# The MERGE of each MERGE format through the guard (Delta keeps its source in a field of
# a leaf command, not a child; Iceberg plans it as a tree): the Delta and Iceberg lanes
# and their Thrift lanes run this.
@pytest.mark.spark4_path
class TestMergeSourceIsScoped(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"prices.sql": PRICES, "sink.sql": SINK}

    @pytest.fixture(scope="class")
    def macros(self):
        return {"leak_merge.sql": LEAK_MERGE}

    @pytest.fixture(scope="class", autouse=True)
    def tenants(self, fmt, request):
        if fmt not in ("delta", "iceberg"):
            pytest.skip("MERGE INTO needs a Delta or Iceberg table (their lanes run this)")
        project = request.getfixturevalue("project")
        run(project, "prices", {"batch": "shared"})
        run(project, "prices", {"batch": "acme", **ACME})
        run(project, "prices", {"batch": "globex", "jammi_tenant": "globex"})

    def test_merge_source_is_scoped(self, project, fmt):
        run(project, "sink")
        # bound to acme: its source is scoped, acme's and the shared sku are copied
        run_dbt(["run-operation", "leak_merge", "--vars", json.dumps(ACME)])
        got = rows(project, f"select sku from {project.test_schema}.sink order by 1")
        assert got == [("a",), ("s",)]
        run_dbt(["run-operation", "leak_merge"])  # unbound: the admin copies every sku
        assert rows(project, f"select count(*) from {project.test_schema}.sink") == [(3,)]


@pytest.mark.guard_reader
class TestTopicEventsWhereIsOneExpression:
    """topic_events(where=...) is parsed as one expression when the project is parsed:
    a predicate that closes the adapter's parentheses never reaches Spark."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"events.sql": EVENTS, "escaping_where.sql": ESCAPING_WHERE}

    @pytest.mark.iceberg_lane_skip
    def test_escaping_predicate_is_rejected(self, project):
        with pytest.raises(Exception, match="is not one SQL expression"):
            run_dbt(["run", "--vars", json.dumps(ACME)])
        assert not table_exists(project, "escaping_where")
