"""The closed column type set and the mapping from Spark's type strings onto it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

CLOSED_TYPES: tuple[str, ...] = (
    "boolean",
    "tinyint",
    "smallint",
    "int",
    "bigint",
    "float",
    "double",
    "string",
    "binary",
)

INTEGER_TYPES: frozenset[str] = frozenset({"tinyint", "smallint", "int", "bigint"})

# Spark's aliases and catalog spellings of the closed types.
_ALIASES = {
    "bool": "boolean",
    "byte": "tinyint",
    "short": "smallint",
    "integer": "int",
    "long": "bigint",
    "real": "float",
}

_VARCHAR = re.compile(r"^(var)?char\s*\(\s*\d+\s*\)$")
_DECIMAL = re.compile(r"^(decimal|dec|numeric)\s*(\(\s*(\d+)\s*(,\s*(\d+)\s*)?\))?$")


@dataclass(frozen=True)
class TypeMapping:
    """Where a Spark type lands: a closed type, or a rejection with the encoding to use."""

    spark_type: str
    closed_type: Optional[str]
    encoding_hint: Optional[str] = None


def map_spark_type(spark_type: str, column: str = "col") -> TypeMapping:
    """Map a type string as Spark reports it (``decimal(10,2)``, ``array<int>``,
    ``timestamp_ntz``, ``varchar(20)``, ``integer``) onto the closed set."""
    raw = spark_type.strip()
    t = raw.lower()
    t = _ALIASES.get(t, t)
    if t in CLOSED_TYPES:
        return TypeMapping(raw, t)
    if _VARCHAR.match(t):
        return TypeMapping(raw, "string")
    if t in ("timestamp", "timestamp_ntz", "timestamp_ltz"):
        return TypeMapping(
            raw,
            None,
            f"store it as bigint epoch milliseconds: "
            f"{{{{ to_epoch_millis('{column}') }}}} as {column}",
        )
    if t == "date":
        return TypeMapping(
            raw,
            None,
            f"store it as bigint epoch milliseconds (midnight UTC): "
            f"{{{{ to_epoch_millis('{column}') }}}} as {column}",
        )
    decimal = _DECIMAL.match(t)
    if decimal:
        scale = decimal.group(5) or "0"
        return TypeMapping(
            raw,
            None,
            f"store it as a scaled bigint: "
            f"{{{{ to_scaled_bigint('{column}', {scale}) }}}} as {column}",
        )
    if t.startswith(("array", "map", "struct")):
        return TypeMapping(
            raw,
            None,
            f"store nested values as a JSON string: to_json({column}) as {column}, "
            "or split them into scalar columns",
        )
    if t.startswith("interval"):
        return TypeMapping(raw, None, f"store the duration as bigint milliseconds in {column}")
    if t in ("void", "null"):
        return TypeMapping(
            raw,
            None,
            f"give the NULL literal a type: cast(null as string) as {column}",
        )
    return TypeMapping(raw, None, f"cast {column} to one of: {', '.join(CLOSED_TYPES)}")
