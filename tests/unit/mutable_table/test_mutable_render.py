"""Render the mutable_table planner and appliers offline (no dbt run, no Spark JVM).

The renderer is a plain Jinja environment over the adapter's macro folder with the few
context members those macros use; tests/functional/mutable_table/test_merge_parse.py
parses the same statements with Spark's own SQL parser.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

import jinja2
import pytest

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.mutable_table.commit import version_commit
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.planner_rules import PlannerRules, planner_rules
from dbt.adapters.jammi.mutable_table.rules import (
    changelog_sql,
    ttl,
)

NOW_MS = 1_800_000_000_000
MACROS = Path(__file__).resolve().parents[3] / "dbt" / "include" / "jammi" / "macros"
FILES = (
    "model_helpers/tenant.sql",
    "mutable_table/planner/version_rule.sql",
    "mutable_table/planner/change_set.sql",
    "mutable_table/planner/merge_functions.sql",
    "mutable_table/planner/ttl.sql",
    "mutable_table/apply_merge.sql",
    "mutable_table/merge_batch.sql",
    "mutable_table/apply_rewrite.sql",
    "mutable_table/checks.sql",
    "mutable_table/planner/tombstones.sql",
    "mutable_table/planner/identity.sql",
    "mutable_table/planner/encoding.sql",
    "mutable_table/planner/scd2_change_set.sql",
)


class _Adapter:
    def __init__(self, env: jinja2.Environment) -> None:
        self.env = env

    def dispatch(self, name: str, package: Optional[str] = None) -> Any:
        return self.env.globals[f"default__{name}"]

    def sql_string(self, value: Any) -> str:
        return sql_string_literal(str(value))

    def quote_column(self, name: str) -> str:
        return quote_identifier(name)

    def mutable_planner(self, defn: dict) -> PlannerRules:
        return planner_rules(defn)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"]
    )
    env.globals.update(
        adapter=_Adapter(env), run_started_at=None, **{"return": lambda value: value}
    )
    # a module sees the macros loaded before it, so a second pass resolves files that
    # call each other (change_set.sql <-> merge_functions.sql, ttl.sql), as dbt does
    for _ in range(2):
        for path in FILES:
            module = env.get_template(path, globals={}).make_module()
            env.globals.update(
                {k: v for k, v in vars(module).items() if isinstance(v, jinja2.runtime.Macro)}
            )
    return env


ENV = _environment()


# The macros that plan with the attempt's definition (adapter.mutable_plan_prepare).
PLANNED = {"get_change_set_sql", "get_mutable_change_set_sql", "get_merge_batch_sql"}


def planned(defn: dict) -> dict:
    """The attempt's definition as mutable_plan_prepare hands it to the planner: a copy
    with its clock (NOW_MS unless the test set one) and ttl_expired_in_plan."""
    return {
        "now_ms": NOW_MS,
        **defn,
        "ttl_expired_in_plan": ttl.expired_in_plan(defn),
    }


def render(macro: str, *args: Any) -> str:
    if macro in PLANNED and isinstance(args[0], dict):
        args = (planned(args[0]), *args[1:])
    return " ".join(str(ENV.globals[macro](*args)).split())


def definition(schema: dict, **config: Any) -> dict:
    return MutableTableDefinition.from_config("prices", schema, config).to_dict()


PRICES = {"sku": "string", "price": "bigint", "label": "string", "v": "bigint"}


def merge_sql(defn: dict) -> str:
    return render("get_merge_change_set_sql", defn, "analytics.prices", "prices__jammi_change_set")


def test_merge_upsert_and_delete():
    sql = merge_sql(definition(PRICES, primary_key=["sku"]))
    assert sql.startswith("merge into analytics.prices as t using prices__jammi_change_set as s")
    assert "on t.tenant_id <=> s.tenant_id and t.`sku` = s.`sku`" in sql
    assert "when matched and s._change = 'delete' then delete" in sql
    assert (
        "when matched and s._change = 'update' then update set "
        "t.`price` = s.`price`, t.`label` = s.`label`, t.`v` = s.`v`"
    ) in sql
    assert (
        "when not matched and s._change = 'insert' then insert "
        "(`sku`, `price`, `label`, `v`, tenant_id) "
        "values (s.`sku`, s.`price`, s.`label`, s.`v`, s.tenant_id)"
    ) in sql


def test_merge_composite_key_only_table_has_no_update_clause():
    sql = merge_sql(definition({"a": "int", "b": "string"}, primary_key=["a", "b"]))
    assert "t.`a` = s.`a` and t.`b` = s.`b`" in sql
    assert "update set" not in sql
    assert "then insert (`a`, `b`, tenant_id)" in sql


def test_merge_scd2_keys_rows_by_valid_from_and_updates_valid_to():
    defn = definition(PRICES, primary_key=["sku"], history="scd2")
    sql = merge_sql(defn)
    assert "t.`sku` = s.`sku` and t.`valid_from` = s.`valid_from`" in sql
    assert "t.`valid_to` = s.`valid_to`" in sql
    assert "t.`valid_from` = s.`valid_from`," not in sql.split("update set")[1]


def versioned_partial_definition(**extra) -> dict:
    """Version rule, partial updates and delete_when, with every column in the batch."""
    defn = definition(
        PRICES,
        primary_key=["sku"],
        version_column="v",
        partial_updates=True,
        delete_when="label = 'gone'",
        **extra,
    )
    defn["batch_columns"] = ["sku", "price", "label", "v"]
    return defn


def merge_batch_sql(defn: dict, tenant: Optional[str] = None, drop_unchanged=False) -> str:
    return render(
        "get_merge_batch_sql",
        defn,
        "analytics.prices",
        "prices__jammi_batch",
        tenant,
        drop_unchanged,
    )


def test_merge_batch_puts_the_planner_rules_into_the_merge_clauses():
    defn = versioned_partial_definition()
    sql = merge_batch_sql(defn)
    # the batch is the source: no change set, no statement before the MERGE
    assert "using ( select * from ( select *, row_number() over batch_key as _rn" in sql
    assert "from prices__jammi_batch" in sql and "change_set" not in sql
    assert "analytics.prices" not in sql.split("using", 1)[1]  # not a snapshot feed's
    # one tenant per run (here: the shared rows): the key alone joins, within the scope
    assert "on t.`sku` = s.`sku` and t.tenant_id is null when matched" in sql
    # with deletes under a version rule, a tombstoned row matches no clause (tombstones.sql)
    newer = "coalesce(s.`v` > t.`v`, true) and not s._tombstoned"
    assert f"when matched and s._is_delete and {newer} then delete" in sql
    # the no-op test: an update that changes no value is no clause's row
    assert (
        f"when matched and not s._is_delete and {newer} and not ("
        "coalesce(s.`price`, t.`price`) <=> t.`price` and coalesce(s.`label`, t.`label`) "
        "<=> t.`label` and coalesce(s.`v`, t.`v`) <=> t.`v`) then update set "
        "t.`price` = coalesce(s.`price`, t.`price`)"
    ) in sql
    assert "when not matched and not s._is_delete and not s._tombstoned then insert" in sql
    assert "not matched by source" not in sql
    # one window decides the key's row and finds its duplicates and NULLs
    assert "partition by `sku` order by `v` desc" in sql
    assert "when `sku` is null then raise_error('jammi-batch-check:null_key')" in sql
    assert "when (`v` is null) then raise_error('jammi-batch-check:null_version')" in sql
    assert (
        "when _rn = 2 and _version_above = `v` then "
        "raise_error('jammi-batch-check:duplicate_version') else _rn = 1 end"
    ) in sql


def test_a_snapshot_feeds_source_drops_the_rows_that_change_nothing():
    """hard_deletes: delete (the batch is the scope's complete set): the stored rows are
    read inside the MERGE's USING (the MERGE's own transaction); a batch row stays when
    its key is not stored, or it is newer and deletes or changes a value; its checks run
    before the join (the window is below it)."""
    sql = merge_batch_sql(versioned_partial_definition(hard_deletes="delete"), None, True)
    source = sql.split(" as s on ", 1)[0]
    assert source.count("raise_error(") == 3
    assert source.index("raise_error(") < source.index("full join")
    assert (
        "as s full join (select * from analytics.prices where tenant_id is null) as stored "
        "on stored.`sku` = s.`sku` and stored.tenant_id is null "
        "where s._rn is null or stored.`sku` is null"
    ) in source
    newer = "coalesce(s.`v` > stored.`v`, true) and not s._tombstoned"
    assert f"or s._is_delete and {newer} or not s._is_delete and {newer}" in source
    assert (
        "and not (coalesce(s.`price`, stored.`price`) <=> stored.`price` and "
        "coalesce(s.`label`, stored.`label`) <=> stored.`label` and "
        "coalesce(s.`v`, stored.`v`) <=> stored.`v`) ) as s"
    ) in sql
    assert "coalesce(s._tombstoned, false) as _tombstoned" in source
    # no delete_when: no delete test in the source
    plain = merge_batch_sql(definition(PRICES, primary_key=["sku"], hard_deletes="delete"))
    assert "or s._is_delete" not in plain.split(" as s on ", 1)[0]
    # tenant_from, unbound: every tenant's stored rows, each row's own tenant
    each = merge_batch_sql(
        definition(
            {**PRICES, "org": "string"},
            primary_key=["sku"],
            tenant_from="org",
            hard_deletes="delete",
        ),
        None,
        True,
    )
    assert (
        "full join (select * from analytics.prices where true) as stored "
        "on stored.tenant_id <=> s.tenant_id and stored.`sku` = s.`sku` where"
    ) in each


def test_a_snapshot_with_hard_deletes_deletes_the_absent_keys_from_the_source():
    """hard_deletes: delete -- the stored keys of the scope the batch lacks come from a
    full join as `_absent` rows the MERGE deletes; no WHEN NOT MATCHED BY SOURCE, which
    would delete the keys of the dropped rows too."""
    defn = definition(PRICES, primary_key=["sku"], hard_deletes="delete")
    sql = merge_batch_sql(defn, "acme", True)
    assert "not matched by source" not in sql
    assert (
        "full join (select * from analytics.prices where tenant_id = 'acme') as stored "
        "on stored.`sku` = s.`sku` and stored.tenant_id = 'acme' "
        "where s._rn is null or stored.`sku` is null or"
    ) in sql
    assert "case when s._rn is null then stored.`sku` else s.`sku` end as `sku`" in sql
    assert "case when s._rn is null then stored.tenant_id else s.tenant_id end" in sql
    assert "coalesce(s._is_delete, true) as _is_delete, s._rn is null as _absent" in sql
    assert " when matched and s._absent then delete when matched and not s._is_delete" in sql
    # not a snapshot feed's batch: every batch row, and the absent keys by the clause
    plain = merge_batch_sql(defn, "acme")
    assert "when not matched by source and t.tenant_id = 'acme' then delete" in plain
    assert "_absent" not in plain and "stored" not in plain


def test_merge_batch_without_version_rejects_any_second_row_and_deletes_by_scope():
    defn = definition(PRICES, primary_key=["sku"], hard_deletes="delete")
    sql = merge_batch_sql(defn, tenant="x'); drop table t; --")
    literal = "'x\\'); drop table t; --'"
    assert f"{literal} as tenant_id" in sql
    assert f"on t.`sku` = s.`sku` and t.tenant_id = {literal} when matched" in sql
    assert f"when not matched by source and t.tenant_id = {literal} then delete" in sql
    assert "when _rn = 2 then raise_error('jammi-batch-check:duplicate_key')" in sql
    assert "when matched and s._is_delete" not in sql
    assert "when matched and not s._is_delete and true and not (s.`price` <=> t.`price`" in sql


def test_merge_batch_with_tenant_from_matches_each_rows_own_tenant():
    defn = definition({**PRICES, "org": "string"}, primary_key=["sku"], tenant_from="org")
    sql = merge_batch_sql(defn)
    assert "cast(`org` as string) as tenant_id" in sql
    assert "on t.tenant_id <=> s.tenant_id and t.`sku` = s.`sku` when matched" in sql
    assert "partition by tenant_id, `sku` order by `sku`" in sql


def test_merge_batch_key_only_table_inserts_only():
    sql = merge_batch_sql(definition({"a": "int", "b": "string"}, primary_key=["a", "b"]))
    assert "update set" not in sql
    assert "when `a` is null or `b` is null then raise_error" in sql
    assert "then insert (`a`, `b`, tenant_id)" in sql


def change_set_sql(defn: dict, target: Optional[str] = "analytics.prices", tenant=None) -> str:
    return render("get_change_set_sql", defn, "prices__jammi_batch", target, tenant)


def test_change_set_version_rule_partial_updates_and_delete_when():
    defn = versioned_partial_definition()
    sql = change_set_sql(defn)
    assert "order by `v` desc" in sql
    assert "coalesce(s_v > t_v, true)" in sql
    assert "coalesce(s_price, t_price) <=> t_price" in sql
    assert "coalesce((label = 'gone'), false) as is_delete" in sql
    assert "left join target as t" in sql
    assert "where tenant_id is null" in sql  # unbound, no tenant_from: shared rows


def test_change_set_hard_deletes_bound_tenant_is_a_literal():
    defn = definition(PRICES, primary_key=["sku"], hard_deletes="delete")
    sql = change_set_sql(defn, tenant="x'); drop table t; --")
    assert "full outer join target as t" in sql
    literal = "'x\\'); drop table t; --'"
    assert f"{literal} as tenant_id" in sql
    assert f"where tenant_id = {literal}" in sql
    # the quote inside the value never ends the literal
    assert sql.count("drop table") == 2


def test_change_set_first_run_plans_against_an_empty_target():
    sql = change_set_sql(definition(PRICES, primary_key=["sku"]), target=None)
    assert "cast(null as string) as tenant_id where 1 = 0" in sql


def test_missing_columns_are_null_in_the_batch():
    defn = definition(PRICES, primary_key=["sku"], partial_updates=True)
    defn["batch_columns"] = ["sku", "price"]
    sql = change_set_sql(defn)
    assert "cast(null as string) as `label`" in sql
    assert "cast(`price` as bigint) as `price`" in sql


def test_rewrite_writes_the_next_state_sorted_by_indexes():
    defn = definition(
        PRICES,
        primary_key=["sku"],
        ordering_column="v",
        indexes=[{"name": "by_label", "columns": ["label"], "unique": True}],
    )
    next_state = render("get_next_state_sql", defn, "analytics.prices", "cs")
    sql = " ".join(
        version_commit.write_version_sql(
            defn, "file:/w/prices/v0000000002_ab", "parquet", next_state, None
        ).split()
    )
    assert sql.startswith(
        "insert overwrite directory 'file:/w/prices/v0000000002_ab' using parquet"
    )
    assert "left anti join" in sql and "union all" in sql
    assert sql.endswith("sort by `v`, `label`")
    assert "raise_error" not in sql


def test_zorder_statement_for_delta_indexes():
    defn = definition(
        PRICES,
        primary_key=["sku"],
        indexes=[{"name": "by_label", "columns": ["label", "price"]}],
    )
    assert version_commit.zorder_sql(defn, "analytics.prices", "delta") == (
        "optimize analytics.prices zorder by (`label`, `price`)"
    )
    assert version_commit.zorder_sql(definition(PRICES, primary_key=["sku"]), "t", "delta") == ""


def test_iceberg_indexes_set_the_write_order():
    defn = definition(
        PRICES,
        primary_key=["sku"],
        indexes=[{"name": "by_label", "columns": ["label", "price"]}],
    )
    assert version_commit.zorder_sql(defn, "analytics.prices", "iceberg") == (
        "alter table analytics.prices write ordered by `label`, `price`"
    )
    assert version_commit.zorder_sql(definition(PRICES, primary_key=["sku"]), "t", "iceberg") == ""


@pytest.mark.parametrize("columns", [["sku"], ["sku", "label"]])
def test_unique_index_check_groups_per_tenant(columns):
    defn = definition(PRICES, primary_key=["sku"])
    index = {"name": "i", "columns": columns, "unique": True}
    sql = render("get_unique_index_violations_sql", defn, index, "select 1")
    assert re.search(r"group by tenant_id, `sku`", sql)
    assert "having count(*) > 1" in sql


def test_scd2_unique_index_constrains_open_rows_unless_it_names_the_interval():
    defn = definition(PRICES, primary_key=["sku"], history="scd2")
    by_label = {"name": "by_label", "columns": ["label"], "unique": True}
    sql = render("get_unique_index_violations_sql", defn, by_label, "select 1")
    assert "`label` is not null and `valid_to` is null" in sql
    by_interval = {"name": "by_interval", "columns": ["label", "valid_from"], "unique": True}
    sql = render("get_unique_index_violations_sql", defn, by_interval, "select 1")
    assert "`valid_to` is null" not in sql
    plain = render(
        "get_unique_index_violations_sql",
        definition(PRICES, primary_key=["sku"]),
        by_label,
        "select 1",
    )
    assert "valid_to" not in plain


def statements_for_parsing() -> dict[str, str]:
    """Every statement shape the appliers emit, for the Spark parser test."""
    scenarios = {
        "plain": definition(PRICES, primary_key=["sku"]),
        "versioned_partial": definition(
            PRICES,
            primary_key=["sku"],
            version_column="v",
            partial_updates=True,
            delete_when="label = 'gone'",
            hard_deletes="delete",
        ),
        "key_only": definition({"a": "int", "b": "string"}, primary_key=["a", "b"]),
        "scd2": definition(PRICES, primary_key=["sku"], history="scd2"),
    }
    out = {}
    for name, defn in scenarios.items():
        out[f"merge_{name}"] = merge_sql(defn)
        if defn["history"] != "scd2":
            out[f"merge_batch_{name}"] = merge_batch_sql(defn, tenant="o'brien")
            out[f"merge_batch_snapshot_{name}"] = merge_batch_sql(defn, "o'brien", True)
        if defn["history"] != "scd2":
            out[f"change_set_{name}"] = change_set_sql(defn, tenant="o'brien")
            next_state = render("get_next_state_sql", defn, "analytics.prices", "cs")
            out[f"write_{name}"] = version_commit.write_version_sql(
                defn, "/tmp/x", "parquet", next_state, None
            )
    return out


def test_encoding_macros():
    assert render("to_epoch_millis", "updated_at") == "unix_millis(cast(updated_at as timestamp))"
    assert render("to_scaled_bigint", "price", 2) == (
        "cast(round(cast(price as decimal(38, 2)) * 100, 0) as bigint)"
    )


def test_the_planner_checks_the_batch_on_its_way_when_asked():
    """checks_in_plan (rewrite formats, nothing written before the staging): the staged
    change set's own window rejects NULL keys and duplicates; without it the planner
    leaves them to the separate check query."""
    defn = definition(PRICES, primary_key=["sku"])
    assert "jammi-batch-check" not in change_set_sql(defn)
    defn["checks_in_plan"] = True
    sql = change_set_sql(defn)
    assert "when `sku` is null then raise_error('jammi-batch-check:null_key')" in sql
    assert "when _rn = 2 then raise_error('jammi-batch-check:duplicate_key')" in sql
    assert "select *, _rn as rn, false as restarted from (" in sql
    versioned = versioned_partial_definition()
    versioned["checks_in_plan"] = True
    sql = change_set_sql(versioned)
    assert "when (`v` is null) then raise_error('jammi-batch-check:null_version')" in sql
    assert (
        "_rn = 2 and _version_above = `v` then raise_error('jammi-batch-check:duplicate_version')"
        in sql
    )


@pytest.mark.parametrize(
    "topic_format, config, carries",
    [("parquet", {}, True), ("delta", {}, False), ("parquet", {"ttl_ms": 1000}, False)],
)
def test_a_changelog_plan_carries_the_stored_values(topic_format, config, carries):
    """With a changelog on a rewrite format the change set carries each changed row's
    stored values, and the changelog's staging reads them there instead of the table."""
    defn = definition(PRICES, primary_key=["sku"], changelog=True, **config)
    defn["changelog_topic"] = {
        "file_format": topic_format,
        "table_format": topic_format,
        "location": "file:/t/topic",
    }
    sql = change_set_sql(defn)
    assert ("t_price as _jammi_prev_1" in sql) is carries
    if topic_format == "delta":
        return
    staged = " ".join(
        changelog_sql.stage_sql(
            defn, "analytics.prices", "prices__jammi_changes_r", 4, "file:/t/topic/_staged"
        ).split()
    )
    assert ("from analytics.prices as t join" in staged) is not carries
    # carried: one change-set row is one event, nothing paired by a group by
    assert ("group by _commit_version" in staged) is not carries
    if carries:
        assert "case when _change <> 'insert' then _jammi_prev_1 end" in staged
        assert "case when _change <> 'delete' then `price` end" in staged


def test_a_map_and_a_variant_change_by_their_json_text():
    """Spark compares neither (a variant is Spark 4's): the planner compares JSON text."""
    variant = render("mutable_same_value", "s_payload", "t_payload", "variant")
    assert variant == "to_json(s_payload) <=> to_json(t_payload)"
    nested = render("mutable_same_value", "s_p", "t_p", "array<variant>")
    assert nested == "to_json(s_p) <=> to_json(t_p)"
    assert render("mutable_same_value", "a", "b", "bigint") == "a <=> b"
    assert render("mutable_same_value", "a", "b", "map<string,int>").startswith(
        "to_json(array_sort(map_entries(a)"
    )
