"""dbt unit tests (``unit_tests:``) of models that read topics and tenant-scoped
relations: they run on their fixture rows, a wrong expectation fails, and nothing is
read from or written to the ``topics`` registry or ``topic_consumers`` (issue 25)."""

from __future__ import annotations

import os

import pytest
from dbt.tests.util import rm_file, run_dbt, write_file

from tests.functional.topic.fixtures import CDC_ORDERS_SQL, rows

# The models pin parquet (the registry and consumer tables are the same on Delta, and
# fixtures never reach a table format); the Delta lanes deselect the class.
pytestmark = pytest.mark.parquet_only

LATEST_ORDERS_SQL = """
{{ config(materialized='mutable_table', primary_key=['order_id'], version_column='v',
          delete_when="op = 'd'", changelog=true, file_format='parquet') }}
select order_id, op, amount, event_offset * 1000000 + event_row_idx as v
from {{ topic_events(ref('cdc_orders')) }}
"""

DELETED_ORDERS_SQL = """
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}
select event_offset, event_row_idx, order_id
from {{ topic_events(ref('cdc_orders'), where="op = 'd'") }}
"""

ORDER_REPLAY_SQL = """
{{ config(materialized='view') }}
select _offset as event_offset, _row_idx as event_row_idx, order_id, op
from {{ topic_range(ref('cdc_orders'), 2) }}
"""

ORDER_CHANGES_SQL = """
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}
select event_offset, change_kind, order_id, previous_amount, amount
from {{ topic_events(ref('latest_orders'),
                     where="change_kind <> 'update' or not (amount <=> previous_amount)") }}
"""

PRICES_SQL = """
{{ config(materialized='mutable_table', primary_key=['sku'], file_format='parquet') }}
select * from values ('anvil', 100), ('magnet', 50) as t(sku, price)
"""

PRICED_SQL = """
{{ config(materialized='table', file_format='parquet') }}
select sku, price from {{ tenant_scoped(ref('prices')) }}
"""

UNIT_TESTS_YML = """
unit_tests:
  - name: latest_orders_versions_by_position
    model: latest_orders
    given:
      - input: ref('cdc_orders')
        rows:
          - {event_offset: 1, event_row_idx: 0, order_id: 1, op: c, amount: 100}
          - {event_offset: 2, event_row_idx: 0, order_id: 2, op: c, amount: 200}
          - {event_offset: 2, event_row_idx: 1, order_id: 1, op: d}
    expect:
      rows:
        - {order_id: 1, op: c, amount: 100, v: 1000000}
        - {order_id: 2, op: c, amount: 200, v: 2000000}
        - {order_id: 1, op: d, amount: null, v: 2000001}

  - name: deleted_orders_keep_deletes
    model: deleted_orders
    given:
      - input: ref('cdc_orders')
        rows:
          - {event_offset: 3, event_row_idx: 0, order_id: 1, op: c}
          - {event_offset: 3, event_row_idx: 1, order_id: 2, op: d}
          - {event_offset: 4, event_row_idx: 0, order_id: 1, op: u}
          - {event_offset: 4, event_row_idx: 1, order_id: 1, op: d}
    expect:
      rows:
        - {event_offset: 3, event_row_idx: 1, order_id: 2}
        - {event_offset: 4, event_row_idx: 1, order_id: 1}

  - name: deleted_orders_of_the_bound_tenant
    model: deleted_orders
    overrides:
      vars: {jammi_tenant: acme}
    given:
      - input: ref('cdc_orders')
        rows:
          - {event_offset: 5, event_row_idx: 0, order_id: 1, op: d, event_tenant_id: acme}
          - {event_offset: 5, event_row_idx: 1, order_id: 2, op: d, event_tenant_id: globex}
          - {event_offset: 5, event_row_idx: 2, order_id: 3, op: d}
          - {event_offset: 5, event_row_idx: 3, order_id: 4, op: c, event_tenant_id: acme}
    expect:
      rows:
        - {event_offset: 5, event_row_idx: 0, order_id: 1}
        - {event_offset: 5, event_row_idx: 2, order_id: 3}

  - name: deleted_orders_from_a_sql_fixture
    model: deleted_orders
    given:
      - input: ref('cdc_orders')
        format: sql
        rows: |
          select 7 as event_offset, 0 as event_row_idx, 10 as order_id, 'd' as op
          union all select 7, 1, 11, 'c'
    expect:
      rows:
        - {event_offset: 7, event_row_idx: 0, order_id: 10}

  - name: order_replay_from_offset_2
    model: order_replay
    given:
      - input: ref('cdc_orders')
        rows:
          - {_offset: 1, _row_idx: 0, order_id: 1, op: c}
          - {_offset: 2, _row_idx: 0, order_id: 2, op: c}
          - {_offset: 3, _row_idx: 0, order_id: 2, op: d}
    expect:
      rows:
        - {event_offset: 2, event_row_idx: 0, order_id: 2, op: c}
        - {event_offset: 3, event_row_idx: 0, order_id: 2, op: d}

  - name: order_changes_skip_unchanged_amounts
    model: order_changes
    given:
      - input: ref('latest_orders')
        rows:
          - {event_offset: 2, change_kind: insert, order_id: 3, amount: 300}
          - {event_offset: 2, change_kind: update, order_id: 2, amount: 250, previous_amount: 200}
          - {event_offset: 2, change_kind: update, order_id: 4, amount: 40, previous_amount: 40}
          - {event_offset: 2, change_kind: delete, order_id: 1, previous_amount: 100}
    expect:
      rows:
        - {event_offset: 2, change_kind: insert, order_id: 3, previous_amount: null, amount: 300}
        - {event_offset: 2, change_kind: update, order_id: 2, previous_amount: 200, amount: 250}
        - {event_offset: 2, change_kind: delete, order_id: 1, previous_amount: 100, amount: null}

  - name: priced_for_acme
    model: priced
    overrides:
      vars: {jammi_tenant: acme}
    given:
      - input: ref('prices')
        rows:
          - {sku: anvil, price: 100, tenant_id: acme}
          - {sku: anvil, price: 90}
          - {sku: magnet, price: 50, tenant_id: globex}
    expect:
      rows:
        - {sku: anvil, price: 100}
        - {sku: anvil, price: 90}
"""

