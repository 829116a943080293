"""An Iceberg catalog service as the session's default catalog (the Iceberg lane's REST
slice, scripts/iceberg_lane.py --rest; docs/formats.md, "An Iceberg catalog service"):
`file_format: auto` builds Iceberg tables there, dbt's schema drop empties the namespace
first (a REST catalog drops only empty ones), a topic publishes and is consumed in Iceberg
tables (its claims are the registry's and the backing table's validated MERGEs), and a
changelog publishes each committed version once into an Iceberg topic."""

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import rest_catalog_uri, test_file_format

pytestmark = pytest.mark.skipif(
    test_file_format() != "iceberg" or not rest_catalog_uri(),
    reason="needs an Iceberg REST catalog as the default catalog (make iceberg-rest-lane)",
)

ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, 'one' as name
"""

PLAIN = """
{{ config(materialized='table', file_format='iceberg') }}
select 1 as id
"""

EVENTS = """
{{ config(materialized='topic', topic_name='rest.events') }}
select cast({{ var('batch', 1) }} * 10 + id as int) as order_id from range(3)
"""

READER = """
{{ config(materialized='table', file_format='iceberg') }}
select event_offset, order_id from {{ topic_events(ref('events')) }}
"""

PARQUET_EVENTS = """
{{ config(materialized='topic', file_format='parquet') }}
select 1 as order_id
"""

LOGGED = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=true) }}
{% for id in var('ids', [1]) %}
select {{ id }} as id, 'v' as label {{ 'union all' if not loop.last }}
{% endfor %}
"""


def provider(project, table: str) -> str:
    described = project.run_sql(
        f"describe table extended {project.test_schema}.{table}", fetch="all"
    )
    return next(str(r[1]).strip().lower() for r in described if str(r[0]).strip() == "Provider")


def tables(project, schema: str) -> list[str]:
    return sorted(r[1] for r in project.run_sql(f"show tables in {schema}", fetch="all"))


class TestIcebergCatalogService:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "items.sql": ITEMS,
            "plain.sql": PLAIN,
            "plain_view.sql": "select id + 1 as id from {{ ref('plain') }}",
            "events.sql": EVENTS,
            "reader.sql": READER,
            "parquet_events.sql": PARQUET_EVENTS,
            "logged.sql": LOGGED,
        }

    def test_auto_builds_iceberg_tables_in_the_default_catalog(self, project):
        run_dbt(["run", "--select", "items", "plain", "plain_view"])
        assert provider(project, "items") == "iceberg"
        view = project.run_sql(f"select id from {project.test_schema}.plain_view", fetch="all")
        assert [tuple(r) for r in view] == [(2,)]
        catalog = project.run_sql("set spark.sql.defaultCatalog", fetch="one")[1]
        assert catalog == "jammi_rest"
        found = project.run_sql(f"select id, name from {project.test_schema}.items", fetch="all")
        assert [tuple(r) for r in found] == [(1, "one")]

    def test_a_topic_publishes_and_is_consumed_in_iceberg_tables(self, project):
        schema = project.test_schema
        run_dbt(["run", "--select", "events", "--vars", "{batch: 1}"])
        run_dbt(["run", "--select", "events", "--vars", "{batch: 2}"])
        backing = project.run_sql(
            f"select backing_table from {schema}.topics where name = 'rest.events'", fetch="one"
        )[0]
        assert provider(project, "topics") == "iceberg"
        assert provider(project, backing) == "iceberg"
        stored = project.run_sql(
            f"select _offset, count(*), min(order_id) from {schema}.{backing} "
            "group by _offset order by _offset",
            fetch="all",
        )
        assert [tuple(r) for r in stored] == [(1, 3, 10), (2, 3, 20)]

        run_dbt(["run", "--select", "reader"])
        read = project.run_sql(
            f"select event_offset, count(*) from {schema}.reader group by event_offset order by 1",
            fetch="all",
        )
        assert [tuple(r) for r in read] == [(1, 3), (2, 3)]
        run_dbt(["run", "--select", "events", "--vars", "{batch: 3}"])
        run_dbt(["run", "--select", "reader"])  # only what it has not consumed
        read = project.run_sql(
            f"select event_offset, min(order_id) from {schema}.reader group by event_offset",
            fetch="all",
        )
        assert [tuple(r) for r in read] == [(3, 30)]
        assert provider(project, "topic_consumers") == "iceberg"

    def test_a_topic_in_another_format_is_refused_before_it_is_registered(self, project):
        results = run_dbt(["run", "--select", "parquet_events"], expect_pass=False)
        message = results.results[0].message
        assert "topic 'parquet_events': file_format 'parquet'" in message
        assert "Fix: set file_format: iceberg or auto" in message
        registered = project.run_sql(
            f"select count(*) from {project.test_schema}.topics "
            "where relation_name = 'parquet_events'",
            fetch="one",
        )
        assert registered[0] == 0

    def test_a_changelog_publishes_each_committed_version_once(self, project):
        schema = project.test_schema
        run_dbt(["run", "--select", "logged", "--vars", "{ids: [1, 2]}"])
        run_dbt(["run", "--select", "logged", "--vars", "{ids: [2, 3]}"])  # 2 is unchanged
        run_dbt(["run", "--select", "logged", "--vars", "{ids: [2, 3]}"])  # changes nothing
        backing = project.run_sql(
            f"select backing_table from {schema}.topics where relation_name = 'logged'",
            fetch="one",
        )[0]
        assert provider(project, backing) == "iceberg"
        events = project.run_sql(
            f"select _offset, change_kind, id from {schema}.{backing} order by 1, 3",
            fetch="all",
        )
        assert [tuple(r) for r in events] == [(1, "insert", 1), (1, "insert", 2), (2, "insert", 3)]

    def test_dropping_the_schema_drops_its_tables_first(self, project):
        run_dbt(["run", "--select", "items", "plain"])
        project.run_sql(f"create view {project.test_schema}.items_view as select 1 as id")
        relation = project.adapter.Relation.create(schema=project.test_schema)
        with project.adapter.connection_named("_drop"):
            project.adapter.drop_schema(relation)
        schemas = [r[0] for r in project.run_sql("show schemas", fetch="all")]
        assert project.test_schema not in schemas
        project.run_sql(f"create schema {project.test_schema}")  # for the class teardown
