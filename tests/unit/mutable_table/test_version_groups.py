"""``version_groups`` (rules/version_groups.py): what a definition refuses, the batch a
key's rows combine into, and each value's guard in the planners. Its effect on stored
rows is tests/functional/mutable_table/test_version_groups.py."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.planner_rules import planner_rules
from dbt.adapters.jammi.mutable_table.rules import batch_rewrites, version_group_batch
from tests.unit.mutable_table.test_mutable_render import render

ORDERS = {
    "id": "int",
    "status": "string",
    "order_ver": "int",
    "carrier": "string",
    "ship_ver": "int",
    "ver": "bigint",
    "op": "string",
    "org": "string",
}
BATCH = [[name, kind] for name, kind in ORDERS.items()]
GROUPS = {"order_ver": ["status"], "ship_ver": ["carrier"]}


def definition(**config) -> dict:
    config.setdefault("primary_key", ["id"])
    config.setdefault("version_groups", GROUPS)
    config.setdefault("rule_columns", ["op", "org"])
    return MutableTableDefinition.from_config("orders", ORDERS, config).to_dict()


def refusal(**config) -> str:
    with pytest.raises(JammiValidationError) as raised:
        definition(**config)
    return str(raised.value)


def test_the_groups_are_recorded_only_when_set():
    assert definition(version_column="ver")["version_groups"] == GROUPS
    plain = MutableTableDefinition.from_config("orders", ORDERS, {"primary_key": ["id"]})
    assert "version_groups" not in plain.to_dict()


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        (
            {"order_ver": ["status"], "ship_ver": ["status"]},
            "column status is in two version groups",
        ),
        ({"order_ver": ["id"]}, "version_groups names id, which is a key column"),
        ({"order_ver": ["ver"]}, "version_groups names ver, which is a version_column column"),
        ({"order_ver": ["nope"]}, "version_groups column 'nope' is not in the model's output"),
        ({"order_ver": "status", "ship_ver": []}, "'version_groups.ship_ver' is empty"),
        (["order_ver"], "'version_groups' must map a version column to its columns"),
    ],
)
def test_a_group_that_cannot_mean_one_order_is_refused(groups, expected):
    message = refusal(version_column="ver", version_groups=groups)
    assert "mutable_table 'orders'" in message
    assert expected in message


def test_the_rules_a_group_cannot_follow_are_refused():
    assert "cannot be combined with history: scd2" in refusal(
        version_column="ver", history="scd2", valid_from="ver"
    )
    assert "merge_functions names ship_ver, a group's version" in refusal(
        version_column="ver", merge_functions={"ship_ver": "max"}
    )
    assert "'version_groups' with delete_when or truncate_when needs a version_column" in (
        refusal(delete_when="op = 'd'", version_groups={**GROUPS, "ver": ["op"]}, rule_columns=[])
    )
    assert "without a version_column every value column must be in a version group; ver is" in (
        refusal()
    )
    assert "rule_columns lists ship_ver, which version_groups names" in refusal(
        version_column="ver", rule_columns=["op", "ship_ver"]
    )


def test_a_map_version_does_not_order():
    schema = {**ORDERS, "tags": "map<string,int>"}
    with pytest.raises(JammiValidationError, match="is a map<string,int>, which does not order"):
        MutableTableDefinition.from_config(
            "orders",
            schema,
            {
                "primary_key": ["id"],
                "version_column": "ver",
                "version_groups": {"tags": ["status"]},
            },
        )


def combined(defn: dict, target: str | None = "analytics.orders", tenant=None) -> str:
    batch = version_group_batch.GroupedBatch.of(defn, BATCH, tenant)
    return " ".join(
        version_group_batch.combined_batch_sql(defn, "(src)", batch, target, tenant).split()
    )


def test_a_keys_rows_combine_each_part_at_its_own_newest_version():
    sql = combined(definition(version_column="ver"))
    assert "max_by(`status`, `order_ver`) as `status`" in sql
    assert "max(`order_ver`) as `order_ver`" in sql
    assert "max_by(`carrier`, `ship_ver`) as `carrier`" in sql
    # a column in no group at the newest version_column; a NULL version stays NULL
    assert "max_by(`op`, cast(`ver` as bigint)) as `op`" in sql
    assert (
        "case when count(*) > count(`ver`) then null else max_by(`ver`, cast(`ver` as bigint)) end"
        in sql
    )
    assert sql.endswith("group by `id`)")
    # no deletes: nothing restarts, the stored rows are not read
    assert "false as _jammi_restarted" in sql
    assert "analytics.orders" not in sql


def test_a_partial_update_column_takes_its_newest_non_null_value():
    sql = combined(definition(version_column="ver", partial_updates=["carrier"]))
    assert "max_by(`carrier`, case when `carrier` is not null then `ship_ver` end)" in sql
    assert "max_by(`status`, `order_ver`)" in sql


def test_a_fresh_delete_drops_the_rows_before_it_and_restarts_the_key():
    sql = combined(definition(version_column="ver", delete_when="op = 'd'"))
    assert "coalesce((op = 'd'), false) as _jammi_del" in sql
    # a delete counts only when newer than the stored version
    assert (
        "left join (select * from analytics.orders as stored where stored.tenant_id is null)" in sql
    )
    assert (
        "max(case when _jammi_del and coalesce(cast(`ver` as bigint) > _jammi_stored_version, "
        "true) then cast(`ver` as bigint) end) over (partition by `id`) as _jammi_deleted_at" in sql
    )
    assert "where coalesce(cast(`ver` as bigint) >= _jammi_deleted_at, true)" in sql
    assert (
        "max(_jammi_deleted_at) is not null and not max_by(_jammi_del, cast(`ver` as bigint)) "
        "as _jammi_restarted" in sql
    )
    first = combined(definition(version_column="ver", delete_when="op = 'd'"), None)
    assert "stored" not in first


def test_a_tenant_from_column_groups_the_rows_with_the_key():
    sql = combined(
        definition(version_column="ver", tenant_from="org", rule_columns=["op"]), tenant=None
    )
    assert sql.endswith("group by `id`, `org`)")


def test_a_merge_function_combines_the_rows_newer_than_its_groups_stored_version():
    sql = combined(
        definition(
            version_column="ver",
            rule_columns=["org"],
            merge_functions={"carrier": "last_non_null", "op": "max"},
        )
    )
    # the stored group versions are read beside the batch's rows
    assert "stored.`order_ver` as _jammi_stored_0, stored.`ship_ver` as _jammi_stored_1" in sql
    assert (
        "max_by(`carrier`, case when `carrier` is not null and coalesce(`ship_ver` > "
        "_jammi_stored_1, `ship_ver` is not null) then `ship_ver` end) as `carrier`" in sql
    )
    # a column in no group: fresh against the row's stored version
    assert (
        "max(`op`) filter (where coalesce(cast(`ver` as bigint) > _jammi_stored_version, true))"
        in sql
    )
    # a sum adds a re-delivered row once: identical rows collapse first
    assert "select distinct * from (src)" in combined(
        {**definition(version_column="ver"), "merge_functions": {"status": "sum"}}, None
    )


def test_the_ambiguity_check_compares_each_part_at_its_newest_version():
    defn = definition(version_column="ver")
    sql = " ".join(
        version_group_batch.ambiguous_rows_sql(
            defn, "(src)", version_group_batch.GroupedBatch.of(defn, BATCH, None)
        ).split()
    )
    assert "'version_column' as _jammi_part" in sql
    assert "max(`ship_ver`) over (partition by `id`) as _jammi_top" in sql
    assert "having count(distinct to_json(named_struct('f0', `carrier`)" in sql
    assert sql.endswith("limit 5")


def test_an_ambiguous_batch_is_refused_naming_the_key_and_the_group():
    defn = definition(version_column="ver")
    asked = []

    def run_sql(sql):
        asked.append(sql)
        return [(7, "ship_ver")]

    with pytest.raises(JammiValidationError) as raised:
        batch_rewrites.rewritten_batch(defn, "(src)", BATCH, None, None, run_sql)
    message = str(raised.value)
    assert "mutable_table 'orders'" in message
    assert "two different rows of key (id=7) at the newest ship_ver" in message
    assert "send one row per key and ship_ver value" in message
    assert len(asked) == 1


def test_a_clear_batch_is_combined_and_flagged():
    rewritten = batch_rewrites.rewritten_batch(
        definition(version_column="ver"), "(src)", BATCH, None, None, lambda sql: []
    )
    assert rewritten.source.startswith("(with _jammi_rows as")
    assert rewritten.columns[-1] == [version_group_batch.RESTARTED, "boolean"]
    assert rewritten.truncate_rows is None


def test_each_value_is_guarded_by_its_group_and_the_rest_by_the_version():
    rules = planner_rules(definition(version_column="ver"))
    status = rules.grouped_value("status", "s.`status`", "s.", "t.", True, "s._jammi_restarted")
    assert status == (
        "case when s._jammi_restarted then s.`status` "
        "when coalesce(s.`order_ver` > t.`order_ver`, s.`order_ver` is not null) "
        "then s.`status` else t.`status` end"
    )
    ver = rules.grouped_value("ver", "s_ver", "s_", "t_", False, "restarted")
    assert "when coalesce(s_ver > t_ver, true) then s_ver else t_ver end" in ver
    newer = rules.grouped_newer("coalesce(s_ver > t_ver, true)", "is_delete", "s_", "t_", False)
    assert newer == (
        "((coalesce(s_ver > t_ver, true)) or (not is_delete and ("
        "coalesce(s_order_ver > t_order_ver, s_order_ver is not null) or "
        "coalesce(s_ship_ver > t_ship_ver, s_ship_ver is not null))))"
    )
    plain = planner_rules(
        MutableTableDefinition.from_config("o", ORDERS, {"primary_key": ["id"]}).to_dict()
    )
    assert plain.grouped_value("status", "s.`status`", "s.", "t.", True, "r") == "s.`status`"
    assert plain.grouped_newer("n", "d", "s.", "t.", True) == "n"


def test_the_planners_render_the_guards():
    defn = {**definition(version_column="ver"), "batch_columns": [*ORDERS, "_jammi_restarted"]}
    change_set = render("get_mutable_change_set_sql", defn, "src", "analytics.orders", None)
    assert "_jammi_restarted as restarted" in change_set
    assert "when coalesce(s_order_ver > t_order_ver, s_order_ver is not null) then s_status" in (
        change_set
    )
    merge = render("get_merge_batch_sql", defn, "analytics.orders", "src", None)
    assert "t.`status` = case when s._jammi_restarted then s.`status`" in merge
    assert "coalesce(s.`ship_ver` > t.`ship_ver`, s.`ship_ver` is not null)" in merge
    stamped = render("mutable_stamped_batch_sql", defn, "src", None, "_is_delete")
    assert stamped.endswith("false as _is_delete, _jammi_restarted from src")
