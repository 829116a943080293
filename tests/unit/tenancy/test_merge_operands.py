"""The tenant guard over a remote connection on Delta's MERGE: the one-line
``MergeIntoCommand`` print hides the operands, so each is analyzed on its own; no Spark
here (a fake cursor answers EXPLAIN with texts Spark 3.5 + Delta 3.2 printed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dbt.adapters.jammi.tenancy.merge_operands import MergeOperandsError, merge_operands
from dbt.adapters.jammi.tenancy.plan import unscoped_reads
from dbt.adapters.jammi.tenancy.statement_plans import statement_plan

MERGE_PRINT = """== Analyzed Logical Plan ==
num_affected_rows: bigint, num_updated_rows: bigint, num_deleted_rows: bigint, num_inserted_rows: bigint
MergeIntoCommand SubqueryAlias s, SubqueryAlias spark_catalog.d.sink, `spark_catalog`.`d`.`sink`, Delta[version=0, file:/w/d.db/sink], (sku#61 = sku#63), [Insert [actions: [`sku` = sku#63]]], false

== Optimized Logical Plan ==
"""  # noqa: E501

SINK = """== Analyzed Logical Plan ==
sku: string
Project [sku#1]
+- SubqueryAlias t
   +- SubqueryAlias spark_catalog.d.sink
      +- Relation spark_catalog.d.sink[sku#1] parquet

== Optimized Logical Plan ==
"""

PRICES = """== Analyzed Logical Plan ==
sku: string, tenant_id: string
Project [sku#5, tenant_id#6]
+- SubqueryAlias s
   +- SubqueryAlias spark_catalog.d.prices
      +- Relation spark_catalog.d.prices[sku#5,tenant_id#6] parquet

== Optimized Logical Plan ==
"""

SCOPED_PRICES = """== Analyzed Logical Plan ==
sku: string, tenant_id: string
Project [sku#5, tenant_id#6]
+- SubqueryAlias s
   +- Project [sku#5, tenant_id#6]
      +- Filter ((tenant_id#6 = acme) OR isnull(tenant_id#6))
         +- SubqueryAlias spark_catalog.d.prices
            +- Relation spark_catalog.d.prices[sku#5,tenant_id#6] parquet

== Optimized Logical Plan ==
"""


class FakeCursor:
    def __init__(self, answers: dict[str, str], asked: list[str]) -> None:
        self.answers, self.asked, self.text = answers, asked, ""

    def execute(self, sql, bindings=None):
        self.asked.append(sql)
        self.text = self.answers[sql]

    def fetchall(self):
        return [(self.text,)]


def remote(answers: dict[str, str], asked: list[str]):
    handle = SimpleNamespace(cursor=lambda: FakeCursor(answers, asked))
    return SimpleNamespace(credentials=SimpleNamespace(is_session=False), handle=handle)


LEAK = "merge into d.sink t using d.prices s on t.sku = s.sku when not matched then insert *"
SCOPED = (
    "merge into d.sink t using (select * from d.prices where (tenant_id = 'acme' or "
    "tenant_id is null)) s on t.sku = s.sku when not matched then insert *"
)


@pytest.mark.parametrize(
    "sql, source_plan, expected",
    [(LEAK, PRICES, ["d.prices"]), (SCOPED, SCOPED_PRICES, [])],
)
def test_a_delta_merge_is_checked_through_its_operands(sql, source_plan, expected):
    target, source = merge_operands(sql)
    asked: list[str] = []
    answers = {
        "explain extended " + sql: MERGE_PRINT,
        f"explain extended select * from {target}": SINK,
        f"explain extended select * from {source}": source_plan,
    }
    plan = statement_plan(remote(answers, asked), sql + ";", None, "acme")
    assert unscoped_reads(plan, lambda table: table == "d.prices") == expected
    assert asked == list(answers)  # the MERGE, then its target and its source


def test_operands_are_the_statements_own_characters():
    sql = (
        "MERGE INTO `d`.`sink` AS t USING (select * from d.p where x = 'on)' and y in "
        "(1, 2)) s ON t.sku = s.sku WHEN MATCHED THEN DELETE"
    )
    assert merge_operands(sql) == (
        "`d`.`sink` AS t",
        "(select * from d.p where x = 'on)' and y in (1, 2)) s",
    )
    assert merge_operands("merge into d.t using d.u on t.k = u.k when matched then delete") == (
        "d.t",
        "d.u",
    )


@pytest.mark.parametrize(
    "sql",
    [
        "select * from d.t",
        "merge into d.t on t.k = 1 when matched then delete",
        "merge into using d.u on 1 = 1 when matched then delete",
        "merge into d.t using (d.u on 1 = 1",
        "merge into d.t using 'unterminated",
    ],
)
def test_anything_but_a_merge_is_refused(sql):
    with pytest.raises(MergeOperandsError):
        merge_operands(sql)
