"""Render the topic DDL offline: the delta backing table (which cannot be created
on machines without Delta Lake) and the parquet one; topic_events' check of `where`."""

from __future__ import annotations

import os
import re

import jinja2
import pytest

from dbt.adapters.jammi.common.validation import quote_identifier, sql_string_literal
from dbt.adapters.jammi.impl import JammiAdapter
from dbt.adapters.jammi.topic.registration import view_fingerprint
from dbt.adapters.jammi.topic.registry_sql import (
    create_backing_sql,
    create_view_sql,
    view_select_sql,
)
from tests.unit.rejections import rejects

MACROS = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "..",
    "dbt",
    "include",
    "jammi",
    "macros",
    "topic",
)


class Adapter:
    sql_string = staticmethod(sql_string_literal)
    quote_column = staticmethod(quote_identifier)


TOPIC = {
    "topic_id": "0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "name": "cdc.orders",
    "backing_table": "__topic_0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "columns": [["order_id", "int"], ["op", "string"]],
}


def flat(sql: str) -> str:
    return re.sub(r"\s+", " ", str(sql)).strip()


def test_delta_backing_table_ddl():
    sql = flat(create_backing_sql("s.__topic_x", dict(TOPIC, file_format="delta")))
    assert sql.startswith(
        "create table s.__topic_x ( _offset bigint not null, _row_idx bigint not null, "
        "_produced_at bigint not null, `order_id` int, `op` string, tenant_id string ) "
        "using delta"
    )
    assert "partitioned by" not in sql
    assert "'delta.isolationLevel' = 'Serializable'" in sql
    assert "'jammi.topic_id' = '0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b'" in sql


def test_iceberg_backing_table_validates_its_merges_serializably():
    sql = flat(create_backing_sql("s.__topic_x", dict(TOPIC, file_format="iceberg")))
    assert sql.startswith(
        "create table s.__topic_x ( _offset bigint not null, _row_idx bigint not null, "
        "_produced_at bigint not null, `order_id` int, `op` string, tenant_id string ) "
        "using iceberg comment"
    )
    assert "partitioned by" not in sql and "delta." not in sql
    assert "'write.merge.isolation-level' = 'serializable'" in sql


def test_parquet_backing_table_is_partitioned_by_offset():
    sql = flat(create_backing_sql("s.__topic_x", dict(TOPIC, file_format="parquet")))
    assert "_offset bigint, _row_idx bigint, _produced_at bigint," in sql
    assert "using parquet partitioned by (_offset)" in sql
    assert "isolationLevel" not in sql


def test_view_lists_columns_in_contract_order():
    select = view_select_sql("s.__topic_x", TOPIC)
    sql = flat(
        create_view_sql("s.cdc_orders", "s.__topic_x", TOPIC, view_fingerprint(select), True)
    )
    assert sql.endswith(
        "as select _offset, _row_idx, _produced_at, `order_id`, `op`, tenant_id from s.__topic_x"
    )


def publish_macros():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(MACROS), extensions=["jinja2.ext.do"])
    return env.get_template("topic_publish.sql").make_module({"adapter": Adapter()})


STAGING = {"kind": "directory", "target": "file:/w/t/_staging/p1", "using": "parquet"}


def test_stage_numbers_rows_without_a_single_task_window():
    """_row_idx: each partition's position plus the rows of the partitions before it;
    the only window runs over one row per partition, never over the batch."""
    sql = flat(
        publish_macros().get_stage_topic_batch_sql(
            STAGING, TOPIC, "select 1 as order_id", None, "parallel"
        )
    )
    assert sql.startswith("insert overwrite directory 'file:/w/t/_staging/p1' using parquet with")
    assert "row_number()" not in sql
    assert (
        "select spark_partition_id() as __jammi_part, monotonically_increasing_id() as "
        "__jammi_id, topic_batch.* from ( select 1 as order_id ) as topic_batch" in sql
    )
    assert (
        "coalesce(sum(part_rows) over (order by __jammi_part rows between unbounded "
        "preceding and 1 preceding), 0) as __jammi_start from (select __jammi_part, "
        "count(*) as part_rows from numbered group by __jammi_part)" in sql
    )
    assert (
        "cast(__jammi_start + __jammi_id - shiftleft(cast(numbered.__jammi_part as bigint), "
        "33) as bigint) as _row_idx" in sql
    )
    assert sql.endswith(
        "cast(null as string) as tenant_id from numbered join part_starts on "
        "numbered.__jammi_part = part_starts.__jammi_part"
    )


