"""The rebuild of an existing Delta table without a replace-as-select (engine/delta_replace.py
and macros/dbt_spark_overrides/table.sql), offline: which Spark versions need it, how the mode is
chosen, and the statements the macro runs and returns."""

from __future__ import annotations

import os
import re
from types import SimpleNamespace

import jinja2
import pytest

from dbt.adapters.jammi.engine.delta_replace import (
    OVERWRITE,
    REPLACE,
    column_list_sql,
    contract_ordered,
    partition_columns,
    replace_as_select_unsupported,
    replace_mode,
    table_columns,
)
from dbt.adapters.jammi.engine.delta_replace_service import DeltaReplaceService

RELATIONS = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "..",
    "dbt",
    "include",
    "jammi",
    "macros",
    "dbt_spark_overrides",
)


@pytest.mark.parametrize(
    "version, unsupported",
    [
        ("3.5.7 a1b2c3", True),
        ("3.5.6", True),
        ("3.5.5", False),
        ("3.4.1", False),
        ("4.0.1 d4e5", False),
        ("", False),
        (None, False),
    ],
)
def test_which_spark_cannot_replace_as_select_into_delta(version, unsupported):
    assert replace_as_select_unsupported(version) is unsupported


def test_partition_columns_from_session_list_and_thrift_json():
    assert partition_columns(["region", "day"]) == ["region", "day"]
    assert partition_columns('["region"]') == ["region"]
    assert partition_columns("[]") == []
    assert partition_columns("") == []
    assert partition_columns(None) == []


def test_table_columns_stop_at_the_partition_section():
    rows = [
        ("id", "bigint", None),
        ("region", "string", None),
        ("# Partition Information", "", ""),
        ("# col_name", "data_type", "comment"),
        ("region", "string", None),
    ]
    assert table_columns(rows) == [["id", "bigint"], ["region", "string"]]


COLUMNS = [["id", "bigint"], ["amount", "decimal(10,2)"]]


def test_same_columns_and_partitions_overwrite():
    same = [["ID", "BIGINT"], ["amount", "decimal(10, 2)"]]
    assert replace_mode(COLUMNS, same, ["id"], ["ID"]) == OVERWRITE


@pytest.mark.parametrize(
    "query, wanted, existing",
    [
        ([["id", "bigint"], ["amount", "decimal(12,2)"]], [], []),  # a type changed
        ([["amount", "decimal(10,2)"], ["id", "bigint"]], [], []),  # order changed
        ([*COLUMNS, ["note", "string"]], [], []),  # a column added
        ([["id", "bigint"]], [], []),  # a column removed
        (COLUMNS, ["id"], []),  # partitioning added
        (COLUMNS, [], ["id"]),  # partitioning removed
    ],
)
def test_any_schema_or_partitioning_change_replaces(query, wanted, existing):
    assert replace_mode(query, COLUMNS, wanted, existing) == REPLACE


def test_column_list_quotes_names():
    assert column_list_sql([["a`b", "int"], ["c", "map<string,int>"]]) == (
        "(`a``b` int, `c` map<string,int>)"
    )


class Table:
    def __init__(self, rows, columns=()):
        self.rows = rows
        self.columns = columns


class DetailRow(dict):
    pass


class Sql:
    """The service's SQL interface, its statements answered by ``answer`` instead of
    Spark, on a Spark that cannot replace-as-select into Delta unless told."""

    def __init__(self, answer, spark="3.5.7"):
        self.answer, self.spark = answer, spark

    def execute(self, sql, fetch=False):
        return None, self.answer(sql)

    def trusted(self, sql):
        return self.answer(sql)

    def spark_version(self):
        return self.spark


def Adapter(answer, spark="3.5.7"):  # noqa: N802 - the face's one method, as Jinja calls it
    return SimpleNamespace(delta_replace_plan=DeltaReplaceService(Sql(answer, spark)).plan)


