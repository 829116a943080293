"""Render the topic DDL macros offline: the delta backing table (which cannot be created
on machines without Delta Lake) and the parquet one."""

from __future__ import annotations

import os
import re

import jinja2

from dbt.adapters.jammi.topic_registration import view_fingerprint
from dbt.adapters.jammi.validation import quote_identifier, sql_string_literal

MACROS = os.path.join(
    os.path.dirname(__file__),
    "..",
    "..",
    "dbt",
    "include",
    "jammi",
    "macros",
    "materializations",
    "topic",
)


class Adapter:
    sql_string = staticmethod(sql_string_literal)
    quote_column = staticmethod(quote_identifier)
    topic_view_fingerprint = staticmethod(view_fingerprint)


def registry_macros():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(MACROS), extensions=["jinja2.ext.do"])
    return env.get_template("topic_registry.sql").make_module({"adapter": Adapter()})


TOPIC = {
    "topic_id": "0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "name": "cdc.orders",
    "backing_table": "__topic_0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b",
    "columns": [["order_id", "int"], ["op", "string"]],
}


def flat(sql: str) -> str:
    return re.sub(r"\s+", " ", str(sql)).strip()


def test_delta_backing_table_ddl():
    sql = flat(
        registry_macros().get_create_topic_backing_sql(
            "s.__topic_x", dict(TOPIC, file_format="delta")
        )
    )
    assert sql.startswith(
        "create table s.__topic_x ( _offset bigint not null, _row_idx bigint not null, "
        "_produced_at bigint not null, `order_id` int, `op` string, tenant_id string ) "
        "using delta"
    )
    assert "partitioned by" not in sql
    assert "'delta.isolationLevel' = 'Serializable'" in sql
    assert "'jammi.topic_id' = '0190a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b'" in sql


def test_parquet_backing_table_is_partitioned_by_offset():
    sql = flat(
        registry_macros().get_create_topic_backing_sql(
            "s.__topic_x", dict(TOPIC, file_format="parquet")
        )
    )
    assert "_offset bigint, _row_idx bigint, _produced_at bigint," in sql
    assert "using parquet partitioned by (_offset)" in sql
    assert "isolationLevel" not in sql


def test_view_lists_columns_in_contract_order():
    sql = flat(registry_macros().get_create_topic_view_sql("s.cdc_orders", "s.__topic_x", TOPIC))
    assert sql.endswith(
        "as select _offset, _row_idx, _produced_at, `order_id`, `op`, tenant_id from s.__topic_x"
    )
