"""Retention drops old offsets, never ones a registered consumer has not consumed, and
never the newest; tenant scope on publish and consume."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import test_file_format
from tests.functional.topic.fixtures import (
    CDC_ORDERS_SQL,
    DELETED_ORDERS_SQL,
    TopicProject,
    registration,
    rows,
)


# connection_agnostic: retention's plan is SQL; the tenant class below runs over Thrift
@pytest.mark.connection_agnostic
class TestTopicRetention(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "cdc_orders.sql": CDC_ORDERS_SQL.replace(
                "topic_name='cdc.orders'", "topic_name='cdc.orders', retention_offsets=2"
            ),
            "deleted_orders.sql": DELETED_ORDERS_SQL,
        }

    def offsets(self, schema, backing):
        return [r[0] for r in rows(f"SELECT DISTINCT _offset FROM {schema}.{backing} ORDER BY 1")]

    def publish(self, batch):
        run_dbt(["run", "--select", "cdc_orders", "--vars", f"{{batch: {batch}}}"])

    def test_retention_respects_consumers(self, project):
        schema = project.test_schema
        run_dbt(["run", "--vars", "{batch: 1}"])  # offset 1; consumer registered at 1
        _, _, backing = registration(schema)
        self.publish(2)
        assert self.offsets(schema, backing) == [1, 2]
        self.publish(3)  # offset 1 expired and consumed: dropped
        assert self.offsets(schema, backing) == [2, 3]
        self.publish(2)  # offset 2 expired but the consumer has not read it: kept
        assert self.offsets(schema, backing) == [2, 3, 4]

        run_dbt(["run", "--select", "deleted_orders"])  # consumes 2..4
        assert rows(f"SELECT DISTINCT event_offset FROM {schema}.deleted_orders ORDER BY 1") == [
            (2,),
            (3,),
            (4,),
        ]
        self.publish(3)  # now 2 and 3 may go
        assert self.offsets(schema, backing) == [4, 5]
        if test_file_format() == "parquet":
            assert len(rows(f"SHOW PARTITIONS {schema}.{backing}")) == 2


class TestTopicTenantScope(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"cdc_orders.sql": CDC_ORDERS_SQL, "deleted_orders.sql": DELETED_ORDERS_SQL}

    def test_bound_runs_stamp_and_see_their_tenant(self, project):
        schema = project.test_schema
        tenant = "ac'me\\"  # quoting is data, not SQL
        run_dbt(
            ["run", "--select", "cdc_orders", "--vars", '{batch: 1, jammi_tenant: "ac\'me\\\\"}']
        )
        run_dbt(["run", "--select", "cdc_orders", "--vars", "{batch: 2, jammi_tenant: globex}"])
        run_dbt(["run", "--select", "cdc_orders", "--vars", "{batch: 3}"])
        _, _, backing = registration(schema)
        assert rows(
            f"SELECT _offset, min(tenant_id), count(*) FROM {schema}.{backing} "
            "GROUP BY 1 ORDER BY 1"
        ) == [(1, tenant, 3), (2, "globex", 2), (3, None, 3)]

        run_dbt(["run", "--select", "deleted_orders", "--vars", '{jammi_tenant: "ac\'me\\\\"}'])
        # globex's delete (offset 2) is invisible to this tenant; shared deletes are seen
        assert rows(
            f"SELECT event_offset, order_id FROM {schema}.deleted_orders ORDER BY 1, 2"
        ) == [(3, 2), (3, 3)]

        # the same consumer bound to globex keeps its own position: it sees offset 2 too
        run_dbt(["run", "--select", "deleted_orders", "--vars", "{jammi_tenant: globex}"])
        assert rows(
            f"SELECT event_offset, order_id FROM {schema}.deleted_orders ORDER BY 1, 2"
        ) == [(2, 1), (3, 2), (3, 2), (3, 3), (3, 3)]
        assert rows(
            f"SELECT tenant_id, max(last_offset) FROM {schema}.topic_consumers "
            "GROUP BY 1 ORDER BY 1"
        ) == [(tenant, 3), ("globex", 3)]
