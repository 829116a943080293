"""The tombstones' phases (rules/tombstone_phases.py) against a fake engine, no Spark:
where a plan reads live tombstones from, what each format does with the new ones, and
what a rollback makes of them."""

from __future__ import annotations

from typing import Any

import pytest

from dbt.adapters.jammi.mutable_table.commit.branch_commit import HEAD_TAG
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import tombstone_phases

NOW = 1_800_000_000_000
WEEK = 7 * 24 * 3600 * 1000
STATE = {"location": "file:/w/prices/v0000000004_r"}
CANDIDATES = "select * from candidates"


class Engine:
    def __init__(self, count: int = 0, fail: str = "") -> None:
        self.count, self.fail = count, fail
        self.statements: list[str] = []

    def __call__(self, sql: str) -> Any:
        self.statements.append(sql)
        if self.fail and sql.startswith(self.fail):
            raise RuntimeError("[DELTA_CONCURRENT_APPEND] refused")
        return [(self.count,)] if sql.startswith("select count(*)") else []


def deleting(**config: Any) -> dict:
    config = {"primary_key": ["sku"], "version_column": "v", "delete_when": "gone", **config}
    schema = {"sku": "string", "v": "bigint", "gone": "boolean"}
    return MutableTableDefinition.from_config("prices", schema, config).to_dict()


def prepare(defn: dict, file_format: str, state: Any = STATE, table: Any = "s.t__jt", **kw):
    return tombstone_phases.prepare(
        defn,
        state,
        file_format,
        NOW,
        lambda: table,
        lambda: kw.get("committed", "'inv1'"),
        lambda location: kw.get("readable", True),
    )


def test_without_the_rule_or_a_stored_table_a_plan_reads_no_tombstones():
    plain = MutableTableDefinition.from_config(
        "prices", {"sku": "string", "v": "bigint"}, {"primary_key": ["sku"], "version_column": "v"}
    ).to_dict()
    assert prepare(plain, "parquet") == {"tombstones_from": None, "tombstone_now_ms": NOW}
    assert prepare(deleting(), "delta", state=None)["tombstones_from"] is None


def test_a_rewrite_plan_reads_the_live_tombstones_of_its_version():
    values = prepare(deleting(), "parquet")
    assert values["now_ms"] == NOW
    assert values["tombstones_from"] == (
        "select `sku`, `tenant_id`, `v`, `_deleted_ms` from "
        "parquet.`file:/w/prices/v0000000004_r/_jammi_tombstones` "
        f"where `_deleted_ms` >= {NOW - WEEK}"
    )
    assert prepare(deleting(), "orc", readable=False)["tombstones_from"] is None


def test_a_merge_plan_reads_only_tombstones_of_committed_runs():
    values = prepare(deleting(), "delta", committed="'inv1', 'inv2'")
    assert values["tombstones_from"].endswith("and _invocation_id in ('inv1', 'inv2')")
    assert values["tombstones_from"].startswith(
        "select `sku`, `tenant_id`, `v`, `_deleted_ms` from s.t__jt"
    )
    # no committed run, or no tombstone table yet: nothing counts
    assert prepare(deleting(), "delta", committed="")["tombstones_from"] is None
    assert prepare(deleting(), "iceberg", table=None)["tombstones_from"] is None


def with_clock(defn: dict) -> dict:
    defn.update({"now_ms": NOW, "tombstone_now_ms": NOW, "tombstones_from": None})
    return defn


def test_delta_appends_before_the_merge_tagged_with_the_invocation():
    engine = Engine(fail="delete from")  # expiry refused by a concurrent append: deferred
    left = tombstone_phases.apply(
        engine, with_clock(deleting()), STATE, "delta", CANDIDATES, "s.t__jt", "inv9"
    )
    assert left == {"sql": None, "new": 0}
    assert engine.statements[0].startswith("create table if not exists s.t__jt (sku string")
    assert engine.statements[1] == f"delete from s.t__jt where `_deleted_ms` < {NOW - WEEK}"
    assert engine.statements[2] == (
        "insert into s.t__jt select `sku`, `tenant_id`, `v`, `_deleted_ms`, 'inv9' "
        f"from ({CANDIDATES}) as c"
    )


@pytest.mark.parametrize("count", [0, 2])
def test_iceberg_counts_and_hands_the_append_to_the_branch_commit(count):
    engine = Engine(count=count)
    left = tombstone_phases.apply(
        engine, with_clock(deleting()), STATE, "iceberg", CANDIDATES, "s.t__jt", "inv9"
    )
    assert left["new"] == count
    if count:
        assert f"'{HEAD_TAG}' from ({CANDIDATES})" in left["branch_insert"]
        assert not any(s.startswith("insert") for s in engine.statements)
    else:
        assert left["branch_insert"] is None
        assert engine.statements == [f"select count(*) from ({CANDIDATES}) as c"]


def test_a_rewrite_writes_the_complete_next_set():
    left = tombstone_phases.apply(
        Engine(count=3), with_clock(deleting()), STATE, "parquet", CANDIDATES, "s.t__jt", "i"
    )
    assert left["new"] == 3
    assert left["sql"] == tombstone_phases.next_tombstones_sql(with_clock(deleting()), CANDIDATES)


def test_rollback_of_a_rewrite_takes_the_kept_versions_set_or_none():
    kept = "file:/w/prices/v0000000002_r"
    found = tombstone_phases.rollback_rewrite_sql(deleting(), "parquet", kept, lambda _: True)
    assert found == (
        "select `sku`, `tenant_id`, `v`, `_deleted_ms` from "
        "parquet.`file:/w/prices/v0000000002_r/_jammi_tombstones`"
    )
    none = tombstone_phases.rollback_rewrite_sql(deleting(), "parquet", kept, lambda _: False)
    assert none.endswith("where 1 = 0")


def test_rollback_of_a_merge_table_stops_counting_later_tags():
    engine = Engine()
    tombstone_phases.rollback_merge(engine, "s.t__jt", ["inv3", "it's"])
    assert engine.statements == ["delete from s.t__jt where _invocation_id in ('inv3', 'it\\'s')"]
    quiet = Engine()
    tombstone_phases.rollback_merge(quiet, None, ["inv3"])
    tombstone_phases.rollback_merge(quiet, "s.t__jt", [])
    assert quiet.statements == []
