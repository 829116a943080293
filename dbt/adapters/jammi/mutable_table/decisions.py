"""Run-time decisions of the mutable_table materialization, made in Python.

The Jinja materialization asks this module what to do (which definition is in force
after a schema change, whether a full refresh may rebuild, where the next version is
written, what an error says) and only emits the SQL.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.types import INTEGER_TYPES, decimal_parts, normalize_type
from dbt.adapters.jammi.common.validation import TENANT_COLUMN
from dbt.adapters.jammi.mutable_table.rules.identity import identity_storage_column
from dbt.adapters.jammi.mutable_table.rules.ttl import WRITTEN_AT_COLUMN, written_at_needed

# Table properties written on every storage table. Neither the keys nor the values may
# match spark.redaction.regex (default "(?i)secret|password|token|access[.]?key"): Spark
# shows a property whose key OR value matches as "*********(redacted)" in SHOW
# TBLPROPERTIES. The definition JSON names the model's columns (a column `api_secret`
# would match), so it is stored hex-encoded: hex digits cannot spell any of those words.
PROP_DEFINITION = "jammi.definition"
DEFINITION_ENCODING = "hex:"
PROP_VERSION = "jammi.version"
PROP_KIND = "jammi.kind"

# Keys the materialization adds to a definition for one run only (not recorded).
RUN_ONLY_KEYS = (
    "batch_columns",
    "now_ms",
    "changelog_topic",
    "checks_in_plan",
    "versions_kept",
    "expire_snapshots",
    "tblproperties",
    "tombstones_from",
    "tombstone_now_ms",
    "identity_from",
    "identity_guard",
)

# Names of the phases where a test can inject a failure (var 'jammi_fail_at').
FAILURE_PHASES = ("write", "before_commit", "zorder", "register", "concurrent_commit", "changelog")

_VERSION_DIR = re.compile(r"^v(\d{10})_[a-z0-9]+$")
_FLOAT_TYPES = frozenset({"float", "double"})
SAMPLE_LIMIT = 5


class MutableRunError(DbtRuntimeError):
    """A batch cannot be applied; the message names the model, the problem and samples."""


@dataclass(frozen=True)
class SchemaReconciliation:
    """How the model's output relates to the stored table."""

    definition: dict[str, Any]
    new_columns: list[list[str]]
    missing_columns: list[str]


# What a stored column takes from a model whose output type changed (the batch is cast
# to the stored type): said in the error that refuses anything else.
ALLOWED_TYPE_CHANGES = (
    "whole numbers into any whole-number type, whole numbers and floats into float or "
    "double, a decimal of lower or equal precision at the same scale into a decimal, a "
    "date into a timestamp; nested types must stay the same"
)


def _compatible(stored: str, batch: str) -> bool:
    stored, batch = normalize_type(stored), normalize_type(batch)
    if stored == batch:
        return True
    if stored in INTEGER_TYPES and batch in INTEGER_TYPES:
        return True
    if stored in _FLOAT_TYPES and (batch in _FLOAT_TYPES or batch in INTEGER_TYPES):
        return True
    if stored in ("timestamp", "timestamp_ntz") and batch == "date":
        return True
    stored_decimal, batch_decimal = decimal_parts(stored), decimal_parts(batch)
    return (
        stored_decimal is not None
        and batch_decimal is not None
        and batch_decimal[1] == stored_decimal[1]
        and batch_decimal[0] <= stored_decimal[0]
    )