def test_stage_table_takes_the_topics_stage_format():
    staging = {"kind": "table", "target": "s.__topic_x__stage_1", "using": "iceberg"}
    sql = flat(
        publish_macros().get_stage_topic_batch_sql(
            staging, TOPIC, "select 1 as order_id", None, "one_task"
        )
    )
    assert sql.startswith("create table s.__topic_x__stage_1 using iceberg as select")


def test_stage_of_a_small_batch_numbers_in_one_task():
    """'one_task' (small batches): coalesced, then one window; no shuffle."""
    sql = flat(
        publish_macros().get_stage_topic_batch_sql(
            STAGING, TOPIC, "select 1 as order_id", "acme", "one_task"
        )
    )
    assert "__jammi_part" not in sql
    assert (
        "select cast(row_number() over (order by monotonically_increasing_id()) - 1 as "
        "bigint) as _row_idx," in sql
    )
    assert sql.endswith(
        "cast('acme' as string) as tenant_id from ( select /*+ COALESCE(1) */ * from "
        "( select 1 as order_id ) as topic_rows ) as topic_batch"
    )


def test_stage_without_exchange_reuse_numbers_in_one_window():
    sql = flat(
        publish_macros().get_stage_topic_batch_sql(
            STAGING, TOPIC, "select 1 as order_id", "acme", "window"
        )
    )
    assert "__jammi_part" not in sql and "COALESCE" not in sql
    assert (
        "select cast(row_number() over (order by monotonically_increasing_id()) - 1 as "
        "bigint) as _row_idx," in sql
    )
    assert sql.endswith(
        "cast('acme' as string) as tenant_id from ( select 1 as order_id ) as topic_batch"
    )


def test_stage_of_an_ordered_topic_numbers_in_the_batchs_own_stage():
    """'ordered' (row_idx: ordered): Spark's id as it is, no window, no join, no coalesce."""
    sql = flat(
        publish_macros().get_stage_topic_batch_sql(
            STAGING, TOPIC, "select 1 as order_id", None, "ordered"
        )
    )
    assert sql.startswith(
        "insert overwrite directory 'file:/w/t/_staging/p1' using parquet select "
        "cast(monotonically_increasing_id() as bigint) as _row_idx,"
    )
    assert not re.search(r"row_number|__jammi_part|COALESCE|join", sql)
    assert sql.endswith(
        "cast(null as string) as tenant_id from ( select 1 as order_id ) as topic_batch"
    )


# --- topic_events(where=...): one expression, checked before the topic is read ---------


class Read(Exception):
    """topic_events got past its check of `where` to reading the topic."""


class EventsAdapter:
    topic_events_read = JammiAdapter.topic_events_read  # the adapter's own check

    def bound_tenant(self, override):
        raise Read(override)


def topic_events(where, model="escaping_where"):
    """Render model_helpers/topic_events.sql's topic_events as a model named ``model`` would."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(MACROS, "..", "model_helpers")),
        extensions=["jinja2.ext.do"],
    )
    context = {
        "adapter": EventsAdapter(),
        "model": {"name": model},
        "var": lambda *a: None,
        "execute": True,
    }
    module = env.get_template("topic_events.sql").make_module(context)
    return module.topic_events("analytics.events", where=where)


def test_topic_events_refuses_a_where_that_closes_its_parentheses():
    # the model of tests/functional/mutable_table/test_tenant_read_guard.py
    rejects(
        lambda: topic_events("true) or (true"),
        "topic_events in model 'escaping_where': 'where' is not one SQL expression",
    )
    with pytest.raises(Read):
        topic_events("who <> 'nobody'")
