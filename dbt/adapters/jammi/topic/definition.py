"""The definition of a topic, built and validated in Python: its name, columns, retention
and registry schema; recorded in the topics registry."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from dbt.adapters.jammi.common import clock
from dbt.adapters.jammi.common.columns import ColumnDef, SchemaInput, output_columns
from dbt.adapters.jammi.common.validation import (
    require_choice,
    require_positive_int,
    validate_registry_schema,
    validate_topic_name,
    validate_type_set,
)


def new_topic_id(now_ms: Optional[int] = None) -> str:
    """A time-ordered UUID (version 7 layout) rendered lowercase with '_' for '-'."""
    ms = clock.now_ms() if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value)).replace("-", "_")


# How a publish numbers ``_row_idx`` (config ``row_idx``, docs/topic.md): ``contiguous``
# 0..n-1 in the model's output order; ``ordered`` unique and increasing in that order,
# with gaps between Spark's tasks, written in the batch's own stage (topic/row_index.py).
ROW_IDX_FORMS = ("contiguous", "ordered")

TOPIC_ENGINE_COLUMNS: tuple[ColumnDef, ...] = (
    ColumnDef("_offset", "bigint"),
    ColumnDef("_row_idx", "bigint"),
    ColumnDef("_produced_at", "bigint"),
)


@dataclass(frozen=True)
class TopicDefinition:
    name: str
    columns: tuple[ColumnDef, ...]
    topic_id: str = field(default_factory=new_topic_id)
    retention_offsets: Optional[int] = None
    retention_ms: Optional[int] = None
    row_idx: str = "contiguous"

    @property
    def backing_table(self) -> str:
        return f"__topic_{self.topic_id}"

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic_id": self.topic_id,
            "name": self.name,
            "backing_table": self.backing_table,
            "columns": [[c.name, c.type] for c in self.columns],
            "retention_offsets": self.retention_offsets,
            "retention_ms": self.retention_ms,
            "row_idx": self.row_idx,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def with_topic_id(self, topic_id: str) -> TopicDefinition:
        return replace(self, topic_id=topic_id)

    @classmethod
    def from_config(
        cls, model_name: str, schema: SchemaInput, config: Mapping[str, Any]
    ) -> TopicDefinition:
        subject = f"topic '{model_name}'"
        name = config.get("topic_name") or default_topic_name(model_name)
        validate_topic_name(name, subject)
        columns = output_columns(
            list(schema.items()) if isinstance(schema, Mapping) else list(schema),
            subject,
            validate_type_set(config.get("type_set"), subject),
        )
        retention_offsets = config.get("retention_offsets")
        if retention_offsets is not None:
            require_positive_int(retention_offsets, "retention_offsets", subject)
        retention_ms = config.get("retention_ms")
        if retention_ms is not None:
            require_positive_int(retention_ms, "retention_ms", subject)
        validate_registry_schema(config.get("registry_schema"), subject)
        row_idx = config.get("row_idx")
        return cls(
            name=name,
            columns=tuple(columns),
            retention_offsets=retention_offsets,
            retention_ms=retention_ms,
            row_idx=require_choice(
                "contiguous" if row_idx is None else row_idx, "row_idx", ROW_IDX_FORMS, subject
            ),
        )


def default_topic_name(model_name: str) -> str:
    """``cdc_orders`` -> ``cdc.orders``: the first '_' becomes the namespace dot."""
    name = model_name.lower()
    if "." in name or "_" not in name:
        return name
    head, tail = name.split("_", 1)
    return f"{head}.{tail}"
