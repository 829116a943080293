"""Definitions of mutable tables and topics, built and validated in Python.

A definition is what a model's config plus its output schema mean; it is recorded on
the storage table and in the registry, and it is the only input the Jinja
materializations take decisions from.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Optional, Union

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.types import INTEGER_TYPES
from dbt.adapters.jammi.common.validation import (
    column_list,
    require_bool,
    require_choice,
    require_columns,
    require_positive_int,
    validate_column_name,
    validate_column_type,
    validate_registry_schema,
    validate_table_id,
    validate_topic_name,
)
from dbt.adapters.jammi.mutable_table.rules.changelog import (
    validate_changelog,
    validate_changelog_rebuild,
)
from dbt.adapters.jammi.mutable_table.rules.merge_functions import validate_merge_functions
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN, validate_ttl

FILE_FORMATS = ("auto", "delta", "parquet", "orc", "iceberg", "hudi")
HARD_DELETES = ("ignore", "delete")
HISTORY_MODES = ("none", "scd2")
ON_SCHEMA_CHANGE = ("fail", "append_new_columns")

# Definition keys recorded only when set (see MutableTableDefinition.to_dict).
OPTIONAL_KEYS = ("merge_functions", "ttl_ms", "ttl_column", "changelog")

SchemaInput = Union[Mapping[str, str], Iterable[tuple[str, str]]]


@dataclass(frozen=True)
class MutableTableId:
    name: str

    def __post_init__(self) -> None:
        validate_table_id(self.name, f"mutable_table '{self.name}'")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str


@dataclass(frozen=True)
class MutableIndexDef:
    name: str
    columns: tuple[str, ...]
    unique: bool = False


@dataclass(frozen=True)
class MutableTableDefinition:
    table_id: MutableTableId
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...]
    indexes: tuple[MutableIndexDef, ...] = ()
    ordering_column: Optional[str] = None
    version_column: Optional[str] = None
    partial_updates: bool = False
    delete_when: Optional[str] = None
    hard_deletes: str = "ignore"
    history: str = "none"
    valid_from: str = "valid_from"
    valid_to: str = "valid_to"
    track_columns: tuple[str, ...] = ()
    tenant_from: Optional[str] = None
    on_schema_change: str = "fail"
    file_format: str = "auto"
    merge_functions: tuple[tuple[str, str], ...] = ()
    ttl_ms: Optional[int] = None
    ttl_column: Optional[str] = None
    changelog: bool = False

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def value_columns(self) -> list[str]:
        """Columns that are not part of the stored key."""
        key = set(self.storage_key)
        return [c.name for c in self.columns if c.name not in key]

    @property
    def storage_key(self) -> list[str]:
        """The stored row key without tenant_id: scd2 adds valid_from."""
        if self.history == "scd2":
            return [*self.primary_key, self.valid_from]
        return list(self.primary_key)

    @property
    def storage_columns(self) -> list[ColumnDef]:
        """Columns of the storage table, in order, before tenant_id."""
        columns = list(self.columns)
        if self.history == "scd2":
            names = {c.name for c in columns}
            if self.valid_from not in names:
                columns.append(ColumnDef(self.valid_from, "bigint"))
            columns.append(ColumnDef(self.valid_to, "bigint"))
        elif self.ttl_ms and not self.ttl_column:
            columns.append(ColumnDef(WRITTEN_AT_COLUMN, "bigint"))
        return columns

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["table_id"] = self.table_id.name
        data["columns"] = [[c.name, c.type] for c in self.columns]
        data["indexes"] = [
            {"name": i.name, "columns": list(i.columns), "unique": i.unique} for i in self.indexes
        ]
        data["primary_key"] = list(self.primary_key)
        data["track_columns"] = list(self.track_columns)
        data["storage_key"] = self.storage_key
        data["value_columns"] = self.value_columns
        data["storage_columns"] = [[c.name, c.type] for c in self.storage_columns]
        data["merge_functions"] = dict(self.merge_functions)
        # options added after tables were first recorded are written only when set, so
        # a table that does not use them keeps its recorded definition unchanged
        for option in OPTIONAL_KEYS:
            if not data[option]:
                del data[option]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_config(
        cls,
        model_name: str,
        schema: SchemaInput,
        config: Mapping[str, Any],
        table_id: Optional[str] = None,
    ) -> MutableTableDefinition:
        """Build from a dbt model's config (the names in SPEC section 4)."""
        builder = MutableTableDefinitionBuilder(
            MutableTableId(table_id or model_name), schema, model_name=model_name
        )
        known: dict[str, Callable[[Any], Any]] = {
            "primary_key": builder.primary_key,
            "version_column": builder.version_column,
            "partial_updates": builder.partial_updates,
            "delete_when": builder.delete_when,
            "hard_deletes": builder.hard_deletes,
            "history": builder.history,
            "valid_from": builder.valid_from,
            "valid_to": builder.valid_to,
            "track_columns": builder.track_columns,
            "ordering_column": builder.ordering_column,
            "tenant_from": builder.tenant_from,
            "on_schema_change": builder.on_schema_change,
            "file_format": builder.file_format,
            "merge_functions": builder.merge_functions,
            "ttl_ms": builder.ttl_ms,
            "ttl_column": builder.ttl_column,
            "changelog": builder.changelog,
        }
        if config.get("primary_key") is None:
            raise JammiValidationError(
                builder.subject,
                "'primary_key' is not configured",
                "add config(primary_key=['id']) naming the columns that identify a row",
            )
        for option, setter in known.items():
            value = config.get(option)
            if value is not None:
                setter(value)
        indexes = config.get("indexes") or []
        if not isinstance(indexes, list):
            raise JammiValidationError(
                builder.subject,
                f"'indexes' must be a list, got {indexes!r}",
                "write indexes: [{name: by_sku, columns: [sku], unique: true}]",
            )
        for index in indexes:
            if not isinstance(index, Mapping) or set(index) - {"name", "columns", "unique"}:
                raise JammiValidationError(
                    builder.subject,
                    f"index {index!r} is not of the form {{name, columns, unique}}",
                    "write each index as {name: by_sku, columns: [sku], unique: true}",
                )
            builder.index(index.get("name"), index.get("columns"), index.get("unique", False))
        definition = builder.build()
        validate_changelog_rebuild(
            definition.changelog, config.get("full_refresh"), builder.subject
        )
        return definition