def reconcile_schema(
    model_name: str,
    batch_definition: Mapping[str, Any],
    stored_columns: Sequence[Sequence[str]],
) -> SchemaReconciliation:
    """Compare the batch's definition with the stored table's user columns.

    ``stored_columns`` are (name, type) pairs of the table without ``tenant_id``. The
    returned definition keeps the stored column order (new columns appended) and the
    batch's options. Raises before anything is changed when the difference is not
    allowed by ``on_schema_change`` / ``partial_updates``.
    """
    subject = f"mutable_table '{model_name}'"
    stored = [(str(n), normalize_type(str(t))) for n, t in stored_columns if n != TENANT_COLUMN]
    stored_types = dict(stored)
    batch_columns = [(str(n), str(t)) for n, t in batch_definition["columns"]]
    batch_types = dict(batch_columns)
    history = batch_definition.get("history", "none")
    engine_columns = (
        {batch_definition["valid_from"], batch_definition["valid_to"]}
        if history == "scd2"
        else set()
    )
    keeps_written_at = WRITTEN_AT_COLUMN in stored_types
    if written_at_needed(batch_definition) and not keeps_written_at:
        raise JammiValidationError(
            subject,
            f"ttl_ms without ttl_column ages rows by the engine column "
            f"'{WRITTEN_AT_COLUMN}' (when each key was last written), which this table was "
            "created without; its stored rows have no write time",
            "set ttl_column to a bigint epoch-millisecond column of the model, or rebuild "
            "the table with --full-refresh (needs config full_refresh: true)",
        )
    if keeps_written_at:
        engine_columns.add(WRITTEN_AT_COLUMN)
    identity = identity_storage_column(batch_definition)  # not output: the engine's
    if identity and identity[0] in stored_types:
        engine_columns.add(identity[0])

    for name, stored_type in stored:
        batch_type = batch_types.get(name)
        if batch_type is not None and not _compatible(stored_type, batch_type):
            raise JammiValidationError(
                subject,
                f"column '{name}' is stored as {stored_type} but the model now outputs "
                f"{batch_type}",
                f"cast it back: cast({name} as {stored_type}) as {name}, or rebuild the "
                "table with --full-refresh (needs config full_refresh: true). A stored "
                f"column takes {ALLOWED_TYPE_CHANGES}",
            )

    key = set(batch_definition["storage_key"]) - engine_columns
    missing_key = sorted(k for k in key if k not in stored_types)
    if missing_key:
        raise JammiValidationError(
            subject,
            f"primary_key column(s) {', '.join(missing_key)} are not in the stored table",
            "the primary key cannot change on an existing table; rebuild it with "
            "--full-refresh (needs config full_refresh: true)",
        )

    new_columns = [[n, t] for n, t in batch_columns if n not in stored_types]
    missing = [n for n, _ in stored if n not in batch_types and n not in engine_columns]

    if new_columns and batch_definition.get("on_schema_change", "fail") != "append_new_columns":
        names = ", ".join(n for n, _ in new_columns)
        raise JammiValidationError(
            subject,
            f"the model outputs new column(s) {names} that the stored table does not have "
            "(on_schema_change: fail)",
            "set on_schema_change: append_new_columns, or remove the column(s)",
        )
    if missing and not batch_definition.get("partial_updates"):
        raise JammiValidationError(
            subject,
            f"stored column(s) {', '.join(missing)} are missing from the model's output; "
            "a full-row upsert would overwrite them with NULL",
            "select them again, or set partial_updates: true so that missing columns keep "
            "their stored values",
        )

    # valid_from is a user column when the model outputs it (the effective time), as in
    # the definition of the table's first run: the recorded definition stays the same
    # from run to run (else every run would record it again)
    outputs_valid_from = history == "scd2" and batch_definition["valid_from"] in batch_types
    columns = [
        [n, stored_types[n]]
        for n, _ in stored
        if n not in engine_columns or (outputs_valid_from and n == batch_definition["valid_from"])
    ]
    columns += [[n, t] for n, t in new_columns]
    definition = dict(batch_definition)
    definition["columns"] = columns
    value_key = set(batch_definition["storage_key"])
    definition["value_columns"] = [n for n, _ in columns if n not in value_key]
    storage = [list(c) for c in columns]
    if history == "scd2":
        stored_names = {n for n, _ in storage}
        vf, vt = batch_definition["valid_from"], batch_definition["valid_to"]
        if vf not in stored_names:
            storage.append([vf, stored_types.get(vf, "bigint")])
        storage.append([vt, stored_types.get(vt, "bigint")])
    elif keeps_written_at:
        storage.append([WRITTEN_AT_COLUMN, "bigint"])
    if identity and identity[0] in stored_types:
        storage.append(identity)
    definition["storage_columns"] = storage
    return SchemaReconciliation(definition, new_columns, missing)


def full_refresh_allowed(flag: Any, config_value: Any) -> bool:
    """A mutable table holds state no model can rebuild: ``--full-refresh`` only
    rebuilds it when the model opts in with ``full_refresh: true``."""
    return bool(flag) and config_value is True


