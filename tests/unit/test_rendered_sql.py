"""Statements that moved from macros to Python render as the macros did (issue 50's
"behaviour does not move"). tests/unit/rendered/before.json holds what the macros
rendered before the move, for a fixed set of definitions and formats; each case here
renders the same statement in Python and compares it, whitespace aside."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from dbt.adapters.jammi.mutable_table import table_records
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.rules import changelog_sql, identity_phases, tombstone_phases
from dbt.adapters.jammi.topic import registry_sql
from dbt.adapters.jammi.topic.registration import view_fingerprint

BEFORE = json.loads((Path(__file__).parent / "rendered" / "before.json").read_text())

PRICES = {"sku": "string", "price": "bigint", "label": "string", "v": "bigint"}
ACCOUNTS = {"id": "bigint", "name": "string", "amount": "double"}
TOPIC = {
    "topic_id": "0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "name": "cdc.orders",
    "backing_table": "__topic_0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "columns": [["order_id", "int"], ["op", "string"]],
}
RAW = (
    "select _change_type, _commit_version, `id`, tenant_id "
    "from table_changes('`s`.`accounts`', 3, 5)"
)
NOW_MS = 1_800_000_000_000
STAGED = "file:/t/topic/_staged/file:/w/prices/v{:010d}_r"


def _definition(table: str, schema: dict, **config: Any) -> dict:
    config.setdefault("changelog", True)
    defn = MutableTableDefinition.from_config(table, schema, config).to_dict()
    defn["changelog_topic"] = {"file_format": "parquet", "location": "file:/t/topic"}
    return defn


STAGE_DEFINITIONS = {
    "none_parquet": lambda: _definition("prices", PRICES, primary_key=["sku"]),
    "ttl_parquet": lambda: _definition(
        "prices", PRICES, primary_key=["sku"], ttl_ms=1000, ttl_column="v"
    ),
    "scd2_parquet": lambda: _definition(
        "prices", {"sku": "string", "price": "bigint"}, primary_key=["sku"], history="scd2"
    ),
}


def _stage(name: str, first: bool) -> Callable[[], str]:
    version = 1 if first else 4
    target = None if first else "analytics.prices"
    return lambda: changelog_sql.stage_sql(
        STAGE_DEFINITIONS[name](),
        target,
        "prices__jammi_changes_r",
        version,
        STAGED.format(version),
    )


def _deleting(version: Any = "v", live: bool = True) -> dict:
    defn = MutableTableDefinition.from_config(
        "prices",
        PRICES,
        {"primary_key": ["sku"], "version_column": version, "delete_when": "label = 'x'"},
    ).to_dict()
    from_ = "select * from live_tombstones" if live else None
    defn.update({"now_ms": NOW_MS, "tombstone_now_ms": NOW_MS, "tombstones_from": from_})
    return defn


def _numbered() -> dict:
    return MutableTableDefinition.from_config(
        "orders",
        {"order_id": "string"},
        {"primary_key": ["order_id"], "identity_column": "order_no"},
    ).to_dict()


def _fingerprinted_view(replace: bool) -> str:
    fingerprint = view_fingerprint(registry_sql.view_select_sql("s.__topic_x", TOPIC))
    return registry_sql.create_view_sql("s.cdc_orders", "s.__topic_x", TOPIC, fingerprint, replace)


CASES: dict[str, Callable[[], str]] = {
    **{f"stage_{name}": _stage(name, False) for name in STAGE_DEFINITIONS},
    **{f"stage_{name}_first": _stage(name, True) for name in STAGE_DEFINITIONS},
    "delta_publish_none": lambda: changelog_sql.delta_publish_sql(
        _definition("accounts", ACCOUNTS, primary_key=["id"]), "s.__topic_x", RAW
    ),
    "delta_publish_scd2": lambda: changelog_sql.delta_publish_sql(
        _definition(
            "accounts", {"id": "bigint", "label": "string"}, primary_key=["id"], history="scd2"
        ),
        "s.__topic_x",
        RAW,
    ),
    "topic_backing_delta": lambda: registry_sql.create_backing_sql(
        "s.__topic_x", dict(TOPIC, file_format="delta")
    ),
    "topic_backing_parquet": lambda: registry_sql.create_backing_sql(
        "s.__topic_x", dict(TOPIC, file_format="parquet")
    ),
    "tombstones_next_with_live": lambda: tombstone_phases.next_tombstones_sql(
        _deleting(), "select 1"
    ),
    "tombstones_next_without_live": lambda: tombstone_phases.next_tombstones_sql(
        _deleting(live=False), "select 1"
    ),
    "tombstones_next_two_columns": lambda: tombstone_phases.next_tombstones_sql(
        _deleting(["v", "price"]), "select 1"
    ),
    "tombstones_write": lambda: tombstone_phases.write_sql(
        "/w/t/v0000000004_cd", "parquet", "select 1"
    ),
    "tombstones_none": lambda: tombstone_phases.no_tombstones_sql(_deleting(["v", "price"])),
    "identity_mark_write": lambda: identity_phases.mark_write_sql(
        _numbered(), "orders__jammi_changes_r1", "/w/orders/v0000000003_r1", 12
    ),
    "identity_mark_table_create": lambda: identity_phases.mark_table_sql("s.orders"),
    "identity_branch_record": lambda: identity_phases.branch_record_sql(
        _numbered(), "s.orders", "orders__jammi_change_set", 7
    ),
    "topic_registry": lambda: registry_sql.create_registry_sql("s.topics"),
    "topic_view_select": lambda: registry_sql.view_select_sql("s.__topic_x", TOPIC),
    "topic_view_create": lambda: _fingerprinted_view(False),
    "topic_view_replace": lambda: _fingerprinted_view(True),
    "topic_stage_registration": lambda: registry_sql.stage_registration_sql(
        "file:/w/topics/_staging/x",
        dict(TOPIC, file_format="parquet", retention_offsets=5, retention_ms=None),
        "cdc_orders",
    ),
}


def _recorded(**config: Any) -> dict:
    """A definition as a run records it (storage_tables.sql rendered these before the
    move to table_records.py)."""
    config.setdefault("primary_key", ["id"])
    tblproperties = config.pop("tblproperties", None)
    defn = MutableTableDefinition.from_config("accounts", ACCOUNTS, config).to_dict()
    defn["versions_kept"] = 3
    if tblproperties:
        defn["tblproperties"] = tblproperties
    return defn


def _iceberg_changelog() -> dict:
    defn = _recorded(changelog=True, tblproperties={"write.merge.mode": "merge-on-read"})
    defn["changelog_topic"] = {"created_tag": "jammi_run_abc"}
    return defn


CASES.update(
    {
        "records_properties_parquet_version": lambda: table_records.properties_clause(
            _recorded(), "parquet", 3
        ),
        "records_properties_orc_first": lambda: table_records.properties_clause(
            _recorded(), "orc", 1, first=True
        ),
        "records_properties_delta_first_changelog": lambda: table_records.properties_clause(
            _recorded(changelog=True), "delta", None, first=True
        ),
        "records_properties_iceberg_first_changelog": lambda: table_records.properties_clause(
            _iceberg_changelog(), "iceberg", None, first=True
        ),
        "records_properties_iceberg_later": lambda: table_records.properties_clause(
            _iceberg_changelog(), "iceberg", None
        ),
        "records_registry_create_delta": lambda: table_records.create_registry_sql(
            "analytics.mutable_tables", "delta"
        ),
        "records_registry_create_iceberg": lambda: table_records.create_registry_sql(
            "analytics.mutable_tables", "iceberg"
        ),
        "records_registry_row": lambda: table_records.registry_row_sql(
            "analytics.mutable_tables",
            "analytics.accounts",
            _recorded(changelog=True),
            "delta",
            "inv-1",
        ),
    }
)


def _normalized(sql: str) -> str:
    flat = re.sub(r",\s*", ", ", " ".join(sql.split()))
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", flat))


def test_every_recorded_statement_has_a_case():
    assert sorted(CASES) == sorted(BEFORE)


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_renders_as_the_macro_did(case):
    assert _normalized(CASES[case]()) == _normalized(BEFORE[case])
