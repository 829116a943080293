"""Rules every definition must pass before any SQL runs (docs/mutable_table.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import (
    CLOSED_TYPES,
    TYPE_SET_JAMMI,
    TYPE_SET_SPARK,
    TYPE_SETS,
    map_spark_type,
)

TENANT_COLUMN = "tenant_id"

_TABLE_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_COLUMN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_SCHEMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOPIC_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")
_MAX_IDENTIFIER = 128


def validate_table_id(name: Any, subject: str) -> str:
    if not isinstance(name, str) or not name:
        raise JammiValidationError(
            subject, f"table id {name!r} is not a name", "use a lowercase name such as 'orders'"
        )
    if name.startswith("__"):
        raise JammiValidationError(
            subject,
            f"table id '{name}' uses the '__' prefix, which is reserved for engine tables "
            "(topic backing tables)",
            f"rename it without the leading underscores, e.g. '{name.lstrip('_') or 't'}'",
        )
    if len(name) > _MAX_IDENTIFIER or not _TABLE_ID.match(name):
        suggestion = re.sub(r"[^a-z0-9_]", "_", name.lower()).lstrip("_0123456789") or "t"
        raise JammiValidationError(
            subject,
            f"table id '{name}' is not allowed: table ids are lowercase letters, digits and "
            "'_', starting with a letter",
            f"rename it, e.g. '{suggestion}'",
        )
    return name


def validate_topic_name(name: Any, subject: str) -> str:
    if not isinstance(name, str) or len(name) > _MAX_IDENTIFIER or not _TOPIC_NAME.match(name):
        raise JammiValidationError(
            subject,
            f"topic_name {name!r} is not allowed: topic names are dotted lowercase names "
            "(letters, digits, '_'; each part starts with a letter)",
            "set topic_name like 'cdc.orders'",
        )
    return name


def validate_registry_schema(value: Any, subject: str) -> Optional[str]:
    """Config ``registry_schema``: where a registry table lives. It is spliced into SQL as
    a schema name, so it must be a plain identifier; unset (None or '') means the
    model's schema."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _MAX_IDENTIFIER or not _SCHEMA.match(value):
        raise JammiValidationError(
            subject,
            f"registry_schema {value!r} is not a schema name: schema names are letters, "
            "digits and '_' (not starting with a digit), without dots, quotes, spaces or "
            "comments",
            "set registry_schema to a plain schema name such as 'analytics', or remove it "
            "to keep the registry in the model's schema",
        )
    return value


def validate_column_name(name: Any, subject: str) -> str:
    if not isinstance(name, str) or not name:
        raise JammiValidationError(
            subject, f"column name {name!r} is not a name", "alias the column with a plain name"
        )
    if name.lower() == TENANT_COLUMN:
        raise JammiValidationError(
            subject,
            f"column '{name}' is reserved: the engine adds and maintains '{TENANT_COLUMN}'",
            "drop it from the model's select list; bind the tenant with the profile field "
            "'tenant' or the var 'jammi_tenant', or name the column for 'tenant_from'",
        )
    if name.startswith("_"):
        raise JammiValidationError(
            subject,
            f"column '{name}' is reserved: names starting with '_' belong to the engine",
            f"alias it without the leading underscore, e.g. as {name.lstrip('_') or 'col'}",
        )
    if len(name) > _MAX_IDENTIFIER or not _COLUMN.match(name):
        raise JammiValidationError(
            subject,
            f"column '{name}' is not a plain identifier (letters, digits and '_', "
            "starting with a letter)",
            "alias it with a plain name",
        )
    return name


def validate_column_type(
    name: str, spark_type: str, subject: str, type_set: str = TYPE_SET_SPARK
) -> str:
    """The type column ``name`` is stored as under ``type_set``, or a refusal naming the
    fix (the encoding to use)."""
    mapping = map_spark_type(spark_type, name, type_set)
    if mapping.closed_type is None:
        if type_set == TYPE_SET_JAMMI:
            problem = (
                f"column '{name}' has type {spark_type}, outside the closed type set "
                f"({', '.join(CLOSED_TYPES)}) of type_set: jammi"
            )
        else:
            problem = f"column '{name}' has type {spark_type}, which a table cannot store"
        raise JammiValidationError(
            subject, problem, mapping.encoding_hint or "cast it to a closed type"
        )
    return mapping.closed_type


def validate_type_set(value: Any, subject: str) -> str:
    """Config ``type_set``: ``spark`` (Spark's own types, the default) or ``jammi`` (the
    closed set readable by Jammi's own engine)."""
    if value is None:
        return TYPE_SET_SPARK
    return str(require_choice(value, "type_set", TYPE_SETS, subject))


def column_list(value: Any, option: str, subject: str, allow_empty: bool = False) -> list[str]:
    """A config that names columns: a list of names (a single name is accepted)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(c, str) for c in value):
        raise JammiValidationError(
            subject,
            f"'{option}' must be a list of column names, got {value!r}",
            f"write {option}: ['id'] (or a list of several columns)",
        )
    if not value and not allow_empty:
        raise JammiValidationError(
            subject, f"'{option}' is empty", f"name at least one column in {option}"
        )
    duplicates = sorted({c for c in value if list(value).count(c) > 1})
    if duplicates:
        raise JammiValidationError(
            subject,
            f"'{option}' names {', '.join(duplicates)} more than once",
            f"list each column once in {option}",
        )
    return list(value)


def require_columns(
    names: Iterable[str], available: Sequence[str], option: str, subject: str
) -> None:
    for name in names:
        if name not in available:
            raise JammiValidationError(
                subject,
                f"{option} column '{name}' is not in the model's output "
                f"(columns: {', '.join(available)})",
                f"add '{name}' to the model's select list or fix {option}",
            )


def require_choice(value: Any, option: str, choices: Sequence[Any], subject: str) -> Any:
    if value not in choices:
        raise JammiValidationError(
            subject,
            f"'{option}' is {value!r}",
            f"set {option} to one of: {', '.join(repr(c) for c in choices)}",
        )
    return value


def require_bool(value: Any, option: str, subject: str) -> bool:
    if not isinstance(value, bool):
        raise JammiValidationError(
            subject, f"'{option}' must be true or false, got {value!r}", f"set {option}: true"
        )
    return value


def require_positive_int(value: Any, option: str, subject: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise JammiValidationError(
            subject,
            f"'{option}' must be a positive whole number, got {value!r}",
            f"set {option} to a number such as 1000",
        )
    return value


def validate_tenant_value(value: Any, subject: str) -> str:
    """Tenant values are data: any printable text is stored literally (rendered only
    through ``sql_string_literal``); control characters and over-long values are refused."""
    if not isinstance(value, str) or not value.strip():
        raise JammiValidationError(
            subject,
            f"tenant {value!r} is not a non-empty string; an empty or blank tenant does not "
            "mean 'unbound'",
            "set the profile field 'tenant' or --vars '{jammi_tenant: acme}' to a tenant name, "
            "or leave both unset for an unbound run",
        )
    if len(value) > 256 or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise JammiValidationError(
            subject,
            "tenant value is longer than 256 characters or contains control characters",
            "use a short printable tenant identifier such as 'acme'",
        )
    return value


def sql_string_literal(value: str) -> str:
    """Render text as a Spark SQL string literal that cannot end early."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
