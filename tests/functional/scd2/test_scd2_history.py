"""history: scd2 through dbt: exact intervals read back from Spark after each batch.

One class builds one dbt project; the batches are selected with the var `batch`.
"""

from __future__ import annotations

import time

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run

# item_id, price_tier, availability, valid_from (epoch ms); 'delisted' deletes the key.
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
          delete_when="availability = 'delisted'") }}
{% set b = var('batch', 1) %}
select item_id, price_tier, availability, cast(valid_from as bigint) as valid_from
from values
{% if b == 1 %}   (1, 'gold', 'in_stock', 1000), (2, 'silver', 'in_stock', 1000),
                  (3, 'bronze', 'in_stock', 1000)
{% elif b == 2 %} (1, 'platinum', 'in_stock', 2000), (2, 'silver', 'in_stock', 2000)
{% elif b == 3 %} (3, 'bronze', 'delisted', 3000)
{% elif b == 4 %} (3, 'bronze', 'in_stock', 4000)
{% elif b == 5 %} (1, 'gold', 'backorder', 1500)
{% elif b == 6 %} (2, 'copper', 'in_stock', 500)
{% elif b == 7 %} (2, 'gold', 'in_stock', 7000), (2, 'silver', 'backorder', 6000),
                  (2, 'bronze', 'in_stock', 8000), (2, 'bronze', 'in_stock', 9000)
{% elif b == 8 %} (1, 'gold', 'delisted', 1700)
{% elif b == 9 %} (1, 'gold', 'in_stock', 9000), (1, 'tin', 'in_stock', 9000)
{% endif %}
as t(item_id, price_tier, availability, valid_from)
"""

# No valid_from in the output: the run's time is the effective time.
RUN_TIME = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
          track_columns=['price_tier']) }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} (1, 'gold', 'in_stock'), (2, 'silver', 'in_stock')
{% elif b == 2 %} (1, 'gold', 'backorder'), (2, 'platinum', 'in_stock')
{% endif %}
as t(item_id, price_tier, availability)
"""

# Several rows for one key at one time: the highest version wins.
VERSIONED = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
          version_column='version') }}
{% set b = var('batch', 1) %}
select item_id, price_tier, cast(version as bigint) as version,
       cast(valid_from as bigint) as valid_from
from values
{% if b == 1 %} (1, 'gold', 1, 1000), (1, 'silver', 2, 1000), (1, 'bronze', 3, 2000)
{% elif b == 2 %} (1, 'tin', 1, 1000), (1, 'platinum', 5, 2000)
{% elif b == 3 %} (1, 'x', 7, 3000), (1, 'y', 7, 3000)
{% endif %}
as t(item_id, price_tier, version, valid_from)
"""

# The complete current set each run: absent keys close at the run's time.
SNAPSHOT = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2',
          hard_deletes='delete') }}
{% set b = var('batch', 1) %}
select item_id, price_tier, cast(valid_from as bigint) as valid_from from values
{% if b == 1 %} (1, 'gold', 1000), (2, 'silver', 1000)
{% elif b == 2 %} (1, 'gold', 2000)
{% endif %}
as t(item_id, price_tier, valid_from)
"""

