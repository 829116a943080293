"""The definition recorded in table properties survives Spark's property redaction.

Spark shows a property whose key or value matches spark.redaction.regex as
``*********(redacted)`` in SHOW TBLPROPERTIES; a column named like ``api_secret`` used to
make the recorded definition unreadable, and every later run failed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest

from dbt.adapters.jammi import mutable
from dbt.adapters.jammi.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_adapter import MutableTableAdapterMixin
from dbt.adapters.jammi.validation import quote_identifier, sql_string_literal

MACROS = Path(__file__).resolve().parents[2] / "dbt" / "include" / "jammi" / "macros"
# Spark's default spark.redaction.regex, and a stricter one a deployment might set.
REDACTION_REGEXES = ["(?i)secret|password|token|access[.]?key", "(?i)secret|password|key|pwd"]
REDACTED = "*********(redacted)"
SCHEMA = {
    "id": "bigint",
    "api_secret": "string",
    "password": "string",
    "auth_token": "string",
    "access_key": "string",
}


class _Adapter(MutableTableAdapterMixin):
    def sql_string(self, value: Any) -> str:
        return sql_string_literal(str(value))

    def quote_column(self, name: str) -> str:
        return quote_identifier(name)


def _properties_clause(definition: dict, version: Any = 3) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(MACROS)), extensions=["jinja2.ext.do"]
    )
    env.globals.update(adapter=_Adapter(), **{"return": lambda value: value})
    module = env.get_template("relations/mutable_table.sql").module
    return str(module.mutable_table_properties_clause(definition, "parquet", version))


def _shown_properties(clause: str, regex: str) -> dict[str, str]:
    """What SHOW TBLPROPERTIES returns: Spark's redaction applied to every pair."""
    pattern = re.compile(regex)
    pairs = re.findall(r"'((?:[^'\\]|\\.)*)'\s*=\s*'((?:[^'\\]|\\.)*)'", clause)
    shown = {}
    for key, value in pairs:
        value = re.sub(r"\\(.)", r"\1", value)
        redacted = pattern.search(key) or pattern.search(value)
        shown[key] = REDACTED if redacted else value
    return shown


@pytest.mark.parametrize("regex", REDACTION_REGEXES)
def test_definition_with_secret_like_columns_reads_back(regex):
    definition = MutableTableDefinition.from_config(
        "accounts", SCHEMA, {"primary_key": ["id"], "delete_when": "password = 'x'"}
    ).to_dict()
    shown = _shown_properties(_properties_clause(definition), regex)
    assert REDACTED not in shown.values(), shown
    assert shown["jammi.kind"] == "mutable_table"
    stored = mutable.stored_definition(shown)
    assert stored is not None
    assert stored["columns"] == [[n, t] for n, t in SCHEMA.items()]
    assert stored["primary_key"] == ["id"]
    assert stored["delete_when"] == "password = 'x'"


def test_plain_json_definitions_still_read():
    """Tables (and registry rows) written before the encoding hold plain JSON."""
    plain = json.dumps({"table_id": "t", "primary_key": ["id"]})
    assert mutable.stored_definition({"jammi.definition": plain})["primary_key"] == ["id"]
    assert mutable.parse_definition(plain)["table_id"] == "t"


def test_unreadable_definitions_are_none_not_a_crash():
    assert mutable.stored_definition({"jammi.definition": REDACTED}) is None
    assert mutable.stored_definition({}) is None
    assert mutable.parse_definition("hex:zz") is None
    assert mutable.parse_definition(None) is None
