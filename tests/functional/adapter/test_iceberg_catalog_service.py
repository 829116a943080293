"""An Iceberg catalog service as the session's default catalog (the Iceberg lane's REST
slice, scripts/iceberg_lane.py --rest; docs/formats.md, "An Iceberg catalog service"):
`file_format: auto` builds Iceberg tables there, dbt's schema drop empties the namespace
first (a REST catalog drops only empty ones), and a topic or a changelog is refused before
anything is written (its claims are partitions of the session catalog)."""

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
{{ config(materialized='topic') }}
select 1 as order_id
"""

LOGGED = """
{{ config(materialized='mutable_table', primary_key=['id'], changelog=true) }}
select 1 as id
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

    def test_a_topic_is_refused_before_anything_is_written(self, project):
        before = tables(project, project.test_schema)
        results = run_dbt(["run", "--select", "events"], expect_pass=False)
        message = results.results[0].message
        assert "topic 'events': the session's default catalog is 'jammi_rest'" in message
        assert "Fix: build topics from a session whose default catalog is spark_catalog" in message
        assert tables(project, project.test_schema) == before

    def test_a_changelog_is_refused_before_anything_is_written(self, project):
        # a changelog is a topic (rules/changelog_phases.py check_catalog)
        before = tables(project, project.test_schema)
        results = run_dbt(["run", "--select", "logged"], expect_pass=False)
        message = results.results[0].message
        assert "mutable_table 'logged': changelog: true publishes to a topic" in message
        assert "default catalog is 'jammi_rest'" in message
        assert "Fix: turn changelog off" in message
        assert tables(project, project.test_schema) == before

    def test_dropping_the_schema_drops_its_tables_first(self, project):
        run_dbt(["run", "--select", "items", "plain"])
        project.run_sql(f"create view {project.test_schema}.items_view as select 1 as id")
        relation = project.adapter.Relation.create(schema=project.test_schema)
        with project.adapter.connection_named("_drop"):
            project.adapter.drop_schema(relation)
        schemas = [r[0] for r in project.run_sql("show schemas", fetch="all")]
        assert project.test_schema not in schemas
        project.run_sql(f"create schema {project.test_schema}")  # for the class teardown