def render_rebuild(query_rows, table_rows, partitions, config):
    ran: list[str] = []

    def run_query(sql):
        ran.append(flat(sql))
        if sql.startswith("describe query"):
            return Table(query_rows)
        if sql.startswith("describe table"):
            return Table(table_rows)
        if sql.startswith("describe detail"):
            return Table([DetailRow(partitionColumns=partitions)])
        return Table([])

    class Config(dict):
        def get(self, key, default=None):
            return dict.get(self, key, default)

    cfg = Config(config)
    props = cfg.get("tblproperties")
    context = {
        "adapter": Adapter(run_query),
        "config": cfg,
        "run_query": run_query,
        "file_format_clause": lambda: "using delta",
        "options_clause": lambda: "",
        "tblproperties_clause": lambda: (
            "tblproperties (" + ", ".join(f"'{k}' = '{v}'" for k, v in props.items()) + ")"
            if props
            else ""
        ),
        "partition_cols": lambda label: (
            f"{label} ({cfg['partition_by']})" if cfg.get("partition_by") else ""
        ),
        "location_clause": lambda: "",
        "comment_clause": lambda: "",
    }
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(RELATIONS), extensions=["jinja2.ext.do"]
    )
    module = env.get_template("table.sql").make_module(context)
    plan = context["adapter"].delta_replace_plan("s.t", "select 1 as id", cfg.get("partition_by"))
    returned = flat(module.get_delta_rebuild_sql("s.t", "select 1 as id", plan))
    return ran, returned


def flat(sql) -> str:
    return re.sub(r"\s+", " ", str(sql)).strip()


def test_rebuild_with_same_schema_is_one_insert_overwrite():
    cols = [("id", "int", None)]
    ran, returned = render_rebuild(cols, cols, [], {"contract": Contract()})
    assert returned == "insert overwrite table s.t select 1 as id"
    assert not any(s.startswith(("replace", "alter")) for s in ran)


def test_rebuild_with_same_schema_sets_the_models_tblproperties_first():
    cols = [("id", "int", None)]
    ran, returned = render_rebuild(
        cols, cols, [], {"contract": Contract(), "tblproperties": {"team": "x"}}
    )
    assert "alter table s.t set tblproperties ('team' = 'x')" in ran
    assert returned.startswith("insert overwrite table s.t")


def test_rebuild_with_new_schema_replaces_then_inserts():
    ran, returned = render_rebuild(
        [("id", "int", None), ("label", "string", None)],
        [("id", "int", None)],
        [],
        {"contract": Contract(), "partition_by": "label"},
    )
    assert "replace table s.t (`id` int, `label` string) using delta partitioned by (label)" in ran
    assert returned == "insert into s.t select 1 as id"


class Contract:
    enforced = False


def test_a_contract_orders_the_columns_as_its_subquery_selects_them():
    output = [["b", "string"], ["A", "int"], ["extra", "int"]]
    assert contract_ordered(output, ["a", "b"]) == [["A", "int"], ["b", "string"]]
    assert contract_ordered(output, None) == output
    # a contract column the output lacks: unchanged, the contract's check fails the model
    assert contract_ordered(output, ["a", "missing"]) == output


def test_an_unaffected_spark_keeps_dbt_sparks_replace_as_select_without_a_statement():
    ran: list[str] = []

    unaffected = Adapter(lambda sql: ran.append(sql), spark="4.0.1")
    plan = unaffected.delta_replace_plan("s.t", "select 1", None)
    assert plan["mode"] == "replace_as_select" and ran == []


def test_an_enforced_contract_plans_the_rebuild_in_the_contracts_column_order():
    def answer(sql):
        if sql.startswith("describe query"):
            return Table([("label", "string", None), ("id", "int", None)])
        if sql.startswith("describe table"):
            return Table([("id", "int", None), ("label", "string", None)])
        return Table([DetailRow(partitionColumns=[])])

    adapter = Adapter(answer)
    assert adapter.delta_replace_plan("s.t", "q", None, ["id", "label"])["mode"] == "overwrite"
    assert adapter.delta_replace_plan("s.t", "q", None)["mode"] == "replace"
