"""Who owns a leftover, which leftovers a run may remove, and the schema listing that
never reports an existing table as missing."""

from __future__ import annotations

import os

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.jammi.engine.listing import list_relations_retrying_vanished
from dbt.adapters.jammi.mutable_table.commit import leftovers
from dbt.adapters.jammi.mutable_table.commit.commit_service import CommitService
from dbt.adapters.jammi.mutable_table.commit.ownership import (
    Holder,
    abandoned,
    holder_properties,
    this_holder,
)

DAY_MS = 86_400_000
NOW = 10 * DAY_MS


def test_holder_round_trips_through_its_property():
    holder = Holder("host-1.example", 4242, "session")
    assert Holder.parse(holder.render()) == holder
    assert Holder.parse("garbage") is None


def test_a_leftover_is_abandoned_only_when_its_owner_is_provably_gone():
    me = this_holder("session")
    assert not abandoned(holder_properties(me, NOW), NOW, DAY_MS)
    dead = Holder(me.host, 2**22 + 4321, "session")
    assert abandoned(holder_properties(dead, NOW), NOW, DAY_MS)
    # a remote client or another host: only by age
    remote = Holder(me.host, 2**22 + 4321, "thrift")
    assert not abandoned(holder_properties(remote, NOW), NOW, DAY_MS)
    assert abandoned(holder_properties(remote, NOW - DAY_MS - 1), NOW, DAY_MS)
    other_host = Holder("elsewhere", os.getpid(), "session")
    assert not abandoned(holder_properties(other_host, NOW), NOW, DAY_MS)
    # made before stamps existed: no owner, no time
    assert abandoned({}, NOW, DAY_MS)


def test_stale_claims_are_the_versions_the_table_has_reached():
    names = [
        "stock__jammi_claim_v0000000002_0",
        "stock__jammi_claim_v0000000003_1",
        "stock__jammi_claim_v0000000004_0",
        "stock__jammi_changes_abc",
        "stockx__jammi_claim_v0000000001_0",
    ]
    assert leftovers.stale_claims("stock", names, 3) == [
        "stock__jammi_claim_v0000000002_0",
        "stock__jammi_claim_v0000000003_1",
    ]
    assert leftovers.stale_claims("stock", names, None) == []


def test_foreign_staging_excludes_the_runs_own():
    names = ["stock__jammi_changes_mine", "stock__jammi_changes_other", "stock__jammi_batch"]
    assert leftovers.foreign_staging("stock", names, "mine") == ["stock__jammi_changes_other"]


def _failing(messages):
    calls = {"n": 0}

    def list_once():
        calls["n"] += 1
        if messages:
            raise DbtRuntimeError(messages.pop(0))
        return ["analytics.stock"]

    return list_once, calls


def test_a_table_vanishing_during_the_listing_repeats_it():
    list_once, calls = _failing(["[TABLE_OR_VIEW_NOT_FOUND] stock__jammi_changes_x"] * 2)
    assert list_relations_retrying_vanished(list_once, lambda: [], "analytics") == [
        "analytics.stock"
    ]
    assert calls["n"] == 3


def test_a_missing_schema_lists_empty_and_endless_vanishing_is_an_error():
    list_once, _ = _failing(["[SCHEMA_NOT_FOUND] analytics"])
    assert list_relations_retrying_vanished(list_once, lambda: ["x"], "analytics") == []
    list_once, _ = _failing(["[TABLE_OR_VIEW_NOT_FOUND] t"] * 10)
    with pytest.raises(DbtRuntimeError, match="tables kept disappearing"):
        list_relations_retrying_vanished(list_once, lambda: [], "analytics", attempts=3)


def test_other_errors_go_to_dbt_sparks_fallbacks():
    list_once, _ = _failing(["SHOW TABLE EXTENDED is not supported for v2 tables"])
    assert list_relations_retrying_vanished(list_once, lambda: ["v2"], "analytics") == ["v2"]


class _Relation:
    def __init__(self, schema: str, identifier: str) -> None:
        self.database, self.schema, self.identifier = None, schema, identifier


class _Cache:
    """dbt's relation cache: the schemas it listed, and their relations."""

    def __init__(self, listed: dict[str, list[str]]) -> None:
        self.listed = listed

    def __contains__(self, key: tuple) -> bool:
        return key[1] in self.listed

    def get_relations(self, database, schema):
        return [_Relation(schema, name) for name in self.listed.get(schema, [])]


class _Sql:
    """The commit service's SQL interface: statements recorded, answered with no rows."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def rows(self, sql: str):
        self.statements.append(sql)
        return []


def _Adapter(cache: _Cache) -> CommitService:  # noqa: N802 - the service over a fake cache
    service = CommitService(_Sql(), None, None, cache)  # type: ignore[arg-type]
    service.statements = service.sql.statements  # type: ignore[attr-defined]
    return service


@pytest.mark.parametrize(
    "listed, lists",
    [
        ({"s": ["orders", "orders_daily", "other__jammi_changes_x"]}, False),
        ({"s": ["orders", "ORDERS__jammi_claim_v0000000003_0"]}, True),
        ({"s": ["orders", "orders__jammi_changes_abc"]}, True),
        ({"elsewhere": []}, True),  # the schema was not listed: the run lists it itself
    ],
)
def test_the_leftover_sweep_lists_the_schema_only_when_leftovers_may_be_there(listed, lists):
    adapter = _Adapter(_Cache(listed))
    adapter.drop_abandoned_leftovers(_Relation("s", "orders"), None, "run1")
    assert bool(adapter.statements) is lists
    if lists:
        assert adapter.statements == ["show tables in s like 'orders__jammi_*'"]


def test_an_iceberg_table_of_the_session_catalog_is_marked_iceberg():
    """SHOW TABLE EXTENDED on Iceberg's SparkSessionCatalog (Spark 4.1.4, Iceberg 1.12.0):
    the Hive metastore's entry, "Provider: hive" with table_type=ICEBERG."""
    from dbt.adapters.spark.relation import SparkRelation

    from dbt.adapters.jammi.engine.listing import marked_iceberg

    def listed(information: str) -> SparkRelation:
        return SparkRelation.create(
            schema="sx", identifier="t", type="table", information=information
        )

    iceberg = listed(
        "Catalog: spark_catalog\nType: EXTERNAL\nProvider: hive\nTable Properties: "
        "[metadata_location=file:/w/sx.db/t/metadata/00000.metadata.json, owner=root, "
        "table_type=ICEBERG, uuid=59dd]\n"
    )
    assert marked_iceberg(iceberg).is_iceberg is True
    parquet = listed("Type: MANAGED\nProvider: parquet\nLocation: file:/w/sx.db/p\n")
    assert not marked_iceberg(parquet).is_iceberg
    # a property value that only contains the words is not the marker
    lookalike = listed("Provider: parquet\nTable Properties: [note=old_table_type=ICEBERGISH]\n")
    assert not marked_iceberg(lookalike).is_iceberg
