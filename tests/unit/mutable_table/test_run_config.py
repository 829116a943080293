"""The config a mutable_table run reads (mutable_table/run_config.py)."""

from dbt.adapters.jammi.mutable_table import run_config


def test_full_refresh_is_opt_in():
    assert run_config.full_refresh_allowed(True, True)
    assert not run_config.full_refresh_allowed(True, None)
    assert not run_config.full_refresh_allowed(False, True)


def test_definition_config_drops_dbt_defaults():
    config = {"on_schema_change": "ignore", "file_format": "parquet", "primary_key": ["id"]}
    assert run_config.definition_config(config, {}) == {"primary_key": ["id"]}
    assert run_config.definition_config(config, {"file_format": "parquet"})["file_format"] == (
        "parquet"
    )
    assert run_config.requested_file_format({}, "parquet") == "auto"
    assert run_config.requested_file_format({"file_format": "orc"}, "orc") == "orc"
