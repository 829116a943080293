"""The model config a mutable_table run reads: whether ``--full-refresh`` may rebuild,
the requested ``file_format``, and the config its definition is built from (without
dbt's own defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
