"""Adopting a table that another materialization built (``table``, ``incremental``) or
that was made outside dbt: what the run checks of the stored table before it becomes a
mutable table, and what it adds to it. Every stored row is kept, in place: the table
gains the ``tenant_id`` column (shared rows, NULL), its registry row and the ``jammi.*``
properties, and the run then applies its batch as on any mutable table. A parquet/orc
table's next version is written under its location (its current files stay there as
they are, never read again). docs/mutable_table.md, "Existing relations"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.common.validation import TENANT_COLUMN, quote_identifier
from dbt.adapters.jammi.mutable_table import hive_adoption

ADOPTED_FORMATS = ("parquet", "orc", "delta", "iceberg")
REWRITE_FORMATS = ("parquet", "orc")
REBUILD = "rebuild it from the model's output with --full-refresh (needs config full_refresh: true)"
SAMPLE_KEYS = 5


@dataclass(frozen=True)
class AdoptionPlan:
    """What the run adds to the stored table once the batch has passed its checks."""

    file_format: str
    add_tenant_column: bool
    # a Hive-format table: its rows are rewritten as file_format first (hive_adoption.py)
    from_hive: bool
    # the stored key the violations are grouped by (tenant_id first when stored)
    key: list[str]
    # stored keys that are NULL or held by several rows: at most SAMPLE_KEYS, with counts
    violations_sql: str


def describe_provider(rows: Sequence[Sequence[Any]]) -> str:
    """The ``Provider`` row of ``DESCRIBE TABLE EXTENDED`` (``hive`` when absent)."""
    for row in rows:
        if len(row) >= 2 and str(row[0]).strip().lower() == "provider":
            return str(row[1]).strip().lower()
    return "hive"


def describe_partitioned(rows: Sequence[Sequence[Any]]) -> bool:
    """Whether ``DESCRIBE TABLE EXTENDED`` lists partition columns."""
    return any(len(row) >= 1 and str(row[0]).strip() == "# Partition Information" for row in rows)


def plan_adoption(
    model_name: str,
    relation: str,
    batch_definition: Mapping[str, Any],
    stored_columns: Sequence[Sequence[str]],
    provider: str,
    partitioned: bool,
    requested_file_format: Optional[str],
    bound_tenant: Optional[str],
    auto_format: str = "parquet",
) -> AdoptionPlan:
    """Refuse, before anything is written, a table the run cannot adopt; else say what
    adoption adds. The model's columns against the stored ones are checked afterwards
    like any run's (schema_reconciliation.py). A Hive-format table (``provider``
    ``hive``) is rewritten as the model's format (``requested_file_format``, or
    ``auto_format``, what ``auto`` resolves to) before it is adopted."""
    subject = f"mutable_table '{model_name}'"
    intro = f"{relation} exists (built by another materialization or outside dbt) and"
    requested = str(requested_file_format or "auto").lower()
    from_hive = provider == hive_adoption.HIVE
    if from_hive:
        provider = auto_format if requested == "auto" else requested
        partitioned = False
    if provider not in ADOPTED_FORMATS:
        raise JammiValidationError(
            subject,
            f"{intro} is a '{provider}' table; a mutable_table adopts parquet, orc, delta, "
            "iceberg and Hive-format tables",
            f"drop or rename it, or {REBUILD}",
        )
    if requested not in ("auto", provider):
        raise JammiValidationError(
            subject,
            f"{intro} is stored as '{provider}', but the model asks for file_format "
            f"'{requested}'; adopting a table keeps its format",
            f"set file_format: {provider} (or auto), or {REBUILD}",
        )
    if provider in REWRITE_FORMATS and partitioned:
        raise JammiValidationError(
            subject,
            f"{intro} is a partitioned {provider} table; its partitions live in the "
            "metastore, which a mutable table's versions do not use",
            f"copy its rows into an unpartitioned table of that name first, or {REBUILD}",
        )
    if bound_tenant is not None:
        raise JammiValidationError(
            subject,
            f"{intro} this run is bound to tenant '{bound_tenant}'; the adopted rows "
            "become shared rows (tenant_id NULL), which only an unbound run may write",
            "run the model once without jammi_tenant to adopt the table",
        )
    for option, reason in (
        ("tenant_from", "its stored rows carry no tenant"),
        ("changelog", "a changelog starts with the table's first version"),
    ):
        if batch_definition.get(option):
            raise JammiValidationError(
                subject,
                f"{intro} the model sets {option}; {reason}",
                f"adopt the table without {option}, or {REBUILD}",
            )
    names = {str(n).lower(): str(n) for n, _ in stored_columns}
    for key in batch_definition["primary_key"]:
        if str(key).lower() not in names:
            raise JammiValidationError(
                subject,
                f"{intro} has no column '{key}' of the primary_key",
                "set primary_key to columns the table holds, or " + REBUILD,
            )
    output = {str(c[0]).lower() for c in batch_definition["columns"]}
    engine_columns = [
        str(c[0])
        for c in batch_definition["storage_columns"]
        if str(c[0]).lower() not in output and str(c[0]).lower() not in names
    ]
    if engine_columns:
        raise JammiValidationError(
            subject,
            f"{intro} lacks the column(s) {engine_columns} the model's options keep "
            "(history: scd2's valid_from/valid_to, an identity_column, ttl_ms's write "
            "time); the stored rows have no values for them",
            f"adopt the table without those options, or {REBUILD}",
        )
    tenant_type = next(
        (str(t).lower() for n, t in stored_columns if str(n).lower() == TENANT_COLUMN), None
    )
    if tenant_type not in (None, "string"):
        raise JammiValidationError(
            subject,
            f"{intro} has a column 'tenant_id' of type {tenant_type}; a mutable table "
            "keeps each row's tenant in a string tenant_id",
            f"rename that column, or {REBUILD}",
        )
    key = [names[str(k).lower()] for k in batch_definition["primary_key"]]
    if tenant_type is not None:
        key = [TENANT_COLUMN, *key]
    return AdoptionPlan(
        file_format=provider,
        add_tenant_column=tenant_type is None and not from_hive,
        from_hive=from_hive,
        key=key,
        violations_sql=key_violations_sql(relation, key, [TENANT_COLUMN] if tenant_type else []),
    )


def key_violations_sql(relation: str, key: Sequence[str], nullable: Sequence[str]) -> str:
    """Stored keys that are NULL or held by several rows, a few of them, with counts."""
    columns = ", ".join(quote_identifier(k) for k in key)
    nulls = " or ".join(f"{quote_identifier(k)} is null" for k in key if k not in nullable)
    return (
        f"select {columns}, count(*) as rows_held from {relation} group by {columns} "
        f"having count(*) > 1{' or ' + nulls if nulls else ''} limit {SAMPLE_KEYS}"
    )


def key_violations_error(
    model_name: str, relation: str, key: Sequence[str], rows: Sequence[Sequence[Any]]
) -> Optional[JammiValidationError]:
    """The error naming sample keys the stored table holds NULL or more than once."""
    if not rows:
        return None
    samples = []
    for row in rows:
        values = ", ".join(f"{k}={row[i]!r}" for i, k in enumerate(key))
        samples.append(f"({values}: {row[len(key)]} rows)")
    return JammiValidationError(
        f"mutable_table '{model_name}'",
        f"{relation} cannot be adopted: its stored rows have NULL or duplicate primary "
        f"keys, e.g. {'; '.join(samples)}; nothing was changed",
        "make the key unique and non-NULL in the stored table (delete or merge those "
        "rows), or set primary_key to columns that identify each stored row",
    )