def requested_file_format(unrendered_config: Mapping[str, Any], config_value: Any) -> str:
    """dbt-spark defaults ``file_format`` to parquet; for mutable tables an unset
    format means ``auto``."""
    if "file_format" in (unrendered_config or {}):
        return str(config_value or "auto")
    return "auto"


# Configs dbt itself gives a default the mutable_table materialization does not share
# (dbt: on_schema_change 'ignore'; dbt-spark: file_format 'parquet').
_DBT_DEFAULTED = ("on_schema_change", "file_format")


def definition_config(config: Mapping[str, Any], unrendered_config: Mapping[str, Any]) -> dict:
    """The model's config as the definition should see it: dbt's own defaults for
    ``on_schema_change`` / ``file_format`` are dropped unless the user set them."""
    result = dict(config)
    for option in _DBT_DEFAULTED:
        if option not in (unrendered_config or {}):
            result.pop(option, None)
    return result


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def parse_version(location: str) -> Optional[int]:
    """The commit version encoded in a version directory's name (``v0000000007_<run>``)."""
    match = _VERSION_DIR.match(location.rstrip("/").rsplit("/", 1)[-1])
    return int(match.group(1)) if match else None


def version_dir(base: str, version: int, run_id: str) -> str:
    return f"{base.rstrip('/')}/v{version:010d}_{run_id}"


def next_location(current_location: str, run_id: str) -> str:
    """Where the next version of a table whose data lives at ``current_location`` goes."""
    current = current_location.rstrip("/")
    version = parse_version(current)
    if version is None:
        raise MutableRunError(
            f"the table's location {current_location!r} is not a mutable_table version "
            "directory; was the table created by another materialization? Rebuild it with "
            "--full-refresh (needs config full_refresh: true)"
        )
    return version_dir(current.rsplit("/", 1)[0], version + 1, run_id)


def stale_version_dirs(
    children: Sequence[str], current_location: str, keep_newer: bool
) -> list[str]:
    """Version directories under the table's base that no commit points at.

    With ``keep_newer`` directories newer than the current version are kept: they may
    belong to a run in progress (only a run that has just committed removes them, since
    such a run makes every other in-flight run fail its commit check)."""
    current = current_location.rstrip("/")
    current_version = parse_version(current) or 0
    stale = []
    for child in children:
        path = child.rstrip("/")
        if path == current or path.rsplit("/", 1)[-1] == current.rsplit("/", 1)[-1]:
            continue
        version = parse_version(path)
        if version is None:
            continue
        if keep_newer and version > current_version:
            continue
        stale.append(path)
    return sorted(stale)


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


def _sample(rows: Sequence[Any], columns: Sequence[str]) -> str:
    lines = []
    for row in list(rows)[:SAMPLE_LIMIT]:
        values = list(row)
        pairs = ", ".join(f"{c}={v!r}" for c, v in zip(columns, values))
        lines.append(f"    ({pairs})")
    return "\n".join(lines)


def batch_error(
    model_name: str, kind: str, rows: Sequence[Any], columns: Sequence[str], detail: str = ""
) -> None:
    """Raise the run error for a rejected batch; ``rows`` are sample offending rows."""
    subject = f"mutable_table '{model_name}'"
    messages = {
        "null_key": (
            "the batch has rows with a NULL primary key column; nothing was written",
            "filter or fill the key columns in the model (where id is not null)",
        ),
        "null_version": (
            f"the batch has rows with a NULL version_column {detail}; nothing was written",
            "give every row a version, e.g. coalesce(updated_at, 0)",
        ),
        "duplicate_key": (
            "the batch has several rows for the same key and no version_column decides "
            "between them; nothing was written",
            "deduplicate in the model (row_number() over (partition by key ...)) or set "
            "version_column so the newest row wins",
        ),
        "duplicate_version": (
            f"the batch has several rows for the same key with the same highest "
            f"version_column {detail}; nothing was written",
            "make versions unique per key, or deduplicate in the model",
        ),
        "unique_index": (
            f"the new state would violate unique index {detail}; nothing was committed and "
            "the table is unchanged",
            "fix the duplicated values in the model's output or in the stored rows",
        ),
    }
    problem, fix = messages[kind]
    raise MutableRunError(
        f"{subject}: {problem}\n  Sample ({', '.join(columns)}):\n"
        f"{_sample(rows, columns)}\n  Fix: {fix}"
    )