# The where= predicate drops the create event; expecting it must fail the unit test.
WRONG_EXPECTATION_YML = """
unit_tests:
  - name: deleted_orders_expecting_a_create
    model: deleted_orders
    given:
      - input: ref('cdc_orders')
        rows:
          - {event_offset: 1, event_row_idx: 0, order_id: 1, op: c}
          - {event_offset: 1, event_row_idx: 1, order_id: 2, op: d}
    expect:
      rows:
        - {event_offset: 1, event_row_idx: 0, order_id: 1}
        - {event_offset: 1, event_row_idx: 1, order_id: 2}
"""

UNIT_TESTS = {
    "latest_orders_versions_by_position",
    "deleted_orders_keep_deletes",
    "deleted_orders_of_the_bound_tenant",
    "deleted_orders_from_a_sql_fixture",
    "order_replay_from_offset_2",
    "order_changes_skip_unchanged_amounts",
    "priced_for_acme",
}


def unit_test_results(results) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in results if r.node.resource_type == "unit_test"}


class TestTopicUnitTests:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "cdc_orders.sql": CDC_ORDERS_SQL,
            "latest_orders.sql": LATEST_ORDERS_SQL,
            "deleted_orders.sql": DELETED_ORDERS_SQL,
            "order_replay.sql": ORDER_REPLAY_SQL,
            "order_changes.sql": ORDER_CHANGES_SQL,
            "prices.sql": PRICES_SQL,
            "priced.sql": PRICED_SQL,
            "unit_tests.yml": UNIT_TESTS_YML,
        }

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "parquet"}}

    def tables(self, schema):
        return {r[1] for r in rows(f"show tables in {schema}")}

    def engine_state(self, schema):
        """What the registry and the consumer positions hold, and the topics' offsets."""
        topics = rows(f"select topic_id, name, backing_table from {schema}.topics order by name")
        consumers = rows(
            f"select consumer, tenant_id, topic_id, last_offset, committed_at "
            f"from {schema}.topic_consumers order by consumer, topic_id, committed_at"
        )
        offsets = {name: rows(f"show partitions {schema}.{backing}") for _, name, backing in topics}
        return topics, consumers, offsets

    def test_before_the_topic_is_built(self, project):
        """A format: sql fixture needs nothing in the warehouse; a dict fixture is typed
        from its input, so it fails with what to do; neither creates engine tables."""
        results = run_dbt(["test", "--select", "deleted_orders_from_a_sql_fixture"])
        assert unit_test_results(results) == {"deleted_orders_from_a_sql_fixture": "pass"}

        results = run_dbt(
            ["test", "--select", "latest_orders_versions_by_position"], expect_pass=False
        )
        assert unit_test_results(results) == {"latest_orders_versions_by_position": "error"}
        message = results[0].message
        assert "does not exist yet" in message and "format: sql" in message, message
        assert not {"topics", "topic_consumers"} & self.tables(project.test_schema)

    def test_unit_tests_run_on_their_fixture_rows(self, project):
        schema = project.test_schema
        # dbt build runs each model's unit tests after the model's parents, before it
        results = run_dbt(["build"])
        assert unit_test_results(results) == dict.fromkeys(UNIT_TESTS, "pass")
        before = self.engine_state(schema)
        assert [name for _, name, _ in before[0]] == ["cdc.orders", "latest.orders.changes"]
        assert all(consumer.startswith("model.") for consumer, *_ in before[1]), before[1]

        results = run_dbt(["test", "--select", "test_type:unit"])
        assert unit_test_results(results) == dict.fromkeys(UNIT_TESTS, "pass")
        # a run bound to a tenant: the read guard checks every statement of the tests
        tenant_tests = "deleted_orders_of_the_bound_tenant priced_for_acme".split()
        results = run_dbt(["test", "--select", *tenant_tests, "--vars", "{jammi_tenant: acme}"])
        assert unit_test_results(results) == dict.fromkeys(tenant_tests, "pass")
        assert self.engine_state(schema) == before

    def test_a_wrong_expectation_fails(self, project):
        path = os.path.join(project.project_root, "models", "wrong_expectation.yml")
        write_file(WRONG_EXPECTATION_YML, path)
        try:
            results = run_dbt(
                ["test", "--select", "deleted_orders_expecting_a_create"], expect_pass=False
            )
        finally:
            rm_file(path)
        assert unit_test_results(results) == {"deleted_orders_expecting_a_create": "fail"}
        assert "differs from" in results[0].message, results[0].message
