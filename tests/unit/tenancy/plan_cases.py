"""The statements whose printed plans the tenant guard's text reader is tested on, and
what the guard must decide for each (tests/unit/tenancy/test_golden_plans.py).

tests/capture_plans.py runs each statement's ``EXPLAIN EXTENDED`` on a real Spark
session (Spark 3.5 and 4 on parquet, Spark 3.5 with Delta and with Iceberg) and stores
the text under tests/unit/tenancy/plans/<spark line>-<format>/<case>.txt. The expected
reads are written here by intent (which tenant tables a statement reads without the
adapter's scope), not taken from the reader's output.

Tables (schema ``d``): ``t`` (sku, price, tenant_id) is a tenant-scoped mutable table;
``__topic_x`` (_offset, op, tenant_id) is a topic's backing table (scoped by its name);
``v`` is a view over it; ``sink`` (sku) is an ordinary table.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.jammi.tenancy.plan import scoped_relation_sql

TENANT = "acme"
SCOPED_T = scoped_relation_sql("d.t", TENANT)
SCOPED_V = scoped_relation_sql("d.v", TENANT)
MERGE_FORMATS = ("delta", "iceberg")
EVERY_FORMAT = ("parquet", *MERGE_FORMATS)


@dataclass(frozen=True)
class PlanCase:
    name: str
    sql: str  # {fmt}: the lane's table format
    unscoped: tuple[str, ...]  # the tenant tables read without the adapter's scope
    formats: tuple[str, ...] = EVERY_FORMAT


CASES = (
    PlanCase("plain_read", "select * from d.t", ("d.t",)),
    PlanCase("scoped_read", f"select * from {SCOPED_T} p", ()),
    PlanCase(
        "forged_scope",
        "select * from d.t where (tenant_id = 'acme' or tenant_id is null) or true",
        ("d.t",),
    ),
    PlanCase("scoped_cte", f"with c as (select * from {SCOPED_T} p) select * from c", ()),
    PlanCase(
        "unscoped_in_subquery",
        f"with c as (select * from {SCOPED_T} p) select * from c where sku in (select op from d.v)",
        ("d.__topic_x",),
    ),
    PlanCase("scoped_topic_view", f"select * from {SCOPED_V} e", ()),
    PlanCase(
        "forged_tenant_column",
        "select * from (select sku, 'acme' as tenant_id from d.t) x "
        "where (tenant_id = 'acme' or tenant_id is null)",
        ("d.t",),
    ),
    PlanCase("create_view", "create view d.w as select sku\nfrom d.t\nwhere 1 = 1", ("d.t",)),
    PlanCase("ctas", "create table d.z using {fmt} as select sku, tenant_id from d.t", ("d.t",)),
    PlanCase(
        "ctas_scoped",
        f"create table d.z using {{fmt}} as select sku, tenant_id from {SCOPED_T} p",
        (),
    ),
    PlanCase("insert_select", "insert into d.sink select sku from d.t", ("d.t",)),
    PlanCase("insert_scoped", f"insert into d.sink select sku from {SCOPED_T} p", ()),
    PlanCase(
        "delete", "delete from d.t where tenant_id = 'globex'", ("d.t",), formats=MERGE_FORMATS
    ),
    PlanCase(
        "merge",
        "merge into d.sink s using d.t p on s.sku = p.sku "
        "when not matched then insert (sku) values (p.sku)",
        ("d.t",),
        formats=MERGE_FORMATS,
    ),
    PlanCase(
        "merge_scoped",
        f"merge into d.sink s using {SCOPED_T} p on s.sku = p.sku "
        "when not matched then insert (sku) values (p.sku)",
        (),
        formats=MERGE_FORMATS,
    ),
)

# The engines the plans are captured on: (folder, PySpark line, table format).
ENGINES = (
    ("spark3.5-parquet", "3.5", "parquet"),
    ("spark3.5-delta", "3.5", "delta"),
    ("spark3.5-iceberg", "3.5", "iceberg"),
    ("spark4-parquet", "4", "parquet"),
    ("spark4.1-delta", "4", "delta"),
    ("spark4.1-iceberg", "4", "iceberg"),
)


def is_tenant_table(table: str) -> bool:
    return table == "d.t"
