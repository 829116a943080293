"""The refusals a mutable_table run gets from its definition, before any SQL: the
adapter call the materialization makes with the model's output columns and config
(run_config.run_definition), with the models and message fragments of the
functional tests named in the comments (those that only asserted a refusal moved here;
docs/testing.md lists them). One functional test per family stays as the canary that a
run calls it before it creates anything
(tests/functional/mutable_table/test_mutable_validation.py)."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table.run_config import run_definition
from tests.unit.rejections import rejects

# model: (output columns, config without primary_key=['id'], fragments of the message)
REFUSED = {
    # tests/functional/mutable_table/test_mutable_validation.py
    "reserved": ({"id": "int", "tenant_id": "string"}, {}, ["'tenant_id' is reserved"]),
    "underscore": ({"id": "int", "_hidden": "int"}, {}, ["'_hidden' is reserved"]),
    "wrong_type": (
        {"id": "int", "seen_at": "timestamp"},
        {"type_set": "jammi"},
        ["column 'seen_at' has type timestamp", "to_epoch_millis('seen_at')"],
    ),
    "bad_key": (
        {"id": "int"},
        {"primary_key": ["missing"]},
        ["primary_key column 'missing' is not in the model's output"],
    ),
    "nested_key": (
        {"tags": "array<string>", "n": "int"},
        {"primary_key": ["tags"]},
        ["primary_key column 'tags' has the nested type"],
    ),
    # tests/functional/mutable_table/test_changelog.py (TestChangelogRefused)
    "rebuildable": (
        {"id": "int"},
        {"changelog": True, "full_refresh": True},
        ["cannot be combined with full_refresh: true"],
    ),
    "clashing": (
        {"id": "int", "name": "string", "previous_name": "string"},
        {"changelog": True},
        ["column 'previous_name' is also a column of the changelog events"],
    ),
    # tests/functional/mutable_table/test_mutable_definition_guards.py
    "unbalanced": (
        {"id": "int", "label": "string"},
        {"delete_when": "false) or (true"},
        ["'delete_when' is not one SQL expression"],
    ),
    # tests/functional/mutable_table/test_tenant_read_guard.py
    "delete_when_subquery": (
        {"sku": "string", "price": "int"},
        {
            "primary_key": ["sku"],
            "delete_when": "sku in (select sku from analytics.prices where price > 50)",
        },
        ["'delete_when' contains a subquery"],
    ),
    # tests/functional/mutable_table/test_merge_functions.py
    "sum_without_version": (
        {"id": "int", "n": "int"},
        {"merge_functions": {"n": "sum"}},
        ["re-running a batch would add its values a second time", "version_column"],
    ),
}


def definition(model: str, columns: dict, config: dict) -> dict:
    config = {"primary_key": ["id"], **config}
    return run_definition(model, list(columns.items()), config)


@pytest.mark.parametrize("model", REFUSED)
def test_refused_with_the_model_the_problem_and_a_fix(model):
    columns, config, fragments = REFUSED[model]
    rejects(lambda: definition(model, columns, config), f"mutable_table '{model}': ", *fragments)


def test_the_same_models_pass_without_what_is_refused():
    # the refusals are the options' and columns', not the models' as a whole
    assert definition("reserved", {"id": "int", "tenant": "string"}, {})
    assert definition("rebuildable", {"id": "int"}, {"changelog": True})
    assert definition("unbalanced", {"id": "int", "label": "string"}, {"delete_when": "false"})
    assert definition(
        "sum_without_version",
        {"id": "int", "n": "int", "v": "bigint"},
        {"merge_functions": {"n": "sum"}, "version_column": "v"},
    )