# Bound runs (var jammi_tenant): each tenant keeps its own history of the same keys.
TENANT_ITEMS = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2') }}
{% set b = var('batch', 1) %}
select item_id, price_tier, cast(valid_from as bigint) as valid_from from values
{% if b == 1 %} (1, 'gold', 1000), (2, 'silver', 1000)
{% elif b == 2 %} (1, 'platinum', 2000)
{% elif b == 3 %} (1, 'copper', 500), (2, 'silver', 3000)
{% endif %}
as t(item_id, price_tier, valid_from)
"""


def history(project, table: str, columns: str = "item_id, price_tier, availability") -> list:
    return rows(
        project,
        f"select {columns}, valid_from, valid_to from {project.test_schema}.{table} "
        "order by item_id, valid_from",
    )


@pytest.mark.connection_agnostic
class TestScd2History(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "items.sql": ITEMS,
            "run_time_items.sql": RUN_TIME,
            "versioned_items.sql": VERSIONED,
            "snapshot_items.sql": SNAPSHOT,
            "tenant_items.sql": TENANT_ITEMS,
        }

    def test_batches(self, project):
        run(project, "items", {"batch": 1})
        assert history(project, "items") == [
            (1, "gold", "in_stock", 1000, None),
            (2, "silver", "in_stock", 1000, None),
            (3, "bronze", "in_stock", 1000, None),
        ]
        columns = [r[0] for r in rows(project, f"describe {project.test_schema}.items")]
        assert columns[:6] == [
            "item_id",
            "price_tier",
            "availability",
            "valid_from",
            "valid_to",
            "tenant_id",
        ]

        # a change closes the open interval and opens one; an unchanged row does nothing
        run(project, "items", {"batch": 2})
        after_change = [
            (1, "gold", "in_stock", 1000, 2000),
            (1, "platinum", "in_stock", 2000, None),
            (2, "silver", "in_stock", 1000, None),
            (3, "bronze", "in_stock", 1000, None),
        ]
        assert history(project, "items") == after_change
        run(project, "items", {"batch": 2})  # the same batch again: a no-op
        assert history(project, "items") == after_change

        # a delete closes the open interval and opens none
        run(project, "items", {"batch": 3})
        assert history(project, "items", "item_id, price_tier")[-1] == (3, "bronze", 1000, 3000)

        # re-insert after the delete opens a new interval
        run(project, "items", {"batch": 4})
        assert history(project, "items", "item_id, price_tier")[-2:] == [
            (3, "bronze", 1000, 3000),
            (3, "bronze", 4000, None),
        ]

        # a late change inside a closed interval splits it; later intervals stay
        run(project, "items", {"batch": 5})
        assert history(project, "items")[:3] == [
            (1, "gold", "in_stock", 1000, 1500),
            (1, "gold", "backorder", 1500, 2000),
            (1, "platinum", "in_stock", 2000, None),
        ]

        # a late change before the first interval ends where the first one starts
        run(project, "items", {"batch": 6})
        assert history(project, "items", "item_id, price_tier")[3:5] == [
            (2, "copper", 500, 1000),
            (2, "silver", 1000, None),
        ]

        # several changes to one key in one batch, in any output order: applied in
        # effective-time order (the last one, equal to its predecessor, changes nothing)
        run(project, "items", {"batch": 7})
        assert [r for r in history(project, "items") if r[0] == 2] == [
            (2, "copper", "in_stock", 500, 1000),
            (2, "silver", "in_stock", 1000, 6000),
            (2, "silver", "backorder", 6000, 7000),
            (2, "gold", "in_stock", 7000, 8000),
            (2, "bronze", "in_stock", 8000, None),
        ]

        # a late delete inside a closed interval ends it there; the gap stays a gap
        run(project, "items", {"batch": 8})
        assert [r for r in history(project, "items") if r[0] == 1] == [
            (1, "gold", "in_stock", 1000, 1500),
            (1, "gold", "backorder", 1500, 1700),
            (1, "platinum", "in_stock", 2000, None),
        ]

        # two different rows for one key at one effective time: a clear error, no write
        before = history(project, "items")
        result = run(project, "items", {"batch": 9}, expect_pass=False)
        message = result.results[0].message.lower()
        # the batch checks name the conflict (the planner's own assertion would too)
        assert "same key" in message or "same valid_from" in message
        assert history(project, "items") == before

        # the whole history satisfies the interval invariants
        assert rows(
            project,
            f"select count(*) from {project.test_schema}.items a "
            f"join {project.test_schema}.items b on a.item_id = b.item_id "
            "and a.valid_from < b.valid_from "
            "and (a.valid_to is null or a.valid_to > b.valid_from)",
        ) == [(0,)]

    @pytest.mark.smoke
    def test_run_time_is_the_effective_time(self, project):
        started = int(time.time() * 1000)
        run(project, "run_time_items", {"batch": 1})
        first = history(project, "run_time_items")
        assert [r[:3] + (r[4],) for r in first] == [
            (1, "gold", "in_stock", None),
            (2, "silver", "in_stock", None),
        ]
        t1 = first[0][3]
        assert first[1][3] == t1  # one time per run
        assert started - 120_000 <= t1 <= int(time.time() * 1000)

        # track_columns=[price_tier]: an availability change alone opens no interval
        run(project, "run_time_items", {"batch": 2})
        second = history(project, "run_time_items")
        assert len(second) == 3
        assert second[0] == (1, "gold", "in_stock", t1, None)
        assert second[1][:4] == (2, "silver", "in_stock", t1)
        t2 = second[1][4]
        assert t2 > t1
        assert second[2] == (2, "platinum", "in_stock", t2, None)

    def test_version_column_resolves_equal_times(self, project):
        run(project, "versioned_items", {"batch": 1})
        columns = "item_id, price_tier, version"
        assert history(project, "versioned_items", columns) == [
            (1, "silver", 2, 1000, 2000),
            (1, "bronze", 3, 2000, None),
        ]
        # a lower version at a stored time is ignored, a higher one replaces the row
        run(project, "versioned_items", {"batch": 2})
        assert history(project, "versioned_items", columns) == [
            (1, "silver", 2, 1000, 2000),
            (1, "platinum", 5, 2000, None),
        ]
        # equal highest versions with different values: an error, nothing written
        run(project, "versioned_items", {"batch": 3}, expect_pass=False)
        assert len(history(project, "versioned_items", columns)) == 2

    def test_hard_deletes_close_absent_keys(self, project):
        run(project, "snapshot_items", {"batch": 1})
        started = int(time.time() * 1000)
        run(project, "snapshot_items", {"batch": 2})
        stored = history(project, "snapshot_items", "item_id, price_tier")
        assert stored[0] == (1, "gold", 1000, None)  # unchanged at 2000: nothing
        assert stored[1][:3] == (2, "silver", 1000)
        assert started - 120_000 <= stored[1][3] <= int(time.time() * 1000)
        assert len(stored) == 2

    def test_tenant_scoped_history(self, project):
        columns = "tenant_id, item_id, price_tier"

        def stored():
            return rows(
                project,
                f"select {columns}, valid_from, valid_to from {project.test_schema}."
                "tenant_items order by tenant_id, item_id, valid_from",
            )

        run(project, "tenant_items", {"batch": 1, "jammi_tenant": "acme"})
        run(project, "tenant_items", {"batch": 1, "jammi_tenant": "globex"})
        run(project, "tenant_items", {"batch": 2, "jammi_tenant": "acme"})
        globex = [("globex", 1, "gold", 1000, None), ("globex", 2, "silver", 1000, None)]
        assert stored() == [
            ("acme", 1, "gold", 1000, 2000),
            ("acme", 1, "platinum", 2000, None),
            ("acme", 2, "silver", 1000, None),
            *globex,
        ]
        # globex: a late change and a no-op touch only globex's history
        run(project, "tenant_items", {"batch": 3, "jammi_tenant": "globex"})
        assert stored() == [
            ("acme", 1, "gold", 1000, 2000),
            ("acme", 1, "platinum", 2000, None),
            ("acme", 2, "silver", 1000, None),
            ("globex", 1, "copper", 500, 1000),
            *globex,
        ]
