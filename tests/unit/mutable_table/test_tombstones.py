"""Tombstones (rules/tombstones.py, tombstones.sql): the option, where they live, and
the planner's and the batch-sourced MERGE's rendered rules. No Spark."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.rules import tombstone_phases, tombstones
from tests.unit.mutable_table.test_mutable_render import NOW_MS, PRICES, definition, render

DAY = 86_400_000


def deleting(**config) -> dict:
    defn = definition(
        PRICES, primary_key=["sku"], version_column="v", delete_when="label = 'gone'", **config
    )
    defn["batch_columns"] = ["sku", "price", "label", "v"]
    return defn


def with_tombstones(defn: dict) -> dict:
    defn.update({"now_ms": NOW_MS, "tombstone_now_ms": NOW_MS})
    defn["tombstones_from"] = "select * from live_tombstones"
    return defn


def test_retention_default_and_durations():
    assert tombstones.retention_ms(deleting()) == 7 * DAY
    assert deleting(tombstone_retention="30d")["tombstone_retention"] == 30 * DAY
    assert deleting(tombstone_retention="500ms")["tombstone_retention"] == 500
    assert deleting(tombstone_retention=1)["tombstone_retention"] == 1
    assert tombstones.retention_ms(deleting(tombstone_retention="12h")) == 12 * 3_600_000
    # an unset retention is not recorded (tables keep their recorded definition)
    assert "tombstone_retention" not in deleting()


@pytest.mark.parametrize("value", [0, -5, "7 weeks", "d", True, 1.5])
def test_retention_must_be_a_duration(value):
    with pytest.raises(JammiValidationError, match="tombstone_retention"):
        deleting(tombstone_retention=value)


def test_no_tombstones_without_a_version_rule_and_deletes():
    assert (
        tombstones.retention_ms(definition(PRICES, primary_key=["sku"], delete_when="label = 'x'"))
        is None
    )
    assert (
        tombstones.retention_ms(definition(PRICES, primary_key=["sku"], version_column="v")) is None
    )
    scd2 = definition(
        PRICES, primary_key=["sku"], version_column="v", delete_when="label = 'x'", history="scd2"
    )
    assert tombstones.retention_ms(scd2) is None
    with pytest.raises(JammiValidationError, match="only under a version rule"):
        definition(PRICES, primary_key=["sku"], version_column="v", tombstone_retention="1d")


def test_where_tombstones_live():
    assert (
        tombstones.version_tombstone_dir("/w/t/v0000000003_ab/")
        == "/w/t/v0000000003_ab/_jammi_tombstones"
    )
    assert tombstones.tombstone_table_identifier("items") == "items__jammi_tombstones"
    history = [
        {"invocation_id": "b"},
        {"invocation_id": None},
        {"invocation_id": "a"},
        {"invocation_id": "b"},
    ]
    assert tombstones.committed_invocations(history) == ["a", "b"]
    assert tombstones.path_missing("[PATH_NOT_FOUND] Path does not exist: file:/x")
    assert not tombstones.path_missing("[TABLE_OR_VIEW_NOT_FOUND]")


def change_set(defn: dict) -> str:
    return render(
        "get_mutable_change_set_sql", defn, "prices__jammi_batch", "analytics.prices", None
    )


def test_planner_ignores_a_batch_row_not_newer_than_its_tombstone():
    sql = change_set(with_tombstones(deleting()))
    assert "coalesce(stamped.`v` <= tomb._tomb_version, false) as _tombstoned" in sql
    assert "max(`v`) as _tomb_version from (select * from live_tombstones) as live" in sql
    assert "coalesce(s._tombstoned, false) as tombstoned," in sql
    # a tombstoned row is no insert, update or delete (key_decisions.py's guards)
    decided = sql.split(" as change_kind", 1)[0].rsplit("select *,", 1)[1]
    assert decided.count(" then ") == 3
    assert decided.count("and not tombstoned") == 3


def test_planner_without_stored_tombstones_flags_nothing():
    defn = deleting()
    defn.update({"now_ms": NOW_MS, "tombstones_from": None})
    assert "false as _tombstoned" in change_set(defn)
    # without deletes under a version rule the planner is unchanged
    plain = definition(PRICES, primary_key=["sku"], version_column="v")
    assert "tombstone" not in change_set(plain)


def test_two_column_version_compares_in_order():
    defn = definition(
        PRICES, primary_key=["sku"], version_column=["v", "price"], delete_when="label = 'x'"
    )
    sql = change_set(with_tombstones(defn))
    assert "named_struct('v0', stamped.`v`, 'v1', stamped.`price`) <= tomb._tomb_version" in sql
    assert "max(named_struct('v0', `v`, 'v1', `price`)) as _tomb_version" in sql


def test_candidates_are_winning_deletes_newer_than_the_stored_row():
    defn = with_tombstones(deleting())
    sql = render(
        "get_tombstone_candidates_sql", defn, "prices__jammi_batch", "analytics.prices", None
    )
    assert f"cast({NOW_MS} as bigint) as `_deleted_ms`" in sql
    assert "order by `v` desc) as _tomb_rn" in sql
    assert "left anti join (select * from analytics.prices where tenant_id is null) as t" in sql
    assert "and not coalesce(s.`v` > t.`v`, true)" in sql
    assert sql.endswith("where s._tomb_rn = 1 and s._is_delete and not s._tombstoned")
    following = " ".join(tombstone_phases.next_tombstones_sql(defn, "select 1").split())
    assert (
        "from (select * from live_tombstones) as kept left anti join (select 1) as c" in following
    )
    assert following.endswith("from (select 1) as fresh")


def test_version_directory_write():
    sql = tombstone_phases.write_sql("/w/t/v0000000004_cd", "parquet", "select 1")
    target = "'/w/t/v0000000004_cd/_jammi_tombstones'"
    assert sql == f"insert overwrite directory {target} using parquet select 1"
