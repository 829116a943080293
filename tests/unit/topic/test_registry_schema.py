"""Config registry_schema is spliced into SQL as a schema name: validated in Python
before anything is written, for mutable_table and topic models alike."""

from __future__ import annotations

from functools import partial

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import validate_registry_schema
from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.mutable_table.run_config import run_definition
from dbt.adapters.jammi.mutable_table.table_state import TableStateService
from dbt.adapters.jammi.topic.definition import TopicDefinition
from tests.unit.rejections import rejects


@pytest.mark.parametrize("value", ["analytics", "Registry_2", "_shared"])
def test_plain_schema_names_are_accepted(value):
    assert validate_registry_schema(value, "model 'orders'") == value


@pytest.mark.parametrize("value", [None, ""])
def test_unset_means_the_models_schema(value):
    assert validate_registry_schema(value, "model 'orders'") is None


@pytest.mark.parametrize(
    "value", ["x.y --", "x.y", "a b", "`x`", "x;drop", "x/*", "1abc", "x" * 200, 5, ["x"]]
)
def test_anything_else_is_refused_naming_model_option_and_fix(value):
    with pytest.raises(JammiValidationError) as error:
        validate_registry_schema(value, "model 'orders'")
    message = str(error.value)
    assert "model 'orders': registry_schema" in message
    assert "Fix: set registry_schema to a plain schema name" in message


class Relation:
    schema = "analytics"

    def incorporate(self, path, type):
        return f"{path['schema']}.{path['identifier']}"


def test_mutable_registry_relation_uses_the_validated_schema():
    assert render_registry("shared") == "shared.mutable_tables"
    assert render_registry(None) == "analytics.mutable_tables"


def test_mutable_registry_relation_refuses_a_spliced_schema():
    with pytest.raises(JammiValidationError, match="registry_schema 'x.y --'"):
        render_registry("x.y --")


def render_registry(registry_schema):
    """The registry relation a mutable_table model records itself in (table_state.py)."""
    return TableStateService.registry_relation(
        None,  # type: ignore[arg-type]  # no statement: the relation is only named
        Relation(),
        registry_schema,
        {"table_id": "orders"},
    )


def test_topic_definition_refuses_a_spliced_registry_schema():
    columns = [("order_id", "int"), ("op", "string")]
    with pytest.raises(JammiValidationError) as error:
        TopicDefinition.from_config("cdc_orders", columns, {"registry_schema": "x.y --"})
    assert "topic 'cdc_orders': registry_schema 'x.y --'" in str(error.value)
    assert TopicDefinition.from_config("cdc_orders", columns, {"registry_schema": "shared"})


@pytest.mark.parametrize(
    "model, define, config",
    [
        ("items", run_definition, {"primary_key": ["id"]}),
        ("cdc_bad", partial(JammiAdapter.topic_definition, None), {"topic_name": "cdc.bad"}),
    ],
    ids=["items", "cdc_bad"],
)
def test_a_runs_definition_refuses_a_spliced_registry_schema(model, define, config):
    """The adapter call each materialization makes first with the model's config
    (run_config.run_definition, topic_definition), with the models of
    tests/functional/topic/test_registry_schema_config.py."""
    config = {**config, "registry_schema": "x.y --"}
    rejects(
        lambda: define(model, [("id", "int"), ("v", "string")], config),
        f"'{model}': registry_schema 'x.y --'",
        "Fix: set registry_schema to a plain schema name",
    )
