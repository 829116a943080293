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
# Spark 4 reports a string column's non-default collation as a suffix:
# ``string collate UTF8_LCASE``. UTF8_BINARY is the default and compares bytes.
_COLLATED = re.compile(r"^(?P<base>.+?)\s+collate\s+(?P<collation>\S+)$")
_BINARY_COLLATION = "utf8_binary"
_TIME = re.compile(r"^time\s*(\(\s*\d+\s*\))?$")
_DECIMAL = re.compile(r"^(decimal|dec|numeric)\s*(\(\s*(\d+)\s*(,\s*(\d+)\s*)?\))?$")


@dataclass(frozen=True)
class TypeMapping:
    """Where a Spark type lands: a closed type, or a rejection with the encoding to use."""

    spark_type: str
    closed_type: Optional[str]
    encoding_hint: Optional[str] = None


def map_spark_type(spark_type: str, column: str = "col") -> TypeMapping:
    """Map a type string as Spark reports it (``decimal(10,2)``, ``array<int>``,
    ``timestamp_ntz``, ``varchar(20)``, ``integer``, Spark 4's ``string collate
    UTF8_LCASE``, ``variant`` and ``time(6)``) onto the closed set."""
    raw = spark_type.strip()
    t = raw.lower()
    collated = _COLLATED.match(t)
    if collated:
        return _map_collated(raw, collated.group("base"), collated.group("collation"), column)
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
    if t == "variant":
        return TypeMapping(
            raw,
            None,
            f"store the semi-structured value as a JSON string: to_json({column}) as {column}",
        )
    if _TIME.match(t):
        return TypeMapping(
            raw,
            None,
            f"store the time of day as bigint milliseconds since midnight in {column}",
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


def _map_collated(raw: str, base: str, collation: str, column: str) -> TypeMapping:
    """A collated string keeps the closed ``string`` type only under the default,
    byte-wise collation: keys and change detection compare values byte by byte, so a
    case- or accent-insensitive collation would change what counts as the same key."""
    mapped = map_spark_type(base, column)
    if mapped.closed_type != "string":
        return TypeMapping(raw, None, mapped.encoding_hint)
    if collation == _BINARY_COLLATION:
        return TypeMapping(raw, "string")
    return TypeMapping(
        raw,
        None,
        f"keys and change detection compare strings byte by byte; give it the default "
        f"collation: collate({column}, 'UTF8_BINARY') as {column}",
    )
