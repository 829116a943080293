"""Schema evolution as far as the table's format allows (``on_schema_change``
``append_new_columns`` / ``sync_all_columns``): which stored column types widen in place
to the model's, which struct fields are added, which columns are dropped, and the refusal
(with the fix) where the format or the metastore cannot record the change.
docs/mutable_table.md, "Missing and new columns"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import decimal_parts, normalize_type

EVOLVING = ("append_new_columns", "sync_all_columns")
TYPE_WIDENING_PROPERTY = "delta.enableTypeWidening"
COLUMN_MAPPING_PROPERTY = "delta.columnMapping.mode"

_INTEGER_ORDER = ("tinyint", "smallint", "int", "bigint")
_SPARK_MAJOR = re.compile(r"^\s*(\d+)\.")


@dataclass(frozen=True)
class FormatEvolution:
    """What a stored table can change about its schema in place: a rewrite format's
    (parquet, orc) only adds columns; the metastore keeps its columns' types and cannot
    drop one. Each MERGE format's class below says what it changes besides
    (table_format.py chooses the class)."""

    file_format: str
    # Delta: type widening is on for the table (its property, or the model's
    # tblproperties set before the run writes)
    type_widening: bool = False
    # Delta 4.0 or later (Spark 4): widens beyond tinyint -> smallint -> int
    delta_4: bool = False
    # Delta with column mapping by name: columns can be dropped
    column_mapping: bool = False

    def widens(self, stored_type: str, batch_type: str) -> bool:
        """Whether the stored column's type becomes ``batch_type`` in place, every
        stored value kept exactly."""
        stored, batch = normalize_type(stored_type), normalize_type(batch_type)
        return stored != batch and self._promotes(stored, batch)

    def _promotes(self, stored: str, batch: str) -> bool:
        return False

    def on_spark(self, spark_version: str) -> FormatEvolution:
        """The same, on a server running ``spark_version`` (Delta 4.0 is Spark 4's)."""
        major = _SPARK_MAJOR.match(spark_version or "")
        return replace(self, delta_4=major is not None and int(major.group(1)) >= 4)

    @property
    def adds_struct_fields(self) -> bool:
        return False

    @property
    def drops_columns(self) -> bool:
        return False

    def drop_refusal_fix(self) -> str:
        return (
            f"a {self.file_format} table's columns are kept by the metastore, which cannot "
            "drop one: keep the column (partial_updates: true keeps its stored values), or "
            "rebuild the table with --full-refresh (needs config full_refresh: true)"
        )


@dataclass(frozen=True)
class DeltaEvolution(FormatEvolution):
    """Delta: types widen under type widening (beyond int and to double or a wider
    decimal from Delta 4.0), struct fields are added, columns drop under column
    mapping by name."""

    def _promotes(self, stored: str, batch: str) -> bool:
        if not self.type_widening:
            return False
        if _integer_widening(stored, batch):
            return self.delta_4 or batch != "bigint"
        return self.delta_4 and (
            (stored == "float" and batch == "double")
            or (stored in _INTEGER_ORDER[:3] and batch == "double")
            or _decimal_widening(stored, batch)
        )

    @property
    def adds_struct_fields(self) -> bool:
        return True

    @property
    def drops_columns(self) -> bool:
        return self.column_mapping

    def drop_refusal_fix(self) -> str:
        return (
            f"set tblproperties {{'{COLUMN_MAPPING_PROPERTY}': 'name'}} on the model "
            "(Delta drops a column only under column mapping, which upgrades the "
            "table's protocol), keep the column (partial_updates: true keeps its "
            "stored values), or rebuild the table with --full-refresh (needs config "
            "full_refresh: true)"
        )


@dataclass(frozen=True)
class IcebergEvolution(FormatEvolution):
    """Iceberg: its type promotions, struct fields added, columns dropped."""

    def _promotes(self, stored: str, batch: str) -> bool:
        return _iceberg_promotion(stored, batch)

    @property
    def adds_struct_fields(self) -> bool:
        return True

    @property
    def drops_columns(self) -> bool:
        return True


@dataclass(frozen=True)
class SchemaEvolution:
    """The in-place changes a run makes before it writes."""

    # [name, stored type, new type]
    widened: list[list[str]] = field(default_factory=list)
    # [struct column, field, field type], in the model's field order
    added_fields: list[list[str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.widened or self.added_fields or self.dropped)


def struct_fields(spark_type: str) -> Optional[list[tuple[str, str]]]:
    """The (name, type) fields of a ``struct<...>`` type string, None for other types."""
    t = normalize_type(spark_type)
    if not (t.startswith("struct<") and t.endswith(">")):
        return None
    body, fields, depth, start = t[len("struct<") : -1], [], 0, 0
    for i, ch in enumerate(body + ","):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            name, _, field_type = body[start:i].partition(":")
            fields.append((name.strip("`"), field_type))
            start = i + 1
    return fields if body else []


def added_struct_fields(stored_type: str, batch_type: str) -> Optional[list[tuple[str, str]]]:
    """The fields ``batch_type`` appends to the stored struct (every stored field kept,
    in order, with its type), or None when the change is anything else."""
    stored, batch = struct_fields(stored_type), struct_fields(batch_type)
    if stored is None or batch is None or len(batch) <= len(stored):
        return None
    if batch[: len(stored)] != stored:
        return None
    return batch[len(stored) :]


def plan_evolution(
    on_schema_change: str,
    evolution: Optional[FormatEvolution],
    stored_types: Mapping[str, str],
    batch_types: Mapping[str, str],
) -> SchemaEvolution:
    """The widened columns and added struct fields of the batch's columns (dropped
    columns: ``dropped_columns``); nothing unless ``on_schema_change`` evolves."""
    if evolution is None or on_schema_change not in EVOLVING:
        return SchemaEvolution()
    widened, added = [], []
    for name, stored_type in stored_types.items():
        batch_type = batch_types.get(name)
        if batch_type is None or normalize_type(batch_type) == stored_type:
            continue
        if evolution.widens(stored_type, batch_type):
            widened.append([name, stored_type, normalize_type(batch_type)])
        elif evolution.adds_struct_fields:
            fields = added_struct_fields(stored_type, batch_type)
            added += [[name, f, t] for f, t in fields or []]
    return SchemaEvolution(widened=widened, added_fields=added)


def _integer_widening(stored: str, batch: str) -> bool:
    return (
        stored in _INTEGER_ORDER
        and batch in _INTEGER_ORDER
        and _INTEGER_ORDER.index(batch) > _INTEGER_ORDER.index(stored)
    )


def _decimal_widening(stored: str, batch: str) -> bool:
    old, new = decimal_parts(stored), decimal_parts(batch)
    return bool(old and new) and new[1] == old[1] and new[0] > old[0]  # type: ignore[index]


def _iceberg_promotion(stored: str, batch: str) -> bool:
    """Iceberg's type promotions: int to long, float to double, a decimal's precision
    (Spark's tinyint and smallint are stored as Iceberg ints)."""
    return (
        (stored in ("tinyint", "smallint", "int") and batch == "bigint")
        or (stored == "float" and batch == "double")
        or _decimal_widening(stored, batch)
    )


def evolved_types(
    stored_types: Mapping[str, str], evolution: SchemaEvolution, batch_types: Mapping[str, str]
) -> dict[str, str]:
    """The stored column types after the evolution."""
    types = dict(stored_types)
    for name, _, new_type in evolution.widened:
        types[name] = new_type
    for name in {f[0] for f in evolution.added_fields}:
        types[name] = normalize_type(batch_types[name])
    for name in evolution.dropped:
        types.pop(name, None)
    return types


def dropped_columns(
    subject_refusal: Sequence[str], evolution: Optional[FormatEvolution]
) -> Optional[str]:
    """The fix that refuses dropping ``subject_refusal`` columns, or None when the
    format drops them."""
    if not subject_refusal:
        return None
    if evolution is not None and evolution.drops_columns:
        return None
    return (evolution or FormatEvolution("parquet")).drop_refusal_fix()


# What a Hive metastore answers when Iceberg syncs a struct that gained a field to it.
_HIVE_INCOMPATIBLE = "types incompatible with the existing columns"
HIVE_SETTING = "hive.metastore.disallow.incompatible.col.type.changes"


def metastore_refusal(model_name: str, error_text: str) -> Optional[JammiValidationError]:
    """The clear error for a schema change the table's Hive metastore refused (nothing
    of it was committed), or None for any other error."""
    if _HIVE_INCOMPATIBLE not in error_text:
        return None
    return JammiValidationError(
        f"mutable_table '{model_name}'",
        "the Hive metastore behind the table refused its schema change (a struct column "
        "that gains a field); the table's schema and rows are as they were",
        f"set {HIVE_SETTING}=false on the metastore (an embedded session: "
        f"server_side_parameters spark.hadoop.{HIVE_SETTING}: 'false'), or output the "
        "struct as it was stored",
    )
