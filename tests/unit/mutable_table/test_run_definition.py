"""A run's definition: the table's definition frozen, the run's values declared beside it
(mutable_table/run_definition.py), read by the planner's macros as the dict was."""

from __future__ import annotations

from typing import Any

import jinja2.sandbox
import pytest

from dbt.adapters.jammi.mutable_table import run_config, scd2, table_records
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.run_definition import RUN_VALUES, RunDefinition
from dbt.adapters.jammi.mutable_table.table_properties import RECORDED_KEYS
from tests.unit.mutable_table.test_mutable_render import NOW_MS, planned, render

SCHEMA = {"id": "bigint", "name": "string", "v": "bigint", "op": "string", "n": "bigint"}
CONFIGS: list[dict[str, Any]] = [
    {"primary_key": ["id"]},
    {"primary_key": ["id"], "version_column": "v", "delete_when": "op = 'd'"},
    {"primary_key": ["id"], "version_column": "v", "partial_updates": ["name"]},
    {"primary_key": ["id"], "history": "scd2", "track_columns": ["name"]},
    {
        "primary_key": ["id"],
        "version_column": "v",
        "ttl_ms": 60_000,
        "merge_functions": {"n": "sum"},
    },
    {
        "primary_key": ["id"],
        "version_column": "v",
        "delete_when": "op = 'd'",
        "tombstone_retention": 3_600_000,
    },
    {"primary_key": ["id"], "version_column": "v", "truncate_when": "op = 't'"},
]


def own(config: dict[str, Any]) -> dict[str, Any]:
    return MutableTableDefinition.from_config("t", SCHEMA, config).to_dict()


def test_no_run_value_is_a_recorded_key():
    assert not set(RUN_VALUES) & RECORDED_KEYS


def test_a_run_value_must_be_declared_and_kept_out_of_the_definition():
    with pytest.raises(ValueError, match=r"undeclared \['a_key_added_next_year'\]"):
        RunDefinition(own(CONFIGS[0]), {"a_key_added_next_year": 1})
    with pytest.raises(ValueError, match=r"in the definition \['now_ms'\]"):
        RunDefinition({**own(CONFIGS[0]), "now_ms": 1}, {})


def test_nothing_writes_into_a_run_definition():
    definition = RunDefinition(own(CONFIGS[0]), {"now_ms": 1})
    with pytest.raises(TypeError):
        definition["now_ms"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        definition.recorded["table_id"] = "other"  # type: ignore[index]
    with pytest.raises(AttributeError):
        definition.update  # type: ignore[attr-defined]  # noqa: B018


def test_a_later_phase_adds_its_values_to_a_copy():
    start = RunDefinition(own(CONFIGS[1]), {"batch_columns": ["id"]})
    attempt = start.with_run_values(now_ms=NOW_MS)
    assert attempt["now_ms"] == NOW_MS and attempt["batch_columns"] == ["id"]
    assert "now_ms" not in start
    assert attempt.recorded == start.recorded == own(CONFIGS[1])


def test_the_model_config_checked_is_a_run_value_and_not_recorded():
    definition = run_config.run_definition(
        "t", list(SCHEMA.items()), {"primary_key": ["id"], "versions_kept": 3}
    )
    assert definition["versions_kept"] == 3
    assert set(definition.run_values) == {"versions_kept", "expire_snapshots", "tblproperties"}
    assert dict(definition.recorded) == own({"primary_key": ["id"]})
    assert table_records.definition_json(definition) == table_records.definition_json(
        own({"primary_key": ["id"]})
    )


def test_a_definition_dict_splits_into_its_definition_and_run_values():
    mixed = {**own(CONFIGS[0]), "now_ms": 5, "checks_in_plan": True}
    split = RunDefinition.of(mixed)
    assert dict(split) == mixed
    assert set(split.run_values) == {"now_ms", "checks_in_plan"}
    assert RunDefinition.of(split) is split


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(sorted(c)))
@pytest.mark.parametrize(
    "macro,args",
    [
        ("get_change_set_sql", ("t__jammi_batch", "analytics.t", None)),
        ("get_change_set_sql", ("t__jammi_batch", None, "acme")),
        ("get_merge_change_set_sql", ("analytics.t", "t__jammi_change_set")),
        ("get_next_state_sql", ("analytics.t", "t__jammi_change_set")),
    ],
)
def test_the_planner_renders_the_same_sql_from_a_run_definition(monkeypatch, config, macro, args):
    # scd2's interval starts at dbt's run_started_at, else at the clock: held still
    monkeypatch.setattr(scd2, "now_ms", lambda: NOW_MS)
    # the values mutable_plan_prepare gives every attempt (its clock, its tombstones)
    values = {"batch_columns": list(SCHEMA), "tombstone_now_ms": NOW_MS, "tombstones_from": None}
    as_dict = planned({**own(config), **values})
    assert render(macro, RunDefinition.of(as_dict), *args) == render(macro, as_dict, *args)


def test_dbt_s_sandbox_reads_a_run_definition_as_it_reads_a_dict():
    env = jinja2.sandbox.SandboxedEnvironment()
    template = env.from_string(
        "{{ d.table_id }} {{ d['now_ms'] }} {{ d.get('ttl_ms', 'none') }} "
        "{{ d.tombstones_from is none }} {{ d.absent is defined }}"
    )
    values = {"now_ms": 7, "tombstones_from": None}
    as_dict = {**own(CONFIGS[0]), **values}
    assert template.render(d=RunDefinition(own(CONFIGS[0]), values)) == template.render(d=as_dict)
    assert template.render(d=as_dict) == "t 7 none True False"
