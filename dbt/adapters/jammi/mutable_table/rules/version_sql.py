"""The version rule and the run's scope as SQL, for the row rules that rewrite a batch
in Python (rules/truncates.py, rules/version_groups.py). The planner macros render the
same conditions (version_rule.sql, tenant.sql); these take a definition dict whose
``version_column`` holds the stored names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal


def version_parts(definition: Mapping[str, Any]) -> list[str]:
    """The version rule's columns in comparison order (empty without a rule)."""
    version = definition.get("version_column")
    return [version] if isinstance(version, str) else [str(v) for v in version or ()]


def version_sql(definition: Mapping[str, Any], prefix: str) -> str:
    """The version as one orderable value (as version_rule.sql renders it), each part
    cast to its stored type so the batch's and the table's compare alike."""
    types = {str(c[0]): str(c[1]) for c in definition["storage_columns"]}
    parts = [
        f"cast({prefix}{quote_identifier(c)} as {types[c]})" for c in version_parts(definition)
    ]
    if len(parts) == 1:
        return parts[0]
    return "named_struct(" + ", ".join(f"'v{i}', {p}" for i, p in enumerate(parts)) + ")"


def version_is_null_sql(definition: Mapping[str, Any], prefix: str = "") -> str:
    """True when any part of a row's version is NULL."""
    return " or ".join(f"{prefix}{quote_identifier(c)} is null" for c in version_parts(definition))


def stored_scope_sql(definition: Mapping[str, Any], tenant: Optional[str]) -> str:
    """The stored rows (``stored``) a run may change, as tenant.sql's
    mutable_target_scope_clause."""
    if tenant is not None:
        return f"stored.tenant_id = {sql_string_literal(tenant)}"
    if definition.get("tenant_from"):
        return "true"
    return "stored.tenant_id is null"
