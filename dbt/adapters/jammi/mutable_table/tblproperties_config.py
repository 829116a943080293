"""Config ``tblproperties``: table properties a model asks for on its storage table.

The same config as dbt-spark's (``tblproperties: {'write.merge.mode': 'merge-on-read'}``),
validated here before any SQL runs. The materialization sets the properties in the
statement that creates the table, and on a later run sets those whose value on the
table differs (``ALTER TABLE ... SET TBLPROPERTIES``) before the run writes its batch,
so that run already writes under them: e.g. Iceberg's merge-on-read
(``write.merge.mode``, ``write.update.mode``, ``write.delete.mode``) or Delta's
deletion vectors. A property removed from the config stays on the table (``ALTER TABLE
... UNSET TBLPROPERTIES`` removes it); the table's other properties are never touched.

Refused: keys under ``jammi.`` (the materialization's own record of the table), and
``delta.enableChangeDataFeed`` with ``changelog: true`` (the changelog sets it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.jammi.common.errors import JammiValidationError

OPTION = "tblproperties"
RESERVED_PREFIX = "jammi."
CHANGE_FEED = "delta.enableChangeDataFeed"

# One property of DESCRIBE TABLE EXTENDED's "Table Properties" row, ``[k1=v1,k2=v2]``:
# a key up to its `=`, a value up to the next `,key=` or the closing `]`.
_PROPERTY = re.compile(r"(?:^\[|,)\s?([^=,\[\]]+)=(.*?)(?=,\s?[^=,\[\]]+=|\]$)")


def validate_tblproperties(value: Any, subject: str, changelog: bool = False) -> dict[str, str]:
    """``tblproperties`` as {key: value} strings ({} when unset); raises naming the
    model, the property and the fix."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise JammiValidationError(
            subject,
            f"'{OPTION}' must be a mapping of property names to values, got {value!r}",
            "set e.g. tblproperties: {'write.merge.mode': 'merge-on-read'}",
        )
    properties: dict[str, str] = {}
    for key, item in value.items():
        name = str(key).strip()
        if not name or any(ch in name for ch in "=,[]'\n"):
            raise JammiValidationError(
                subject,
                f"'{OPTION}' has the property name {key!r}, which Spark cannot store",
                "name each property with letters, digits, '.', '-' or '_'",
            )
        if name.lower().startswith(RESERVED_PREFIX):
            raise JammiValidationError(
                subject,
                f"'{OPTION}' sets '{name}': properties under '{RESERVED_PREFIX}' are the "
                "materialization's record of the table",
                f"remove '{name}' from tblproperties",
            )
        if changelog and name == CHANGE_FEED:
            raise JammiValidationError(
                subject,
                f"'{OPTION}' sets '{CHANGE_FEED}', which changelog: true sets itself",
                f"remove '{CHANGE_FEED}' from tblproperties",
            )
        if item is None or isinstance(item, (Mapping, list, tuple)):
            raise JammiValidationError(
                subject,
                f"'{OPTION}' gives '{name}' the value {item!r}; a property is one value",
                f"set '{name}' to a string, number or true/false",
            )
        properties[name] = str(item).lower() if isinstance(item, bool) else str(item)
    return properties


def describe_table_properties(rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    """Every property of the ``Table Properties`` row of DESCRIBE TABLE EXTENDED."""
    for row in rows:
        if len(row) >= 2 and str(row[0]).strip() == "Table Properties":
            return {k.strip(): v for k, v in _PROPERTY.findall(str(row[1]).strip())}
    return {}


def changed_properties(wanted: Mapping[str, str], current: Mapping[str, str]) -> dict[str, str]:
    """The properties of ``wanted`` the table does not hold with that value."""
    return {key: value for key, value in wanted.items() if current.get(key) != value}
