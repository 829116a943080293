"""scd2 planner inputs (Python) and the rendered planner SQL (offline, no Spark)."""

from __future__ import annotations

import datetime
import re

import pytest

from dbt.adapters.jammi.definition import MutableTableDefinition
from dbt.adapters.jammi.errors import JammiValidationError
from dbt.adapters.jammi.scd2 import epoch_millis, plan_scd2
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
    assert "hard_delete_events" in sql
    assert "coalesce((availability = 'gone'), false) as _is_delete" in sql
    no_hard = render_scd2_change_set(definition(), "b", "t")
    assert "hard_delete_events" not in no_hard
    assert "coalesce(" not in no_hard.split("as _is_delete")[0].rsplit("\n", 1)[-1]


def test_render_run_time_literal():
    schema = {k: v for k, v in SCHEMA.items() if k != "valid_from"}
    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    sql = render_scd2_change_set(definition(schema), "b", "t", run_started_at=moment)
    assert "cast(1767225600000 as bigint) as _vf" in sql


def test_render_reads_stored_rows_once_only_when_asked():
    """The rewrite applier asks for one read of the touched keys' stored rows: their CTE
    gets an unused non-deterministic column, so Spark does not inline it into both of
    its readers; the MERGE path (Delta) renders the plain CTE."""

    def old_rows(sql: str) -> str:
        start = sql.index("old_rows as (")
        return " ".join(sql[start : sql.index("old_points as (")].split())

    once = render_scd2_change_set(definition(), "b", "t", scan_target_once=True)
    plain = render_scd2_change_set(definition(), "b", "t")
    assert "select t.*, spark_partition_id() as _scan_part from target_rows t" in old_rows(once)
    assert "spark_partition_id" not in plain
    assert "select t.* from target_rows t left semi join touched_keys k" in old_rows(plain)
    # both readers still read old_rows; nothing reads the marker column
    assert once.count("from old_rows") == 1 and once.count("join old_rows o") == 1
    assert once.count("_scan_part") == 1
