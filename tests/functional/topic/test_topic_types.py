"""A topic of Spark's own types (type_set: spark, the default): published, consumed by
an incremental model and by a mutable table versioned by the events' timestamp, each
type stored as it is; under type_set: jammi the same topic is refused with the
encodings."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.topic.fixtures import TopicProject

TYPED_FEED = """
{{ config(materialized='topic', topic_name='cdc.typed', type_set=var('type_set', 'spark')) }}
select order_id, cast(updated_at as timestamp) as updated_at,
       cast(amount as decimal(9,2)) as amount, tags,
       named_struct('city', city) as ship_to, map('qty', qty) as attrs
from values
{% if var('batch', 1) == 1 %}
  (1, '2024-03-01 10:00:00', 10.50, array('new'), 'Oslo', 1),
  (2, '2024-03-01 11:00:00', 20.00, array('new', 'gift'), 'Bergen', 2)
{% else %}
  (1, '2024-03-02 09:00:00', 11.75, array('paid'), 'Oslo', 3),
  (1, '2024-02-28 09:00:00', 99.99, array('late'), 'Nowhere', 9)
{% endif %}
as t(order_id, updated_at, amount, tags, city, qty)
"""

EVENT_LOG = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select event_offset, order_id, updated_at, amount, tags, ship_to, attrs
from {{ topic_events(ref('typed_feed')) }}
"""

CURRENT = """
{{ config(materialized='mutable_table', primary_key=['order_id'], version_column='updated_at') }}
select order_id, updated_at, amount, tags, ship_to, attrs
from {{ topic_events(ref('typed_feed')) }}
"""


def rows(project, sql: str) -> list[tuple]:
    return [tuple(r) for r in project.run_sql(sql, fetch="all")]


def column_types(project, table: str) -> dict[str, str]:
    described = rows(project, f"describe table {project.test_schema}.{table}")
    return {r[0]: str(r[1]).replace(" ", "") for r in described if r[0] and r[0][0] != "#"}


# spark4_path: typed topic columns under ANSI
@pytest.mark.spark4_path
class TestTopicOfSparkTypes(TopicProject):
    @pytest.fixture(scope="class")
    def models(self):
        return {"typed_feed.sql": TYPED_FEED, "event_log.sql": EVENT_LOG, "current.sql": CURRENT}

    def test_published_consumed_and_versioned_by_time(self, project):
        for batch in (1, 2):
            run_dbt(["run", "--vars", f"{{batch: {batch}}}"])
        expected = {
            "updated_at": "timestamp",
            "amount": "decimal(9,2)",
            "tags": "array<string>",
            "ship_to": "struct<city:string>",
            "attrs": "map<string,int>",
        }
        for table in ("event_log", "current"):
            types = column_types(project, table)
            assert {c: types[c] for c in expected} == expected, table
        schema = project.test_schema
        assert rows(project, f"select count(*) from {schema}.event_log") == [(4,)]
        # order 1's late event (2024-02-28) loses to its newest (2024-03-02)
        current = rows(
            project,
            f"select order_id, cast(updated_at as string), cast(amount as string), "
            f"to_json(tags), ship_to.city, attrs['qty'] from {schema}.current order by 1",
        )
        assert current == [
            (1, "2024-03-02 09:00:00", "11.75", '["paid"]', "Oslo", 3),
            (2, "2024-03-01 11:00:00", "20.00", '["new","gift"]', "Bergen", 2),
        ]

    def test_type_set_jammi_refuses_with_the_encodings(self, project):
        results = run_dbt(
            ["run", "--select", "typed_feed", "--vars", "{type_set: jammi, batch: 1}"],
            expect_pass=False,
        )
        message = results.results[0].message
        assert "type_set: jammi" in message and "to_epoch_millis('updated_at')" in message
