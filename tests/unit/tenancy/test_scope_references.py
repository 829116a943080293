"""Scoping a bound run's statement in its own text (scope_references) and the names an
unscoped scan was reached by (plan.unscoped_scans); no Spark here."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.tenancy.plan import (
    ALIAS,
    FILTER,
    OTHER,
    PROJECT,
    RELATION,
    UNNAMED_SCAN,
    VIEW,
    PlanNode,
    scoped_relation_sql,
    unscoped_scans,
)
from dbt.adapters.jammi.tenancy.scope_references import scope_references

NAMES = {"d.prices", "d.v"}


def scoped(text: str, tenant: str = "acme") -> str:
    return scoped_relation_sql(text, tenant)


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("select * from d.prices", f"select * from {scoped('d.prices')} prices"),
        ("select p.a from d.prices p", f"select p.a from {scoped('d.prices')} p"),
        ("select * from d.prices as p", f"select * from {scoped('d.prices')} as p"),
        (
            "select * from `d`.`prices` join spark_catalog.d.v on true",
            f"select * from {scoped('`d`.`prices`')} `prices` "
            f"join {scoped('spark_catalog.d.v')} v on true",
        ),
        ("select * from d . prices", f"select * from {scoped('d . prices')} prices"),
        (
            "with c as (select * from d.prices) select * from c",
            f"with c as (select * from {scoped('d.prices')} prices) select * from c",
        ),
        (
            "select (select max(a) from d.prices) as m from d.other",
            f"select (select max(a) from {scoped('d.prices')} prices) as m from d.other",
        ),
    ],
)
def test_reads_are_scoped_in_place(sql, expected):
    assert scope_references(sql, NAMES, "acme") == expected


@pytest.mark.parametrize(
    "sql",
    [
        "insert into d.prices select * from d.other",
        "create table d.prices as select 1 as a",
        "delete from d.prices where a = 1",
        "update d.prices set a = 1",
        "select * from d.other",
        "select * from d.prices version as of 3",
        "select * from prices",  # a bare name is never taken for d.prices
        "select * from d.prices; select * from d.prices",  # one statement only
        "select * from (",  # sqlglot cannot parse it: left to the guard
    ],
)
def test_writes_other_tables_and_the_unparsable_are_left_alone(sql):
    assert scope_references(sql, NAMES, "acme") == sql


def test_a_merge_has_its_source_scoped_and_its_target_left_alone():
    sql = "merge into d.prices t using d.prices s on t.a = s.a when matched then delete"
    assert scope_references(sql, NAMES, "acme") == (
        f"merge into d.prices t using {scoped('d.prices')} s on t.a = s.a when matched then delete"
    )


def test_the_tenant_is_a_literal_and_the_rest_of_the_text_is_kept():
    sql = "select /* keep */ a -- and this\nfrom d.prices where a > 'd.prices'"
    tenant = "x' or '1'='1"
    got = scope_references(sql, NAMES, tenant)
    assert got == (
        "select /* keep */ a -- and this\nfrom "
        f"{scoped('d.prices', tenant)} prices "
        "where a > 'd.prices'"
    )
    assert "tenant_id = 'x\\' or \\'1\\'=\\'1'" in got


def test_a_temporary_view_is_matched_by_its_bare_name():
    assert scope_references("select * from tmp", {"tmp"}, "acme") == (
        f"select * from {scoped('tmp')} tmp"
    )


def scan(table, tenant_attr=3):
    return PlanNode(RELATION, table=table, attrs={"a": 1, "tenant_id": tenant_attr})


def test_unscoped_scans_name_the_table_and_the_views_that_pass_tenant_id():
    inner = PlanNode(VIEW, table="d.v", attrs={"a": 1, "tenant_id": 3}, children=[scan("d.t")])
    outer = PlanNode(VIEW, table="d.w", attrs={"a": 1}, children=[inner])
    found = unscoped_scans(PlanNode(OTHER, children=[outer]), lambda t: True)
    assert [(s.table, s.names) for s in found] == [("d.t", ["d.t", "d.v"])]


def test_a_scoped_scan_and_a_scan_by_path():
    keep = PlanNode(PROJECT, passthrough={3: {3}}, children=[scan("d.t")])
    ok = PlanNode(FILTER, scope_attr=3, children=[PlanNode(ALIAS, children=[keep])])
    by_path = scan(None)
    found = unscoped_scans(PlanNode(OTHER, children=[ok, by_path]), lambda t: True)
    assert [(s.table, s.names) for s in found] == [(UNNAMED_SCAN, [])]
