"""The model config a mutable_table run reads: whether ``--full-refresh`` may rebuild,
the requested ``file_format``, the config its definition is built from (without dbt's
own defaults), and the definition the run starts from with its run options."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbt.adapters.jammi.common.columns import schema_pairs
from dbt.adapters.jammi.common.validation import validate_registry_schema
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.run_definition import RunDefinition
from dbt.adapters.jammi.mutable_table.tblproperties_config import validate_tblproperties
from dbt.adapters.jammi.mutable_table.versions.iceberg_expiry import validate_expire_snapshots
from dbt.adapters.jammi.mutable_table.versions.kept_versions import validate_versions_kept


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


def run_definition(
    model_name: str, columns: Sequence[Any], config: Mapping[str, Any]
) -> RunDefinition:
    """Validate a mutable_table model and return its definition, with the run options
    that are not part of the recorded definition as its run values (run_definition.py):
    ``versions_kept``, ``expire_snapshots``, ``tblproperties``."""
    validate_registry_schema(config.get("registry_schema"), f"model '{model_name}'")
    data = MutableTableDefinition.from_config(model_name, schema_pairs(columns), config).to_dict()
    subject = f"mutable_table '{model_name}'"
    return RunDefinition(
        data,
        {
            "versions_kept": validate_versions_kept(config.get("versions_kept"), subject),
            "expire_snapshots": validate_expire_snapshots(config.get("expire_snapshots"), subject),
            "tblproperties": validate_tblproperties(
                config.get("tblproperties"), subject, bool(data.get("changelog"))
            ),
        },
    )
