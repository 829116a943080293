"""adapter.topic_tail: the live tail's read of a topic by its registered name, in one call
(no dbt, no Spark: the adapter's statements answered by a fake)."""

from __future__ import annotations

import json

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.tenancy.tenancy_service import TenancyService
from dbt.adapters.jammi.topic.registry_service import PARTITION_PRUNING_FALLBACK
from tests.unit.topic.services import topic_services

ROW = ("t1", "cdc.orders", "orders__jammi_topic", json.dumps([["id", "int"]]), "delta", "orders")


class _Tail:
    """The face's ``topic_tail`` over the registry's service and a recorded engine."""

    topic_tail = JammiAdapter.topic_tail
    tenant_scoped_sql = staticmethod(TenancyService.scoped_relation)

    def __init__(self, registry_rows, high_water=7):
        self.registry_rows = registry_rows
        self.high_water = high_water
        self.ran: list[str] = []
        self._topics, self._topic_registry = topic_services(self.run)

    def bound_tenant(self, override):
        return override

    def run(self, sql):
        self.ran.append(sql)
        if sql == PARTITION_PRUNING_FALLBACK:
            return []
        if " from analytics.topics " in sql:
            return self.registry_rows
        assert sql == "select coalesce(max(_offset), 0) from analytics.orders__jammi_topic"
        return [(self.high_water,)]


def test_the_tail_reads_the_high_water_mark_and_the_backing_table_in_one_call():
    tail = _Tail([ROW])
    assert tail.topic_tail("analytics", "cdc.orders", None) == {
        "high_water": 7,
        "source": "analytics.orders__jammi_topic",
    }
    # the session is set up for topic reads before the registry is read
    assert tail.ran[0] == PARTITION_PRUNING_FALLBACK
    assert "where name = 'cdc.orders'" in tail.ran[1]


def test_a_bound_tail_reads_its_tenants_and_shared_events_only():
    read = _Tail([ROW]).topic_tail("analytics", "cdc.orders", "acme")
    assert "tenant_id = 'acme'" in read["source"] and "tenant_id is null" in read["source"]


def test_an_unknown_topic_fails_with_the_fix():
    tail = _Tail([])
    with pytest.raises(CompilationError, match="no topic 'cdc.nope' in analytics.topics"):
        tail.topic_tail("analytics", "cdc.nope", None)
    assert len(tail.ran) == 2  # no offsets were read
