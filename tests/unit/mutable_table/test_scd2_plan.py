"""scd2 planner inputs (Python) and the rendered planner SQL (offline, no Spark)."""

from __future__ import annotations

import datetime
import re

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.scd2 import epoch_millis, plan_scd2
from tests.scd2_render import render_scd2_change_set

SCHEMA = {
    "item_id": "bigint",
    "price_tier": "string",
    "availability": "string",
    "valid_from": "bigint",
}


def definition(schema=None, **config) -> dict:
    return MutableTableDefinition.from_config(
        "items", schema or SCHEMA, {"primary_key": ["item_id"], "history": "scd2", **config}
    ).to_dict()


def test_plan_roles_and_effective_time():
    plan = plan_scd2(definition())
    assert plan.key_columns == ("`item_id`",)
    assert plan.value_columns == ("`price_tier`", "`availability`")
    assert plan.track_columns == ("`price_tier`", "`availability`")
    assert [(c.name, c.role) for c in plan.storage_columns] == [
        ("item_id", "key"),
        ("price_tier", "value"),
        ("availability", "value"),
        ("valid_from", "valid_from"),
        ("valid_to", "valid_to"),
    ]
    assert plan.effective_time_column == "`valid_from`"


def test_plan_uses_run_time_when_valid_from_is_not_output():
    schema = {k: v for k, v in SCHEMA.items() if k != "valid_from"}
    moment = datetime.datetime(2026, 1, 2, 3, 4, 5, 678000)
    plan = plan_scd2(definition(schema), moment)
    assert plan.effective_time_column is None
    assert plan.run_time_ms == 1767323045678
    assert [c.role for c in plan.storage_columns][-2:] == ["valid_from", "valid_to"]


def test_plan_reads_batch_columns_after_schema_reconciliation():
    # the materialization's reconciled definition drops valid_from from `columns`
    reconciled = definition()
    reconciled["columns"] = [c for c in reconciled["columns"] if c[0] != "valid_from"]
    reconciled["batch_columns"] = ["item_id", "price_tier", "availability", "valid_from"]
    assert plan_scd2(reconciled).effective_time_column == "`valid_from`"
    reconciled["batch_columns"] = ["item_id", "price_tier", "availability"]
    assert plan_scd2(reconciled).effective_time_column is None


def test_plan_options():
    plan = plan_scd2(
        definition(
            {**SCHEMA, "version": "bigint"},
            version_column="version",
            track_columns=["price_tier"],
            hard_deletes="delete",
            delete_when="availability = 'gone'",
        )
    )
    assert plan.version_column == "`version`"
    assert plan.track_columns == ("`price_tier`",)
    assert plan.hard_deletes is True
    assert plan.delete_when == "availability = 'gone'"


def test_plan_rejects_other_history_modes():
    plain = MutableTableDefinition.from_config("items", SCHEMA, {"primary_key": ["item_id"]})
    with pytest.raises(JammiValidationError, match="history"):
        plan_scd2(plain.to_dict())


def test_epoch_millis_treats_naive_as_utc():
    aware = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    assert epoch_millis(aware) == epoch_millis(aware.replace(tzinfo=None)) == 1767225600000


def test_render_output_shape():
    sql = render_scd2_change_set(definition(), "batch_view", "analytics.items")
    final = sql[sql.rindex("\nselect") :]
    assert re.findall(r" as (`\w+`),", final) == [
        "`item_id`",
        "`price_tier`",
        "`availability`",
        "`valid_from`",
        "`valid_to`",
    ]
    assert final.split()[-4:] == ["`tenant_id`,", "_change", "from", "changes"]
    assert "from analytics.items" in sql
    assert "from batch_view" in sql
    # unbound run without tenant_from: only shared rows are in scope, rows stamped NULL
    assert "where tenant_id is null" in sql
    assert "assert_true(_rows_at_vf = 1" in sql


def test_render_bound_tenant_is_a_literal():
    sql = render_scd2_change_set(definition(), "b", "t", tenant="o'hara")
    assert "'o\\'hara' as `tenant_id`" in sql
    assert "tenant_id = 'o\\'hara'" in sql


def test_render_first_run_and_options():
    sql = render_scd2_change_set(
        definition(hard_deletes="delete", delete_when="availability = 'gone'"), "b", None
    )
    assert "where 1 = 0" in sql  # no stored rows yet
    # hard_deletes: every stored row of the scope enters the shuffle; an open key absent
    # from the batch gets a delete point at the run's time, untouched keys are dropped
    assert "and not _key_in_batch then cast(" in sql
    assert "where _key_in_batch or _key_open" in sql
    assert "coalesce((availability = 'gone'), false) as _is_delete" in sql
    no_hard = render_scd2_change_set(definition(), "b", "t")
    assert "_key_in_batch" not in no_hard
    assert "coalesce(" not in no_hard.split("as _is_delete")[0].rsplit("\n", 1)[-1]


def test_render_run_time_literal():
    schema = {k: v for k, v in SCHEMA.items() if k != "valid_from"}
    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    sql = render_scd2_change_set(definition(schema), "b", "t", run_started_at=moment)
    assert "cast(1767225600000 as bigint) as _vf" in sql


def test_render_shuffles_once_by_the_effective_key():
    """Batch rows and the touched keys' stored rows meet in one union, distributed by
    (tenant_id, primary key) once; every later window and group by is partitioned by
    those keys plus more (no joins on (keys, valid_from), no other partitioning), and
    the stored table is read once, with or without scan_target_once."""
    keys = "`tenant_id`, `item_id`"
    for once in (False, True):
        sql = render_scd2_change_set(definition(), "b", "t", scan_target_once=once)
        flat = " ".join(sql.split())
        assert flat.count(" distribute by ") == 1
        assert f") distribute by {keys} )," in flat
        assert flat.count("from t ") == 1  # one read of the stored table
        assert "spark_partition_id" not in flat
        assert "select t.* from target_rows t left semi join batch_rows b" in flat
        assert " full outer join " not in flat
        partitions = re.findall(r"partition by (.*?) (?:order by|\))", flat)
        groups = re.findall(r"group by (.*?) \)", flat)
        assert len(partitions) >= 6 and len(groups) == 1
        assert all(p.startswith(keys) for p in partitions + groups), partitions + groups
