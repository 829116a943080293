"""The one table of config keys (common/config_keys.py) and what it feeds: JammiConfig,
the mutable table definition's parsing, and the docs' config references."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from dbt.adapters.jammi.common.config_keys import (
    CONFIG_KEYS,
    DECLARED_BY_DBT,
    DECLARED_BY_DBT_SPARK,
    MUTABLE_TABLE,
    TOPIC,
    config_keys,
)
from dbt.adapters.jammi.impl import JammiConfig
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules.registry import RULE_OPTIONS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def documented_keys(page: str) -> list[str]:
    """The first column of the table that opens a page's "## Configs" section (one key
    per row, or several)."""
    text = (DOCS / page).read_text()
    section = text.split("\n## Configs\n", 1)[1].lstrip("\n")
    table = section.split("\n\n", 1)[0].splitlines()[2:]  # the rows, past the header
    keys: list[str] = []
    for line in table:
        keys += re.findall(r"`([a-z_]+)`", line.split("|")[1])
    return keys


def test_every_key_is_listed_once():
    names = [key.name for key in CONFIG_KEYS]
    assert len(names) == len(set(names))
    assert {key.role for key in CONFIG_KEYS} == {"definition", "run", "topic"}


def test_the_definition_keys_are_the_definitions_own_fields():
    fields = {f.name for f in dataclasses.fields(MutableTableDefinition)}
    assert set(config_keys(MUTABLE_TABLE, "definition")) == fields - {"table_id", "columns"}
    assert set(RULE_OPTIONS) <= set(config_keys(MUTABLE_TABLE, "definition"))


def test_from_config_reads_every_definition_key():
    schema = {"id": "bigint", "v": "bigint", "n": "bigint", "first_seen": "bigint"}
    config = {
        "primary_key": ["id"],
        "version_column": "v",
        "delete_when": "v < 0",
        "tombstone_retention": "30d",
        "identity_column": "row_no",
        "ttl_ms": 60_000,
        "ttl_column": "first_seen",
        "merge_functions": {"n": "sum"},
        "ordering_column": "v",
        "type_set": "jammi",
        "hard_deletes": "delete",
        "on_schema_change": "append_new_columns",
        "file_format": "delta",
        "partial_updates": True,
    }
    definition = MutableTableDefinition.from_config("t", schema, config)
    assert definition.tombstone_retention == 30 * 86_400_000
    assert definition.identity_column == "row_no"
    assert (definition.ttl_ms, definition.ttl_column) == (60_000, "first_seen")
    assert definition.merge_functions == (("n", "sum"),)
    assert (definition.ordering_column, definition.type_set) == ("v", "jammi")
    assert (definition.hard_deletes, definition.on_schema_change) == (
        "delete",
        "append_new_columns",
    )
    assert (definition.file_format, definition.partial_updates) == ("delta", True)


def test_jammi_config_declares_every_key_dbt_and_dbt_spark_do_not():
    declared = {f.name for f in dataclasses.fields(JammiConfig)}
    ours = {key.name for key in CONFIG_KEYS} - {*DECLARED_BY_DBT, *DECLARED_BY_DBT_SPARK}
    assert ours <= declared
    config = JammiConfig.from_dict({"identity_column": "n", "tombstone_retention": "7d"})
    assert (config.identity_column, config.tombstone_retention) == ("n", "7d")


@pytest.mark.parametrize(
    "page, materialization",
    [("mutable_table.md", MUTABLE_TABLE), ("topic.md", TOPIC)],
)
def test_the_docs_config_reference_lists_the_table(page, materialization):
    documented = documented_keys(page)
    assert len(documented) == len(set(documented)), page
    assert set(documented) == set(config_keys(materialization)), page
