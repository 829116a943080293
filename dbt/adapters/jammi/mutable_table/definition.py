"""The definition of a mutable table, built and validated in Python (a topic's is in
topic/definition.py).

A definition is what a model's config plus its output schema mean; it is recorded on
the storage table and in the registry, and it is the only input the Jinja
materializations take decisions from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, Optional, Union

from dbt.adapters.jammi.common.columns import ColumnDef, SchemaInput, output_columns, single_column
from dbt.adapters.jammi.common.config_keys import MUTABLE_TABLE, config_keys
from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.predicates import validate_predicate
from dbt.adapters.jammi.common.types import TYPE_SET_SPARK
from dbt.adapters.jammi.common.validation import (
    column_list,
    require_choice,
    require_columns,
    validate_table_id,
    validate_type_set,
)
from dbt.adapters.jammi.mutable_table.column_types import (
    VersionColumn,
    refuse_nested,
    validate_tenant_from,
    validate_version_column,
    version_columns,
)
from dbt.adapters.jammi.mutable_table.indexes import MutableIndexDef, build_indexes, config_indexes
from dbt.adapters.jammi.mutable_table.rule_columns import without_rule_columns
from dbt.adapters.jammi.mutable_table.rules.changelog import validate_changelog_rebuild
from dbt.adapters.jammi.mutable_table.rules.identity import IDENTITY_TYPE, numbered_columns
from dbt.adapters.jammi.mutable_table.rules.registry import ROW_RULES, RULE_OPTIONS
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN
from dbt.adapters.jammi.mutable_table.scd2 import validate_history, validate_track_columns

FILE_FORMATS = ("auto", "delta", "parquet", "orc", "iceberg")
# Named by users but refused: no lane here has run its MERGE path (docs/mutable_table.md).
REFUSED_FILE_FORMATS = ("hudi",)
HARD_DELETES = ("ignore", "delete")
ON_SCHEMA_CHANGE = ("fail", "append_new_columns", "sync_all_columns")

# Definition keys recorded only when set (see MutableTableDefinition.to_dict): the row
# rules' options, added after tables were first recorded.
OPTIONAL_KEYS = (*RULE_OPTIONS, "rule_columns")


@dataclass(frozen=True)
class MutableTableId:
    name: str

    def __post_init__(self) -> None:
        validate_table_id(self.name, f"mutable_table '{self.name}'")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class MutableTableDefinition:
    table_id: MutableTableId
    columns: tuple[ColumnDef, ...]
    primary_key: tuple[str, ...]
    indexes: tuple[MutableIndexDef, ...] = ()
    ordering_column: Optional[str] = None
    version_column: Optional[VersionColumn] = None
    # True: NULL keeps the stored value in every value column; a tuple: in those only
    partial_updates: Union[bool, tuple[str, ...]] = False
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
    identity_column: Optional[str] = None
    tombstone_retention: Optional[int] = None
    truncate_when: Optional[str] = None
    # {version: columns}: each group ordered by its own version (rules/version_groups.py)
    version_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # columns the rules read that are not stored (rule_columns.py)
    rule_columns: tuple[str, ...] = ()
    type_set: str = TYPE_SET_SPARK

    @property
    def version_columns(self) -> tuple[str, ...]:
        """The version rule's columns in comparison order (empty without a rule)."""
        return version_columns(self.version_column)

    @property
    def interval_type(self) -> str:
        """scd2: the type of valid_from / valid_to, the effective time's (a timestamp
        history has timestamp intervals), else bigint epoch milliseconds."""
        return next((c.type for c in self.columns if c.name == self.valid_from), "bigint")

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
            columns.append(ColumnDef(self.valid_to, self.interval_type))
        elif self.ttl_ms and not self.ttl_column:
            columns.append(ColumnDef(WRITTEN_AT_COLUMN, "bigint"))
        if self.identity_column and self.identity_column not in {c.name for c in columns}:
            columns.append(ColumnDef(self.identity_column, IDENTITY_TYPE))
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
        data["rule_columns"] = list(self.rule_columns)
        data["storage_key"] = self.storage_key
        data["value_columns"] = self.value_columns
        data["storage_columns"] = [[c.name, c.type] for c in self.storage_columns]
        data["merge_functions"] = dict(self.merge_functions)
        data["version_groups"] = {v: list(cols) for v, cols in self.version_groups}
        if isinstance(self.version_column, tuple):
            data["version_column"] = list(self.version_column)
        # Spark's own types are the default: a table recorded before type_set existed
        # keeps its recorded definition
        if self.type_set == TYPE_SET_SPARK:
            del data["type_set"]
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
        """Build from a dbt model's config (the names in docs/mutable_table.md)."""
        builder = MutableTableDefinitionBuilder(
            MutableTableId(table_id or model_name), schema, model_name=model_name
        )
        # the definition's keys, from the one table of config keys (common/config_keys.py);
        # a row rule's options go through builder.option (rules/registry.py), indexes below
        known: dict[str, Callable[[Any], Any]] = {
            option: (
                partial(builder.option, option)
                if option in RULE_OPTIONS
                else getattr(builder, option)
            )
            for option in config_keys(MUTABLE_TABLE, "definition")
            if option != "indexes"
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
        for name, columns, unique in config_indexes(config.get("indexes"), builder.subject):
            builder.index(name, columns, unique)
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

    def option(self, option: str, value: Any) -> MutableTableDefinitionBuilder:
        """Set a row rule's option (one of rules/registry.py's ``RULE_OPTIONS``), e.g.
        ``.option("ttl_ms", 86400000)`` or ``.option("identity_column", "order_no")``."""
        if option not in RULE_OPTIONS:
            raise ValueError(f"{option!r} is not a row rule's option: {RULE_OPTIONS}")
        return self._set(option, value)

    def version_column(self, column: Union[str, Sequence[str]]) -> MutableTableDefinitionBuilder:
        return self._set("version_column", column)

    def type_set(self, type_set: str) -> MutableTableDefinitionBuilder:
        return self._set("type_set", type_set)

    def partial_updates(
        self, enabled: Union[bool, Sequence[str]] = True
    ) -> MutableTableDefinitionBuilder:
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

    def changelog(self, enabled: bool = True) -> MutableTableDefinitionBuilder:
        return self._set("changelog", enabled)

    def rule_columns(self, columns: Sequence[str]) -> MutableTableDefinitionBuilder:
        return self._set("rule_columns", columns)

    def build(self) -> MutableTableDefinition:
        subject = self.subject
        opts = self._options
        type_set = validate_type_set(opts.get("type_set"), subject)
        columns = output_columns(self._schema, subject, type_set)
        names = [c.name for c in columns]
        types = {c.name: c.type for c in columns}

        history, valid_from, valid_to = validate_history(opts, names, types, subject)

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
        refuse_nested(self._primary_key, types, "primary_key", subject)
        if history == "scd2" and valid_from in self._primary_key:
            raise JammiValidationError(
                subject,
                f"primary_key includes '{valid_from}'; with history: scd2 the engine keys "
                f"rows by (primary key, {valid_from})",
                f"remove '{valid_from}' from primary_key",
            )

        version_column = validate_version_column(
            opts.get("version_column"), names, types, self._primary_key, type_set, subject
        )

        ordering_column = opts.get("ordering_column")
        if ordering_column is not None:
            ordering_column = self._single_column("ordering_column", ordering_column)
            if ordering_column not in (*names, valid_from if history == "scd2" else None):
                require_columns([ordering_column], names, "ordering_column", subject)
            refuse_nested([ordering_column], types, "ordering_column", subject)

        tenant_from = validate_tenant_from(
            opts.get("tenant_from"), names, types, self._primary_key, subject
        )

        track_columns = validate_track_columns(
            opts, names, self._primary_key, history, valid_from, subject
        )

        delete_when = opts.get("delete_when")
        if delete_when is not None:
            delete_when = validate_predicate(delete_when, subject, "delete_when")

        # the row rules (rules/registry.py) validate their options against the key fields
        draft = MutableTableDefinition(
            type_set=type_set,
            table_id=self._table_id,
            columns=tuple(columns),
            primary_key=tuple(self._primary_key),
            version_column=version_column,
            history=history,
            valid_from=valid_from,
            valid_to=valid_to,
            tenant_from=tenant_from,
        )
        rule_fields: dict[str, Any] = {}
        for rule in ROW_RULES:
            rule_fields.update(rule.definition_fields(opts, draft, subject))
        columns = numbered_columns(columns, rule_fields.get("identity_column"))

        definition = MutableTableDefinition(
            table_id=self._table_id,
            columns=tuple(columns),
            primary_key=tuple(self._primary_key),
            # scd2: an index may name the interval bounds, e.g. (item_id, valid_to)
            indexes=build_indexes(
                self._indexes,
                names + [c for c in (valid_from, valid_to) if history == "scd2" and c not in names],
                subject,
            ),
            ordering_column=ordering_column,
            version_column=version_column,
            partial_updates=validate_partial_updates(
                opts.get("partial_updates", False), names, self._primary_key, subject
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
            file_format=validate_file_format(opts.get("file_format", "auto"), subject),
            type_set=type_set,
            **rule_fields,
        )
        for index in definition.indexes:
            refuse_nested(index.columns, types, f"index '{index.name}'", subject)
        return without_rule_columns(definition, opts.get("rule_columns"), names, subject)

    def _single_column(self, option: str, value: Any) -> str:
        return single_column(option, value, self.subject)


def validate_partial_updates(
    value: Any, names: Sequence[str], primary_key: Sequence[str], subject: str
) -> Union[bool, tuple[str, ...]]:
    """``partial_updates``: true or false, or the value columns in which a NULL keeps the
    stored value (the others take the batch's value, NULL included)."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, (list, tuple)):
        raise JammiValidationError(
            subject,
            f"'partial_updates' must be true, false or a list of value columns, got {value!r}",
            "write partial_updates: true (every value column) or partial_updates: ['email']",
        )
    listed = column_list(value, "partial_updates", subject)
    require_columns(listed, names, "partial_updates", subject)
    keys = [c for c in listed if c in primary_key]
    if keys:
        raise JammiValidationError(
            subject,
            f"partial_updates names key column(s) {', '.join(keys)}; a key is never NULL "
            "and is never updated",
            "list value columns only in partial_updates",
        )
    return tuple(listed)


def keeps_stored_on_null(partial_updates: Any, column: str) -> bool:
    """Whether a NULL in ``column`` keeps its stored value under ``partial_updates`` (a
    definition's value, or its recorded JSON: true, false or a list of columns)."""
    if isinstance(partial_updates, bool):
        return partial_updates
    return column in (partial_updates or ())


def validate_file_format(value: Any, subject: str) -> str:
    """The model's ``file_format``: one of FILE_FORMATS; Hudi is refused by name."""
    if value in REFUSED_FILE_FORMATS:
        raise JammiValidationError(
            subject,
            f"file_format {value!r} is not supported: no test here proves a mutable_table "
            "on it (its MERGE, versions and commit checks)",
            "set file_format to 'delta', 'iceberg', 'parquet' or 'orc' (or 'auto')",
        )
    return require_choice(value, "file_format", FILE_FORMATS, subject)
