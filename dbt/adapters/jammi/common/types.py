"""The column types a definition accepts: Spark's own (``type_set: spark``, the default)
or Jammi's closed set (``type_set: jammi``), and the mapping from Spark's type strings
onto either."""

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
FLOAT_TYPES: frozenset[str] = frozenset({"float", "double"})
# Spark's types for points in time (timestamp_ltz is reported as timestamp).
TIME_TYPES: frozenset[str] = frozenset({"timestamp", "timestamp_ntz", "date"})

# Spark 4's semi-structured type: Spark compares no variants (a change is decided by its
# JSON text) and only some formats store it (mutable_table/column_types.py).
VARIANT = "variant"

# type_set: which types a model's columns may have.
TYPE_SET_SPARK = "spark"
TYPE_SET_JAMMI = "jammi"
TYPE_SETS: tuple[str, ...] = (TYPE_SET_SPARK, TYPE_SET_JAMMI)

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


def map_spark_type(
    spark_type: str, column: str = "col", type_set: str = TYPE_SET_JAMMI
) -> TypeMapping:
    """Map a type string as Spark reports it (``decimal(10,2)``, ``array<int>``,
    ``timestamp_ntz``, ``varchar(20)``, ``integer``, Spark 4's ``string collate
    UTF8_LCASE``, ``variant`` and ``time(6)``) onto the type set: ``closed_type`` is the
    type the column is stored as (None: refused, ``encoding_hint`` says what to do).

    ``spark`` keeps Spark's own scalar, time, decimal and nested types (normalized:
    ``integer`` is ``int``, ``decimal`` is ``decimal(10,0)``, ``varchar(n)`` is
    ``string``); ``jammi`` maps onto the closed set only."""
    raw = spark_type.strip()
    t = raw.lower()
    collated = _COLLATED.match(t)
    if collated:
        return _map_collated(
            raw, collated.group("base"), collated.group("collation"), column, type_set
        )
    t = _ALIASES.get(t, t)
    if t in CLOSED_TYPES:
        return TypeMapping(raw, t)
    if _VARCHAR.match(t):
        return TypeMapping(raw, "string")
    if type_set == TYPE_SET_SPARK:
        native = _native_type(raw, t)
        if native is not None:
            return TypeMapping(raw, native)
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


def _native_type(raw: str, t: str) -> Optional[str]:
    """The Spark type a ``type_set: spark`` column is stored as, or None when even Spark's
    own set is no place for it (variant, time, interval, void: their hints apply)."""
    if t in ("timestamp", "timestamp_ltz"):
        return "timestamp"
    if t in ("timestamp_ntz", "date"):
        return t
    decimal = _DECIMAL.match(t)
    if decimal:
        return f"decimal({decimal.group(3) or 10},{decimal.group(5) or 0})"
    if t.startswith(("array<", "map<", "struct<")):
        return normalize_type(raw)
    if t == VARIANT:
        return VARIANT  # Spark 4: a value column, compared by its JSON text
    return None


def normalize_type(spark_type: str) -> str:
    """A type string compared as Spark compares types: lower case, no blanks (struct field
    names keep their case: ``struct<Name:string>``)."""
    text = re.sub(r"\s+", "", spark_type.strip())
    # type names lower, struct field names as written (each is followed by ':')
    return re.sub(r"[A-Za-z_][A-Za-z0-9_]*(?!\w|:)", lambda m: m.group(0).lower(), text)


def is_nested(spark_type: str) -> bool:
    """Arrays, maps, structs and Spark 4's variants: value columns only (never a key,
    index or version)."""
    return spark_type.lower().startswith(("array", "map", "struct", VARIANT))


def holds_variant(spark_type: str) -> bool:
    """A variant, or a nested type with a variant inside."""
    # a type position: the whole type, or after '<', ',' or a field's ':' (a struct
    # field named variant is followed by ':')
    return re.search(r"(^|[<,:])\s*variant\s*($|[>,])", spark_type.lower()) is not None


def is_decimal(spark_type: str) -> bool:
    return spark_type.lower().startswith("decimal")


def is_numeric(spark_type: str) -> bool:
    t = spark_type.lower()
    return t in INTEGER_TYPES or t in FLOAT_TYPES or is_decimal(t)


def is_version_type(spark_type: str) -> bool:
    """Types a version rule compares: whole numbers, decimals, dates, timestamps and
    strings (floats are not: two versions must be equal or not, exactly)."""
    t = spark_type.lower()
    return t in INTEGER_TYPES or t in TIME_TYPES or t == "string" or is_decimal(t)


def is_time_or_integer(spark_type: str) -> bool:
    """A point in time as Spark's types or as whole epoch milliseconds."""
    t = spark_type.lower()
    return t in INTEGER_TYPES or t in TIME_TYPES


def decimal_parts(spark_type: str) -> Optional[tuple[int, int]]:
    """``(precision, scale)`` of a ``decimal(p,s)`` type string, None for other types."""
    decimal = _DECIMAL.match(spark_type.strip().lower())
    if not decimal:
        return None
    return int(decimal.group(3) or 10), int(decimal.group(5) or 0)


def _map_collated(
    raw: str, base: str, collation: str, column: str, type_set: str = TYPE_SET_JAMMI
) -> TypeMapping:
    """A collated string keeps the closed ``string`` type only under the default,
    byte-wise collation: keys and change detection compare values byte by byte, so a
    case- or accent-insensitive collation would change what counts as the same key."""
    mapped = map_spark_type(base, column, type_set)
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
