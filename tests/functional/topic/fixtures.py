"""Models and helpers shared by the topic feature tests."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from tests.conftest import test_file_format

# A CDC order stream: var('batch') picks which change batch this run publishes.
CDC_ORDERS_SQL = """
{{ config(materialized='topic', topic_name='cdc.orders') }}
select order_id, op, amount from (
  select 1 as batch, 1 as order_id, 'c' as op, 100 as amount
  union all select 1, 2, 'c', 200
  union all select 1, 3, 'c', 300
  union all select 2, 2, 'u', 250
  union all select 2, 1, 'd', cast(null as int)
  union all select 3, 4, 'c', 400
  union all select 3, 3, 'd', cast(null as int)
  union all select 3, 2, 'd', cast(null as int)
) batches
where batch = {{ var('batch', 1) }}
"""

# Consumer: appends the delete events it has not seen; var('fail_consumer') makes the
# model fail while it reads them (raise_error inside the query).
DELETED_ORDERS_SQL = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select event_offset, event_row_idx, event_produced_at, order_id,
  {% if var('fail_consumer', false) %}
  case when order_id > 0 then raise_error('consumer failed mid-run') end as boom
  {% else %}
  cast(null as string) as boom
  {% endif %}
from {{ topic_events(ref('cdc_orders'), where="op = 'd'") }}
"""


class TopicProject:
    """A topic test's dbt project: its models in the lane's file format."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": test_file_format()}}


def spark() -> SparkSession:
    """The embedded session dbt runs on (same process, same JVM)."""
    session = SparkSession.getActiveSession()
    return session if session is not None else SparkSession.builder.getOrCreate()


def rows(sql: str) -> list[tuple]:
    """Run `sql` through dbt's jammi adapter, so reads see what dbt wrote on every
    connection method (embedded session or a Thrift server)."""
    from dbt.adapters.factory import get_adapter_by_type

    adapter = get_adapter_by_type("jammi")
    with adapter.connection_named("__topic_test_rows"):
        connection = adapter.connections.get_thread_connection()
        result = adapter.run_sql_for_tests(sql, "all", connection)
    return [tuple(r) for r in result or []]


def columns_of(relation: str) -> list[str]:
    """Column names of a relation, in order, as Spark describes it."""
    names = []
    for row in rows(f"describe table {relation}"):
        if not row[0] or row[0].startswith("#"):
            break
        names.append(row[0])
    return names


def registration(schema: str, name: str = "cdc.orders") -> tuple:
    found = rows(f"SELECT topic_id, name, backing_table FROM {schema}.topics WHERE name = '{name}'")
    assert len(found) == 1, found
    return found[0]