class MutableTableDefinitionBuilder:
    """Fluent builder mirroring the dbt config; ``build()`` validates every rule."""

    def __init__(
        self,
        table_id: MutableTableId,
        schema: SchemaInput,
        model_name: Optional[str] = None,
    ) -> None:
        self._table_id = table_id
        self._schema = list(schema.items()) if isinstance(schema, Mapping) else list(schema)
        self.subject = f"mutable_table '{model_name or table_id.name}'"
        self._options: dict[str, Any] = {}
        self._primary_key: Optional[list[str]] = None
        self._indexes: list[tuple[Any, Any, Any]] = []

    def primary_key(self, columns: Sequence[str]) -> MutableTableDefinitionBuilder:
        self._primary_key = column_list(columns, "primary_key", self.subject, allow_empty=True)
        return self

    def index(self, name: Any, columns: Any, unique: Any = False) -> MutableTableDefinitionBuilder:
        self._indexes.append((name, columns, unique))
        return self

    def _set(self, option: str, value: Any) -> MutableTableDefinitionBuilder:
        self._options[option] = value
        return self

    def version_column(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("version_column", column)

    def partial_updates(self, enabled: bool = True) -> MutableTableDefinitionBuilder:
        return self._set("partial_updates", enabled)

    def delete_when(self, predicate: str) -> MutableTableDefinitionBuilder:
        return self._set("delete_when", predicate)

    def hard_deletes(self, mode: str) -> MutableTableDefinitionBuilder:
        return self._set("hard_deletes", mode)

    def history(self, mode: str) -> MutableTableDefinitionBuilder:
        return self._set("history", mode)

    def valid_from(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("valid_from", column)

    def valid_to(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("valid_to", column)

    def track_columns(self, columns: Sequence[str]) -> MutableTableDefinitionBuilder:
        return self._set("track_columns", columns)

    def ordering_column(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("ordering_column", column)

    def tenant_from(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("tenant_from", column)

    def on_schema_change(self, mode: str) -> MutableTableDefinitionBuilder:
        return self._set("on_schema_change", mode)

    def file_format(self, file_format: str) -> MutableTableDefinitionBuilder:
        return self._set("file_format", file_format)

    def merge_functions(self, functions: Mapping[str, str]) -> MutableTableDefinitionBuilder:
        return self._set("merge_functions", functions)

    def ttl_ms(self, ttl_ms: int) -> MutableTableDefinitionBuilder:
        return self._set("ttl_ms", ttl_ms)

    def ttl_column(self, column: str) -> MutableTableDefinitionBuilder:
        return self._set("ttl_column", column)

    def changelog(self, enabled: bool = True) -> MutableTableDefinitionBuilder:
        return self._set("changelog", enabled)

    def build(self) -> MutableTableDefinition:
        subject = self.subject
        opts = self._options
        columns = self._columns()
        names = [c.name for c in columns]
        types = {c.name: c.type for c in columns}

        history = require_choice(opts.get("history", "none"), "history", HISTORY_MODES, subject)
        valid_from = self._single_column("valid_from", opts.get("valid_from", "valid_from"))
        valid_to = self._single_column("valid_to", opts.get("valid_to", "valid_to"))
        if history == "scd2":
            if valid_from == valid_to:
                raise JammiValidationError(
                    subject,
                    f"valid_from and valid_to are both '{valid_from}'",
                    "give the interval bounds two different column names",
                )
            if valid_to in names:
                raise JammiValidationError(
                    subject,
                    f"column '{valid_to}' (valid_to) is in the model's output; the engine "
                    "maintains it",
                    f"remove '{valid_to}' from the select list",
                )
            if valid_from in names and types[valid_from] not in INTEGER_TYPES:
                raise JammiValidationError(
                    subject,
                    f"valid_from column '{valid_from}' has type {types[valid_from]}",
                    f"output it as bigint epoch milliseconds: "
                    f"{{{{ to_epoch_millis('...') }}}} as {valid_from}",
                )

        if self._primary_key is None:
            raise JammiValidationError(
                subject,
                "no primary key is defined",
                "call .primary_key(['id']) or set config(primary_key=['id'])",
            )
        if not self._primary_key:
            raise JammiValidationError(
                subject,
                "the primary key is empty",
                "name at least one column in primary_key, e.g. primary_key=['id']",
            )
        require_columns(self._primary_key, names, "primary_key", subject)
        if history == "scd2" and valid_from in self._primary_key:
            raise JammiValidationError(
                subject,
                f"primary_key includes '{valid_from}'; with history: scd2 the engine keys "
                f"rows by (primary key, {valid_from})",
                f"remove '{valid_from}' from primary_key",
            )

        version_column = opts.get("version_column")
        if version_column is not None:
            version_column = self._single_column("version_column", version_column)
            require_columns([version_column], names, "version_column", subject)
            if types[version_column] not in INTEGER_TYPES:
                raise JammiValidationError(
                    subject,
                    f"version_column '{version_column}' has type {types[version_column]}",
                    "use an integer column (e.g. bigint epoch milliseconds or a counter)",
                )
            if version_column in self._primary_key:
                raise JammiValidationError(
                    subject,
                    f"version_column '{version_column}' is part of the primary key",
                    "choose a version column outside the primary key",
                )

        ordering_column = opts.get("ordering_column")
        if ordering_column is not None:
            ordering_column = self._single_column("ordering_column", ordering_column)
            if ordering_column not in (*names, valid_from if history == "scd2" else None):
                require_columns([ordering_column], names, "ordering_column", subject)

        tenant_from = opts.get("tenant_from")
        if tenant_from is not None:
            tenant_from = self._single_column("tenant_from", tenant_from)
            require_columns([tenant_from], names, "tenant_from", subject)
            if types[tenant_from] != "string":
                raise JammiValidationError(
                    subject,
                    f"tenant_from column '{tenant_from}' has type {types[tenant_from]}",
                    f"cast it: cast(... as string) as {tenant_from}",
                )
            if tenant_from in self._primary_key:
                raise JammiValidationError(
                    subject,
                    f"tenant_from column '{tenant_from}' is part of the primary key; the "
                    "tenant is already part of the effective key",
                    f"remove '{tenant_from}' from primary_key",
                )

        track_columns: list[str] = []
        if "track_columns" in opts:
            if history != "scd2":
                raise JammiValidationError(
                    subject,
                    "'track_columns' is set but history is not scd2",
                    "remove track_columns or set history: scd2",
                )
            track_columns = column_list(opts["track_columns"], "track_columns", subject)
            require_columns(track_columns, names, "track_columns", subject)
            bad = [c for c in track_columns if c in self._primary_key or c == valid_from]
            if bad:
                raise JammiValidationError(
                    subject,
                    f"track_columns includes key column '{bad[0]}'",
                    "list only non-key columns in track_columns",
                )
        elif history == "scd2":
            track_columns = [
                c for c in names if c not in self._primary_key and c not in (valid_from,)
            ]

        delete_when = opts.get("delete_when")
        if delete_when is not None:
            delete_when = validate_predicate(delete_when, subject, "delete_when")

        ttl_ms, ttl_column = validate_ttl(
            opts.get("ttl_ms"), opts.get("ttl_column"), subject, types, history
        )
        merge_functions = validate_merge_functions(
            opts.get("merge_functions"),
            subject,
            types,
            self._primary_key,
            version_column,
            tenant_from,
            history,
        )

        definition = MutableTableDefinition(
            table_id=self._table_id,
            columns=tuple(columns),
            primary_key=tuple(self._primary_key),
            # scd2: an index may name the interval bounds, e.g. (item_id, valid_to)
            indexes=self._build_indexes(
                names + [c for c in (valid_from, valid_to) if history == "scd2" and c not in names]
            ),
            ordering_column=ordering_column,
            version_column=version_column,
            partial_updates=require_bool(
                opts.get("partial_updates", False), "partial_updates", subject
            ),
            delete_when=delete_when,
            hard_deletes=require_choice(
                opts.get("hard_deletes", "ignore"), "hard_deletes", HARD_DELETES, subject
            ),
            history=history,
            valid_from=valid_from,
            valid_to=valid_to,
            track_columns=tuple(track_columns),
            tenant_from=tenant_from,
            on_schema_change=require_choice(
                opts.get("on_schema_change", "fail"), "on_schema_change", ON_SCHEMA_CHANGE, subject
            ),
            file_format=require_choice(
                opts.get("file_format", "auto"), "file_format", FILE_FORMATS, subject
            ),
            merge_functions=merge_functions,
            ttl_ms=ttl_ms,
            ttl_column=ttl_column,
        )
        if validate_changelog(
            opts.get("changelog"), subject, definition.column_names, definition.value_columns
        ):
            definition = replace(definition, changelog=True)
        return definition

    def _columns(self) -> list[ColumnDef]:
        if not self._schema:
            raise JammiValidationError(
                self.subject, "the model outputs no columns", "select at least one column"
            )
        columns = []
        seen: set[str] = set()
        for entry in self._schema:
            if not isinstance(entry, (tuple, list)) or len(entry) != 2:
                raise JammiValidationError(
                    self.subject,
                    f"schema entry {entry!r} is not a (name, type) pair",
                    "pass the schema as {'id': 'bigint', ...} or [('id', 'bigint'), ...]",
                )
            name, spark_type = entry
            validate_column_name(name, self.subject)
            if name.lower() in seen:
                raise JammiValidationError(
                    self.subject,
                    f"column '{name}' appears more than once in the output",
                    "alias one of the duplicates",
                )
            seen.add(name.lower())
            columns.append(ColumnDef(name, validate_column_type(name, spark_type, self.subject)))
        return columns

    def _single_column(self, option: str, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise JammiValidationError(
                self.subject,
                f"'{option}' must be one column name, got {value!r}",
                f"set {option} to a column name such as 'updated_at'",
            )
        return value

    def _build_indexes(self, names: list[str]) -> tuple[MutableIndexDef, ...]:
        indexes = []
        seen: set[str] = set()
        for raw_name, raw_columns, raw_unique in self._indexes:
            if not isinstance(raw_name, str):
                raise JammiValidationError(
                    self.subject,
                    f"an index has no name (got {raw_name!r})",
                    "give every index a name, e.g. {name: by_sku, columns: [sku]}",
                )
            label = f"index '{raw_name}'"
            try:
                validate_table_id(raw_name, self.subject)
            except JammiValidationError as exc:
                raise JammiValidationError(
                    self.subject, f"{label}: {exc.problem}", exc.fix
                ) from None
            if raw_name in seen:
                raise JammiValidationError(
                    self.subject,
                    f"{label} is defined more than once",
                    "give every index a unique name",
                )
            seen.add(raw_name)
            columns = column_list(raw_columns, f"{label} columns", self.subject)
            require_columns(columns, names, label, self.subject)
            unique = require_bool(raw_unique, f"{label} unique", self.subject)
            indexes.append(MutableIndexDef(raw_name, tuple(columns), unique))
        return tuple(indexes)


def new_topic_id(now_ms: Optional[int] = None) -> str:
    """A time-ordered UUID (version 7 layout) rendered lowercase with '_' for '-'."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= ((rand >> 62) & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value)).replace("-", "_")


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
        builder = MutableTableDefinitionBuilder(
            MutableTableId("topic"), schema, model_name=model_name
        )
        builder.subject = subject
        columns = builder._columns()
        retention_offsets = config.get("retention_offsets")
        if retention_offsets is not None:
            require_positive_int(retention_offsets, "retention_offsets", subject)
        retention_ms = config.get("retention_ms")
        if retention_ms is not None:
            require_positive_int(retention_ms, "retention_ms", subject)
        validate_registry_schema(config.get("registry_schema"), subject)
        return cls(
            name=name,
            columns=tuple(columns),
            retention_offsets=retention_offsets,
            retention_ms=retention_ms,
        )


def default_topic_name(model_name: str) -> str:
    """``cdc_orders`` -> ``cdc.orders``: the first '_' becomes the namespace dot."""
    name = model_name.lower()
    if "." in name or "_" not in name:
        return name
    head, tail = name.split("_", 1)
    return f"{head}.{tail}"
