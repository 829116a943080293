"""merge_functions and ttl_ms / ttl_column: every rule with a passing and a failing
case, what the definition records, and what the planner renders for them."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules.ttl import expire_definition, ttl_cutoff_ms
from dbt.adapters.jammi.mutable_table.table_properties import RECORDED_KEYS
from tests.unit.mutable_table.test_mutable_render import ENV, NOW_MS, planned, render
from tests.unit.rejections import rejects

COUNTERS = {
    "user_id": "string",
    "v": "bigint",
    "clicks": "int",
    "first_seen": "bigint",
    "country": "string",
    "blob": "binary",
    "org": "string",
}


def build(schema=None, **config):
    config.setdefault("primary_key", ["user_id"])
    return MutableTableDefinition.from_config("counters", schema or COUNTERS, config)


# --- merge_functions --------------------------------------------------------------


def test_merge_functions_are_recorded_in_column_order():
    definition = build(
        version_column="v",
        merge_functions={"country": "first", "clicks": "sum", "first_seen": "min"},
    )
    assert definition.merge_functions == (
        ("clicks", "sum"),
        ("first_seen", "min"),
        ("country", "first"),
    )
    assert definition.to_dict()["merge_functions"] == {
        "clicks": "sum",
        "first_seen": "min",
        "country": "first",
    }


def test_unset_options_leave_the_recorded_definition_as_before():
    recorded = build().to_dict()
    for option in ("merge_functions", "ttl_ms", "ttl_column"):
        assert option not in recorded


@pytest.mark.parametrize(
    "config, fragments",
    [
        ({"merge_functions": ["clicks"]}, ["must map column names to functions"]),
        ({"merge_functions": {"nope": "max"}}, ["'nope' is not in the model's output"]),
        ({"merge_functions": {"clicks": "avg"}}, ["'avg'", "sum, min, max, last_non_null"]),
        ({"merge_functions": {"user_id": "max"}}, ["which is the primary key"]),
        (
            {"version_column": "v", "merge_functions": {"v": "max"}},
            ["which is the version_column"],
        ),
        (
            {"tenant_from": "org", "merge_functions": {"org": "first"}},
            ["which is the tenant_from column"],
        ),
        (
            {"version_column": "v", "merge_functions": {"country": "sum"}},
            ["sums column 'country' of type string", "cast("],
        ),
        ({"merge_functions": {"blob": "max"}}, ["binary column 'blob'"]),
        (
            {"merge_functions": {"clicks": "sum"}},
            ["no version_column is set", "add its values a second time"],
        ),
        (
            {"history": "scd2", "merge_functions": {"country": "first"}},
            ["history: scd2"],
        ),
    ],
)
def test_merge_functions_rejections(config, fragments):
    rejects(lambda: build(**config), "mutable_table 'counters'", *fragments)


def test_min_max_first_need_no_version_column():
    definition = build(merge_functions={"first_seen": "min", "country": "first"})
    assert dict(definition.merge_functions) == {"first_seen": "min", "country": "first"}


# --- ttl ----------------------------------------------------------------------------


def test_ttl_with_column_and_scd2():
    definition = build(ttl_ms=60_000, ttl_column="first_seen")
    assert (definition.ttl_ms, definition.ttl_column) == (60_000, "first_seen")
    assert "_written_at" not in [c.name for c in definition.storage_columns]
    scd2 = build(ttl_ms=60_000, history="scd2")
    assert scd2.to_dict()["ttl_ms"] == 60_000


def test_ttl_without_column_keeps_the_engine_written_time():
    definition = build(ttl_ms=60_000)
    assert definition.storage_columns[-1].name == "_written_at"
    assert "_written_at" not in definition.value_columns


@pytest.mark.parametrize(
    "config, fragments",
    [
        ({"ttl_ms": 0}, ["'ttl_ms' must be a positive whole number"]),
        ({"ttl_ms": "1d"}, ["'ttl_ms' must be a positive whole number"]),
        ({"ttl_column": "first_seen"}, ["'ttl_column' is set but 'ttl_ms' is not"]),
        ({"ttl_ms": 1, "ttl_column": "nope"}, ["ttl_column 'nope' is not in the model"]),
        ({"ttl_ms": 1, "ttl_column": "country"}, ["has type string", "as timestamp"]),
        (
            {"ttl_ms": 1, "ttl_column": "first_seen", "history": "scd2"},
            ["with history: scd2", "valid_to"],
        ),
    ],
)
def test_ttl_rejections(config, fragments):
    rejects(lambda: build(**config), "mutable_table 'counters'", *fragments)


def test_cutoff():
    assert ttl_cutoff_ms(1_000, now=5_000) == 4_000


def test_expire_definition_drops_hard_deletes_and_overrides_ttl_once():
    stored = build(ttl_ms=60_000, ttl_column="first_seen", hard_deletes="delete").to_dict()
    definition = expire_definition("counters", stored, 1_000)
    assert definition["ttl_ms"] == 1_000 and definition["hard_deletes"] == "ignore"
    assert definition["batch_columns"] == list(COUNTERS)
    assert stored["ttl_ms"] == 60_000 and stored["hard_deletes"] == "delete"


@pytest.mark.parametrize(
    "stored, ttl_ms, fragment",
    [
        (None, None, "recorded definition cannot be read"),
        ("plain", None, "has no ttl_ms configured"),
        ("plain", 1_000, "keeps no row age"),
        ("ttl", -1, "'ttl_ms' must be a positive whole number"),
    ],
)
def test_expire_definition_rejections(stored, ttl_ms, fragment):
    recorded = {"plain": build().to_dict(), "ttl": build(ttl_ms=5).to_dict()}.get(stored)
    with pytest.raises(JammiValidationError, match=fragment):
        expire_definition("counters", recorded, ttl_ms)


# --- rendered SQL -------------------------------------------------------------------


def change_set(definition, target="analytics.counters"):
    data = definition.to_dict()
    data["batch_columns"] = [c.name for c in definition.columns]
    return render("get_change_set_sql", data, "counters__jammi_batch", target, None)


def test_merge_functions_render_combination_and_batch_aggregation():
    sql = change_set(
        build(
            version_column="v",
            delete_when="country = 'gone'",
            merge_functions={"clicks": "sum", "first_seen": "min", "country": "first"},
        )
    )
    stored = "case when restarted then null else t_{} end"
    clicks, first_seen = stored.format("clicks"), stored.format("first_seen")
    # an int sum adds in 38 digits and goes back to int checked: never wraps
    wide = "decimal(38,0)"
    assert (
        f"coalesce(cast(s_clicks as {wide}) + cast({clicks} as {wide}), s_clicks, {clicks})" in sql
    )
    assert "then cast(raise_error(concat('jammi_refused<<mutable_table" in sql
    assert f"least(s_first_seen, {first_seen})" in sql
    assert f"coalesce({stored.format('country')}, s_country)" in sql
    # the batch rows of a key newer than its stored version combine first, each
    # carrying its key's stored row: the stored rows are read once
    summed = f"sum(cast(`clicks` as {wide})) filter (where not is_delete)"
    assert f"else cast({summed} as int) end as s_clicks" in sql
    assert "min_by(`country`, case when `country` is not null and not is_delete" in sql
    assert "where coalesce(`v` > _stored_version, true)" in sql
    assert "where _last_delete is null or `v` >= _last_delete" in sql
    assert "any_value(t_clicks) as t_clicks" in sql
    assert sql.count("from analytics.counters ") == 1
    # hard deletes compare every stored row: the stored versions come from a semi join
    deleting = change_set(
        build(version_column="v", hard_deletes="delete", merge_functions={"clicks": "sum"})
    )
    assert f"else cast({summed} as int) end as `clicks`" in deleting
    assert "as stored on b.tenant_id <=> stored.tenant_id" in deleting
    assert "full outer join target" in deleting
    # without delete_when no row ends a key: no window over the batch
    plain = change_set(build(version_column="v", merge_functions={"clicks": "sum"}))
    assert "_last_delete" not in plain and "any_value(t_v) as t_v" in plain


def test_ttl_renders_the_cutoff_and_keeps_the_plan_winning():
    sql = change_set(build(ttl_ms=60_000, ttl_column="first_seen"))
    expired = f"coalesce(`first_seen` < {NOW_MS - 60_000}, false)"
    assert f"case when not {expired} then _change when _change <> 'insert' then 'delete'" in sql
    assert "explode(if(_change is null, array(), array(1)))" in sql
    # the expired stored rows come from the plan's own read of the stored rows: the
    # batch's keys or expired, one scan; an unchanged expired row is deleted
    assert f"{expired} as _jammi_expired" in sql
    assert "where stored._jammi_expired or exists ( select 1 from latest as s" in sql
    assert "full outer join target as t" in sql
    assert "when in_target and not in_batch then 'delete'" in sql
    assert "end, if(t_expired, 'delete', null)) as change_kind" in sql
    assert "1 as _ttl_source" not in sql and "min_by(" not in sql
    assert sql.count("from analytics.counters ") == 1
    # merge functions combining with a version read the stored rows apart: the expired
    # ones join the set in a second read, the plan's row winning per key
    combined = change_set(
        build(
            ttl_ms=60_000,
            ttl_column="first_seen",
            version_column="v",
            merge_functions={"clicks": "sum"},
        )
    )
    assert "'delete' as _change, 1 as _ttl_source" in combined
    assert "min_by(struct(" in combined and "group by tenant_id, `user_id`" in combined
    assert "_jammi_expired" not in combined
    # a first run has no stored rows to expire
    first = change_set(build(ttl_ms=60_000, ttl_column="first_seen"), target=None)
    assert "1 as _ttl_source" not in first and "min_by(" not in first


def test_a_plan_leaves_the_definition_as_it_was():
    # a key the planner left on the definition would read as a changed definition on the
    # next run (a new registry row, a property commit on Delta): the attempt's values come
    # on a copy (mutable_plan_prepare), and the planner adds none
    for definition in (
        build(),
        build(ttl_ms=60_000, ttl_column="first_seen"),
        build(ttl_ms=60_000, version_column="v", merge_functions={"clicks": "sum"}),
    ):
        data = planned(definition.to_dict())
        data["batch_columns"] = [c.name for c in definition.columns]
        before = dict(data)
        ENV.globals["get_change_set_sql"](data, "counters__jammi_batch", "analytics.counters", None)
        assert data == before
        assert {"now_ms", "ttl_expired_in_plan"}.isdisjoint(RECORDED_KEYS)


def test_written_at_is_the_plan_clock_on_inserts_and_updates():
    sql = change_set(build(ttl_ms=60_000))
    assert f"when 'insert' then cast({NOW_MS} as bigint)" in sql
    assert f"else cast({NOW_MS} as bigint) end as `_written_at`" in sql
    assert f"coalesce(`_written_at` < {NOW_MS - 60_000}, false)" in sql
    # never a value column: an unchanged row is no update
    assert "s__written_at <=> t__written_at" not in sql
    assert "<=> t_country" in sql


def test_reconcile_keeps_or_refuses_the_written_at_column():
    from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema

    batch = build(ttl_ms=60_000).to_dict()
    stored = [[c, t] for c, t in COUNTERS.items()]
    with pytest.raises(JammiValidationError, match="created without"):
        reconcile_schema("counters", batch, stored)
    kept = reconcile_schema("counters", batch, [*stored, ["_written_at", "bigint"]])
    assert kept.definition["storage_columns"][-1] == ["_written_at", "bigint"]
    assert "_written_at" not in kept.definition["value_columns"]
    assert kept.missing_columns == [] and kept.new_columns == []
    # ttl turned off: the column stays and is still maintained
    off = reconcile_schema("counters", build().to_dict(), [*stored, ["_written_at", "bigint"]])
    assert off.definition["storage_columns"][-1] == ["_written_at", "bigint"]
