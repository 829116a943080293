"""Consumers read only new events, with a predicate; a failed run re-reads them; the
manifest shows topic -> consumer lineage (docs/topic.md)."""

from __future__ import annotations

import json
import os

import pytest
from dbt.tests.util import run_dbt

from tests.functional.topic.fixtures import CDC_ORDERS_SQL, DELETED_ORDERS_SQL, TopicProject, rows

TOPIC_OFFSETS_YML = """
version: 2
models:
  - name: cdc_orders
    data_tests:
      - topic_offsets
"""


class TestTopicConsumer(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "cdc_orders.sql": CDC_ORDERS_SQL,
            "deleted_orders.sql": DELETED_ORDERS_SQL,
            "schema.yml": TOPIC_OFFSETS_YML,
        }

    def deleted(self, schema):
        return rows(
            f"SELECT event_offset, event_row_idx, order_id FROM {schema}.deleted_orders "
            "ORDER BY 1, 2"
        )

    def position(self, schema):
        return rows(
            f"SELECT consumer, max(last_offset) FROM {schema}.topic_consumers GROUP BY consumer"
        )

    @pytest.mark.smoke
    def test_consumer_reads_only_new_events(self, project):
        schema = project.test_schema
        # batch 1 (creates only): the consumer sees no deletes yet
        run_dbt(["build", "--vars", "{batch: 1}"])
        assert self.deleted(schema) == []
        assert self.position(schema) == [("model.test.deleted_orders", 1)]

        # batch 2: one delete (order 1)
        run_dbt(["build", "--vars", "{batch: 2}"])
        assert self.deleted(schema) == [(2, 1, 1)]
        assert self.position(schema) == [("model.test.deleted_orders", 2)]

        # batch 3 is published, then the consumer fails while reading it
        run_dbt(["run", "--select", "cdc_orders", "--vars", "{batch: 3}"])
        run_dbt(
            ["run", "--select", "deleted_orders", "--vars", "{fail_consumer: true}"],
            expect_pass=False,
        )
        assert self.deleted(schema) == [(2, 1, 1)]
        assert self.position(schema) == [("model.test.deleted_orders", 2)]

        # the retry re-reads offset 3: nothing lost, nothing twice
        run_dbt(["run", "--select", "deleted_orders"])
        assert self.deleted(schema) == [(2, 1, 1), (3, 1, 3), (3, 2, 2)]
        assert self.position(schema) == [("model.test.deleted_orders", 3)]

        # nothing new: the consumer appends nothing and its position stays
        run_dbt(["run", "--select", "deleted_orders"])
        assert self.deleted(schema) == [(2, 1, 1), (3, 1, 3), (3, 2, 2)]
        assert self.position(schema) == [("model.test.deleted_orders", 3)]

        # topic_offsets generic test passes on the topic
        results = run_dbt(["test", "--select", "cdc_orders"])
        assert [r.status for r in results] == ["pass"]

    @pytest.mark.iceberg_lane_skip
    def test_docs_lineage_topic_to_consumer(self, project):
        run_dbt(["docs", "generate"])
        with open(os.path.join(project.project_root, "target", "manifest.json")) as f:
            manifest = json.load(f)
        consumer = manifest["nodes"]["model.test.deleted_orders"]
        assert consumer["depends_on"]["nodes"] == ["model.test.cdc_orders"]
        assert "model.test.deleted_orders" in manifest["child_map"]["model.test.cdc_orders"]
        assert manifest["nodes"]["model.test.cdc_orders"]["config"]["materialized"] == "topic"
