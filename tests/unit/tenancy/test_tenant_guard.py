"""The tenant read guard's decision, from analyzed plans as Spark prints them (the
EXPLAIN EXTENDED reader used over thrift) and as PlanNode trees (what both readers
build); no Spark here."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.tenancy.guard import (
    TenantGuard,
    TenantReadError,
    first_keyword,
    reads_rows,
)
from dbt.adapters.jammi.tenancy.plan import (
    ALIAS,
    FILTER,
    OTHER,
    PROJECT,
    RELATION,
    UNNAMED_SCAN,
    PlanNode,
    scoped_relation_sql,
    table_key,
    unscoped_reads,
)
from dbt.adapters.jammi.tenancy.plan_text import PlanTextError, parse_plan


def explain(analyzed: str) -> str:
    return (
        "== Parsed Logical Plan ==\n'Project [*]\n\n== Analyzed Logical Plan ==\n"
        f"{analyzed.strip(chr(10))}\n\n== Optimized Logical Plan ==\nProject\n"
    )


SCOPED = explain("""
sku: string, price: int, tenant_id: string
Project [sku#9, price#10, tenant_id#11]
+- SubqueryAlias p
   +- Project [sku#9, price#10, tenant_id#11]
      +- Filter ((tenant_id#11 = acme) OR isnull(tenant_id#11))
         +- SubqueryAlias spark_catalog.d.t
            +- Relation spark_catalog.d.t[sku#9,price#10,tenant_id#11] parquet
""")

FORGED = explain("""
sku: string, price: int, tenant_id: string
Project [sku#9, price#10, tenant_id#11]
+- Filter (((tenant_id#11 = acme) OR isnull(tenant_id#11)) OR true)
   +- SubqueryAlias spark_catalog.d.t
      +- Relation spark_catalog.d.t[sku#9,price#10,tenant_id#11] parquet
""")

CTE_AND_SUBQUERY = explain("""
sku: string, price: int, tenant_id: string
WithCTE
:- CTERelationDef 0, false
:  +- SubqueryAlias c
:     +- Project [sku#9, price#10, tenant_id#11]
:        +- Filter ((tenant_id#11 = acme) OR isnull(tenant_id#11))
:           +- SubqueryAlias spark_catalog.d.t
:              +- Relation spark_catalog.d.t[sku#9,price#10,tenant_id#11] parquet
+- Project [sku#9, price#10, tenant_id#11]
   +- Filter sku#9 IN (list#18 [])
      :  +- Project [op#25]
      :     +- SubqueryAlias spark_catalog.d.v
      :        +- View (`spark_catalog`.`d`.`v`, [_offset#24L,op#25,tenant_id#26])
      :           +- Project [cast(_offset#0L as bigint) AS _offset#24L, cast(op#1 as string) AS op#25, cast(tenant_id#2 as string) AS tenant_id#26]
      :              +- Project [_offset#0L, op#1, tenant_id#2]
      :                 +- SubqueryAlias spark_catalog.d.__topic_x
      :                    +- Relation spark_catalog.d.__topic_x[_offset#0L,op#1,tenant_id#2] parquet
      +- SubqueryAlias c
         +- CTERelationRef 0, true, [sku#9, price#10, tenant_id#11], false
""")  # noqa: E501

SCOPED_VIEW = explain("""
_offset: bigint, op: string, tenant_id: string
Project [_offset#32L, op#33, tenant_id#34]
+- SubqueryAlias __auto_generated_subquery_name
   +- Project [_offset#32L, op#33, tenant_id#34]
      +- Filter ((tenant_id#34 = acme) OR isnull(tenant_id#34))
         +- SubqueryAlias spark_catalog.d.v
            +- View (`spark_catalog`.`d`.`v`, [_offset#32L,op#33,tenant_id#34])
               +- Project [cast(_offset#0L as bigint) AS _offset#32L, cast(op#1 as string) AS op#33, cast(tenant_id#2 as string) AS tenant_id#34]
                  +- Project [_offset#0L, op#1, tenant_id#2]
                     +- SubqueryAlias spark_catalog.d.__topic_x
                        +- Relation spark_catalog.d.__topic_x[_offset#0L,op#1,tenant_id#2] parquet
""")  # noqa: E501

CREATE_VIEW_MULTILINE = explain("""

CreateViewCommand `spark_catalog`.`d`.`w`, select sku
from d.t
where 1 = 1, false, true, PersistedView, true
   +- Project [sku#9]
      +- SubqueryAlias spark_catalog.d.t
         +- Relation spark_catalog.d.t[sku#9,price#10,tenant_id#11] parquet
""")

# a command has no output, so no schema line: the root is the first line, and Delta's
# V2 CTAS has two children (the new table's identifier and the query)
DELTA_CTAS = explain("""
CreateTableAsSelect TableSpec(Map(),Some(delta),Map(),None,None,None,false), false, true
   :- ResolvedIdentifier org.apache.spark.sql.delta.catalog.DeltaCatalog@7e9dea47, d.z
   +- Project [sku#53, tenant_id#54]
      +- SubqueryAlias spark_catalog.d.t
         +- Relation spark_catalog.d.t[sku#53,tenant_id#54] parquet
""")

DELTA_CTAS_SCOPED = explain("""
CreateTableAsSelect TableSpec(Map(),Some(delta),Map(),None,None,None,false), false, true
   :- ResolvedIdentifier org.apache.spark.sql.delta.catalog.DeltaCatalog@7e9dea47, d.z
   +- Project [sku#53, tenant_id#54]
      +- Filter ((tenant_id#54 = acme) OR isnull(tenant_id#54))
         +- SubqueryAlias spark_catalog.d.t
            +- Relation spark_catalog.d.t[sku#53,tenant_id#54] parquet
""")

DELTA_DELETE = explain("""
num_affected_rows: bigint
DeleteCommand org.apache.spark.sql.delta.DeltaLog@9f09b89, `spark_catalog`.`d`.`t`, (tenant_id#66 = globex)
   +- SubqueryAlias spark_catalog.d.t
      +- Relation spark_catalog.d.t[sku#65,tenant_id#66] parquet
""")  # noqa: E501

FORGED_COLUMN = explain("""
a: string, tenant_id: string
Filter ((tenant_id#20 = acme) OR isnull(tenant_id#20))
+- Project [sku#9, acme AS tenant_id#20]
   +- SubqueryAlias spark_catalog.d.t
      +- Relation spark_catalog.d.t[sku#9,price#10,tenant_id#11] parquet
""")


def mutable(table: str) -> bool:
    return table == "d.t"


@pytest.mark.parametrize(
    "text, expected",
    [
        (SCOPED, []),
        (FORGED, ["d.t"]),  # a hand-written scope plus `or true` is not the scope
        (CTE_AND_SUBQUERY, ["d.__topic_x"]),  # the CTE is scoped, the IN-subquery is not
        (SCOPED_VIEW, []),  # tenant_scoped() of a topic view: scope on the view's column
        (CREATE_VIEW_MULTILINE, ["d.t"]),  # the view's SQL text spans lines
        (FORGED_COLUMN, ["d.t"]),  # a constant named tenant_id is not the scan's column
        (DELTA_CTAS, ["d.t"]),  # a root without a schema line above it
        (DELTA_CTAS_SCOPED, []),
        (DELTA_DELETE, ["d.t"]),  # Delta's DELETE reads its target
    ],
)
def test_unscoped_reads_from_explain(text, expected):
    assert unscoped_reads(parse_plan(text, "acme"), mutable) == expected


def test_scope_for_another_tenant_is_not_this_runs_scope():
    assert unscoped_reads(parse_plan(SCOPED, "globex"), mutable) == ["d.t"]


def test_tables_without_the_definition_are_not_tenant_scoped():
    assert unscoped_reads(parse_plan(FORGED, "acme"), lambda table: False) == []


def test_explain_without_analyzed_plan_is_an_error():
    with pytest.raises(PlanTextError):
        parse_plan("== Physical Plan ==\n*(1) Scan", "acme")


def test_hive_and_v2_relations_are_read():
    hive = explain("""
a: string
Project [a#1]
+- SubqueryAlias spark_catalog.d.t
   +- HiveTableRelation [`spark_catalog`.`d`.`t`, org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe, Data Cols: [a#1, tenant_id#2], Partition Cols: []]
""")  # noqa: E501
    assert unscoped_reads(parse_plan(hive, "acme"), mutable) == ["d.t"]
    v2 = explain("""
a: string
Project [a#1]
+- SubqueryAlias spark_catalog.d.t
   +- RelationV2[a#1, tenant_id#2] spark_catalog.d.t
""")
    assert unscoped_reads(parse_plan(v2, "acme"), mutable) == ["d.t"]


def test_scans_by_path_count_as_tenant_scoped():
    # `select * from delta.`<location>`` (or parquet.`<dir>`): a relation without a
    # catalog table; a tenant table's files are one path away, so it needs the scope too
    by_path = explain("""
sku: string, tenant_id: string
Project [sku#86, tenant_id#87]
+- SubqueryAlias spark_catalog.delta.`file:/w/d.db/t`
   +- Relation [sku#86,tenant_id#87] parquet
""")
    assert unscoped_reads(parse_plan(by_path, "acme"), lambda t: False) == [UNNAMED_SCAN]
    scoped = explain("""
sku: string, tenant_id: string
Project [sku#92, tenant_id#93]
+- SubqueryAlias __auto_generated_subquery_name
   +- Project [sku#92, tenant_id#93]
      +- Filter ((tenant_id#93 = acme) OR isnull(tenant_id#93))
         +- SubqueryAlias spark_catalog.delta.`file:/w/d.db/t`
            +- Relation [sku#92,tenant_id#93] parquet
""")
    assert unscoped_reads(parse_plan(scoped, "acme"), lambda t: False) == []
    without_tenant = PlanNode(RELATION, table=None, attrs={"sku": 1})
    assert unscoped_reads(PlanNode(OTHER, children=[without_tenant]), lambda t: True) == []


def test_projection_that_drops_tenant_id_before_the_filter_is_unscoped():
    scan = PlanNode(RELATION, table="d.t", attrs={"tenant_id": 3})
    drop = PlanNode(PROJECT, passthrough={1: {1}}, children=[PlanNode(ALIAS, children=[scan])])
    plan = PlanNode(FILTER, scope_attr=3, children=[drop])
    assert unscoped_reads(plan, mutable) == ["d.t"]
    keep = PlanNode(PROJECT, passthrough={3: {7}}, children=[PlanNode(ALIAS, children=[scan])])
    assert unscoped_reads(PlanNode(FILTER, scope_attr=7, children=[keep]), mutable) == []
    join = PlanNode(OTHER, children=[scan])
    assert unscoped_reads(PlanNode(FILTER, scope_attr=3, children=[join]), mutable) == ["d.t"]


def test_topic_backing_tables_are_scoped_by_name_without_a_lookup():
    asked = []
    scan = PlanNode(RELATION, table="d.__topic_1", attrs={"tenant_id": 3})
    assert unscoped_reads(PlanNode(OTHER, children=[scan]), asked.append) == ["d.__topic_1"]
    assert asked == []


def test_table_key_and_scoped_sql():
    assert table_key("spark_catalog.D.t") == "d.t"
    assert table_key("`spark_catalog`.`d`.`t`") == "d.t"
    assert table_key("d.t") == "d.t"
    assert scoped_relation_sql("d.t", None) == "d.t"
    assert scoped_relation_sql("d.t", "o'b") == (
        "(select * from d.t where (tenant_id = 'o\\'b' or tenant_id is null))"
    )


@pytest.mark.parametrize(
    "sql, keyword, reads",
    [
        ('/* {"app": "dbt"} */\nshow tables in d', "show", False),
        ("-- note\n  describe table extended d.t", "describe", False),
        ("drop table if exists d.t", "drop", False),
        ("create table d.z as select * from d.t", "create", True),
        ("  with c as (select 1) select * from c", "with", True),
        ("set spark.sql.x = 1", "set", True),
    ],
)
def test_statements_that_read_no_rows_are_not_analyzed(sql, keyword, reads):
    assert first_keyword(sql) == keyword
    assert reads_rows(sql) is reads


def test_guard_trust_is_per_thread_and_node():
    guard = TenantGuard(lambda: "acme")
    assert guard.needs_check("select 1", "model.p.a")
    guard.trust_node("model.p.a", True)
    assert not guard.needs_check("select 1", "model.p.a")
    assert guard.needs_check("select 1", "model.p.b")  # another node: trust never carries
    guard.trust_node("model.p.a", False)
    assert guard.needs_check("select 1", "model.p.a")
    with guard.trusted():
        assert not guard.needs_check("select 1", "model.p.b")
    assert not TenantGuard(lambda: None).needs_check("select 1", "model.p.a")


def test_guard_looks_a_table_up_once_and_names_it_in_the_error():
    guard = TenantGuard(lambda: "acme")
    lookups = []

    def properties(table):
        lookups.append(table)
        return {"jammi.definition": "7b7d"}

    for _ in range(2):
        with pytest.raises(TenantReadError, match=r"model 'x' reads d\.t without"):
            guard.check_plan(parse_plan(FORGED, "acme"), "model 'x'", properties)
    guard.check_plan(parse_plan(SCOPED, "acme"), "model 'x'", properties)
    assert lookups == ["d.t"]
    assert guard.statements_checked == 3 and guard.table_lookups == 1
