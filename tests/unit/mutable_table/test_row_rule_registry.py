"""The row rules' registry (mutable_table/rules/registry.py): every rule has the same
shape, and its options reach the definition through it alone."""

from __future__ import annotations

from dataclasses import fields

import pytest

from dbt.adapters.jammi.mutable_table.definition import (
    OPTIONAL_KEYS,
    MutableTableDefinition,
    MutableTableDefinitionBuilder,
    MutableTableId,
)
from dbt.adapters.jammi.mutable_table.rules.registry import ROW_RULES, RULE_OPTIONS


@pytest.mark.parametrize("rule", ROW_RULES, ids=lambda rule: rule.__name__.rsplit(".", 1)[-1])
def test_a_rule_owns_options_and_gives_definition_fields(rule) -> None:
    assert rule.OPTIONS and callable(rule.definition_fields)
    definition_fields = {f.name for f in fields(MutableTableDefinition)}
    assert set(rule.OPTIONS) <= definition_fields


def test_rule_options_are_recorded_only_when_set() -> None:
    # the rules' options, and rule_columns (definition.py)
    assert set(OPTIONAL_KEYS) == {*RULE_OPTIONS, "rule_columns"}
    recorded = MutableTableDefinition.from_config(
        "m", {"id": "bigint", "v": "int"}, {"primary_key": ["id"]}
    ).to_dict()
    assert not set(OPTIONAL_KEYS) & set(recorded)


def test_from_config_and_the_builder_take_every_rule_option() -> None:
    config = {"primary_key": ["id"], "ttl_ms": 60000, "merge_functions": {"v": "max"}}
    definition = MutableTableDefinition.from_config("m", {"id": "bigint", "v": "int"}, config)
    assert definition.ttl_ms == 60000 and definition.merge_functions == (("v", "max"),)
    built = (
        MutableTableDefinitionBuilder(MutableTableId("m"), {"id": "bigint", "v": "int"})
        .primary_key(["id"])
        .option("changelog", True)
        .build()
    )
    assert built.changelog is True
    with pytest.raises(ValueError):
        MutableTableDefinitionBuilder(MutableTableId("m"), {"id": "bigint"}).option("nope", 1)
