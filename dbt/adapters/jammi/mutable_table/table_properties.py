"""What a mutable table records about itself: its ``jammi.*`` table properties (the
definition, hex-encoded, its version and kind), which keys of a run's definition it
records, and the readers of ``DESCRIBE ... EXTENDED`` rows."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Optional

from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition

# Table properties written on every storage table. Neither the keys nor the values may
# match spark.redaction.regex (default "(?i)secret|password|token|access[.]?key"): Spark
# shows a property whose key OR value matches as "*********(redacted)" in SHOW
# TBLPROPERTIES. The definition JSON names the model's columns (a column `api_secret`
# would match), so it is stored hex-encoded: hex digits cannot spell any of those words.
PROP_DEFINITION = "jammi.definition"
DEFINITION_ENCODING = "hex:"
PROP_VERSION = "jammi.version"
PROP_KIND = "jammi.kind"

# What a table records of its definition (the ``jammi.definition`` property and the
# registry row): the definition's own fields and the keys it derives from them
# (``MutableTableDefinition.to_dict``). Whatever a run adds to its definition dict (the
# batch's columns, the plan's clock, the changelog's topic, ...) is not one of them and
# is never recorded, so a new per-run key cannot make the next run see a changed
# definition.
RECORDED_KEYS = frozenset(field.name for field in fields(MutableTableDefinition)) | {
    "storage_key",
    "value_columns",
    "storage_columns",
}


def recorded_definition(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a run's definition dict the table records."""
    return {key: value for key, value in definition.items() if key in RECORDED_KEYS}


def describe_location(rows: Sequence[Sequence[Any]]) -> Optional[str]:
    """The ``Location`` row of ``DESCRIBE TABLE EXTENDED`` / ``DESCRIBE SCHEMA EXTENDED``."""
    for row in rows:
        if len(row) >= 2 and str(row[0]).strip().lower() == "location":
            return str(row[1]).strip()
    return None


# One property of the ``Table Properties`` row of ``DESCRIBE TABLE EXTENDED``: Spark
# prints ``[key=value, key=value]`` (Delta: ``[key=value,key=value]``), keys sorted.
_JAMMI_PROPERTY = re.compile(r"(?:^\[|,\s?)(jammi\.[A-Za-z0-9_.]+)=([^,\]]*)")


def describe_properties(rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    """The ``jammi.*`` table properties, from the ``Table Properties`` row of ``DESCRIBE
    TABLE EXTENDED`` (so one statement gives a table's columns, location and properties).
    Their values never hold ``,`` or ``]`` (hex, names, numbers), except a plain-JSON
    ``jammi.definition`` written before the hex encoding: it is cut at its first comma,
    so it does not parse and the run reads the registry instead, as for a redacted one."""
    for row in rows:
        if len(row) >= 2 and str(row[0]).strip() == "Table Properties":
            return dict(_JAMMI_PROPERTY.findall(str(row[1]).strip()))
    return {}


def encode_definition(definition_json: str) -> str:
    """The ``jammi.definition`` property value: the JSON, hex-encoded (see above)."""
    return DEFINITION_ENCODING + definition_json.encode("utf-8").hex()


def parse_definition(text: Any) -> Optional[dict[str, Any]]:
    """A recorded definition: hex-encoded (current) or plain JSON (tables and registry
    rows written before the encoding). None when it is absent or unreadable, e.g. a
    plain-JSON property that Spark redacts because it names a column like ``api_secret``."""
    if not isinstance(text, str) or not text:
        return None
    raw = text.strip()
    if raw.startswith(DEFINITION_ENCODING):
        try:
            raw = bytes.fromhex(raw[len(DEFINITION_ENCODING) :]).decode("utf-8")
        except ValueError:
            return None
    if not raw.startswith("{"):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def stored_definition(properties: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    return parse_definition(properties.get(PROP_DEFINITION))


def foreign_table_error(
    relation: str, subject: Optional[str], model_name: Optional[str]
) -> Exception:
    """A table the mutable_table materialization did not create, named where a run or an
    operation (``subject``) met it."""
    from dbt.adapters.jammi.mutable_table.run_errors import MutableRunError

    fix = "name a mutable_table" if subject else "drop it, or rename the model"
    return MutableRunError(
        f"{subject or f'mutable_table {model_name!r}'}: {relation} exists but was not created "
        f"by the mutable_table materialization.\n  Fix: {fix}"
    )
