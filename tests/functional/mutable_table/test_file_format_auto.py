"""`file_format: auto` (the default) on a session with Delta Lake: mutable tables, their
scd2 history and topics are created as Delta tables and work there (the delta lane). On
a session whose catalog is Iceberg's and without Delta (the iceberg lane) mutable tables,
scd2 histories and topics are Iceberg tables (topic/registration.py).
On a session with neither, `auto` is parquet, which the default lane covers."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import file_format, registry_rows, rows, run, table_rows
from tests.functional.topic.fixtures import CDC_ORDERS_SQL, DELETED_ORDERS_SQL, registration

pytestmark = pytest.mark.skipif(
    file_format() not in ("delta", "iceberg"), reason="needs Delta Lake or Iceberg (their lanes)"
)
# what `auto` picks on the lane's session, for tables and topics alike
PICKED = file_format()

# no file_format anywhere: every model below is `auto`
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v') }}
select * from values
{% if var('batch', 1) == 1 %} (1, 'one', 1), (2, 'two', 1)
{% else %} (1, 'stale', 0), (2, 'TWO', 2), (3, 'three', 1) {% endif %}
as t(id, label, v)
"""

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku'], history='scd2') }}
select * from values
{% if var('batch', 1) == 1 %} ('a', 10), ('b', 20) {% else %} ('a', 11) {% endif %}
as t(sku, price)
"""


def provider(project, table: str) -> str:
    """The table's provider as the catalog reports it (delta, iceberg, parquet)."""
    described = rows(project, f"describe table extended {project.test_schema}.{table}")
    return next(str(r[1]).strip().lower() for r in described if str(r[0]).strip() == "Provider")


class TestFileFormatAuto:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "items.sql": ITEMS,
            "prices.sql": PRICES,
            "cdc_orders.sql": CDC_ORDERS_SQL,
            "deleted_orders.sql": DELETED_ORDERS_SQL,
        }

    def test_mutable_table_is_picked_and_applies_by_key(self, project):
        run(project, "items", {"batch": 1})
        run(project, "items", {"batch": 2})
        assert provider(project, "items") == PICKED
        assert registry_rows(project, "items") == [("items", PICKED)]
        # the stale version of id 1 is ignored, id 2 updated, id 3 inserted
        assert table_rows(project, "items", "id, label") == [(1, "one"), (2, "TWO"), (3, "three")]

    def test_scd2_history_is_picked_and_closes_versions(self, project):
        run(project, "prices", {"batch": 1})
        run(project, "prices", {"batch": 2})
        assert provider(project, "prices") == PICKED
        history = table_rows(
            project, "prices", "sku, price, valid_to is null", "sku, valid_from, price"
        )
        assert history == [("a", 10, False), ("a", 11, True), ("b", 20, True)]

    def test_topic_is_stored_and_its_consumer_reads_only_new_events(self, project):
        schema = project.test_schema
        for batch in (1, 2, 3):
            run_dbt(
                ["run", "--select", "cdc_orders", "deleted_orders", "--vars", f"{{batch: {batch}}}"]
            )
        _, _, backing = registration(schema)
        assert provider(project, backing) == PICKED
        deleted = rows(
            project,
            f"select event_offset, order_id from {schema}.deleted_orders order by 1, 2",
        )
        assert deleted == [(2, 1), (3, 2), (3, 3)]
