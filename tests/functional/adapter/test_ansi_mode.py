"""ANSI SQL mode: Spark 4's default, optional on Spark 3.5.

Every materialization's generated SQL must give the same results with
`spark.sql.ansi.enabled` on and off (no non-ANSI casts, no overflow that ANSI turns into
an error), and the adapter must leave the setting as the user chose it.
"""

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import lane_ansi, lane_method

ANSI = "spark.sql.ansi.enabled"

# A version rule, a delete predicate, partial updates, a unique index and the encoding
# macros' casts.
KEYED = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v',
          partial_updates=true, delete_when="state = 'gone'",
          indexes=[{'name': 'by_sku', 'columns': ['sku'], 'unique': true}]) }}
{% set b = var('batch', 1) %}
select id, v, sku, state, label,
       {{ to_epoch_millis("cast('2024-01-02 03:04:05' as timestamp)") }} as seen_ms,
       {{ to_scaled_bigint("cast('12.345' as decimal(10, 3))", 2) }} as price_cents
from values
{% if b == 1 %} (1, 1, 'a', 'ok', 'one'), (2, 1, 'b', 'ok', 'two'), (3, 1, 'c', 'ok', 'three')
{% else %} (1, 2, 'a', 'ok', cast(null as string)), (2, 0, 'b', 'ok', 'stale'),
           (3, 2, 'c', 'gone', 'x'), (4, 1, 'd', 'ok', 'four')
{% endif %}
as t(id, v, sku, state, label)
"""

HISTORY = """
{{ config(materialized='mutable_table', primary_key=['item_id'], history='scd2') }}
{% set b = var('batch', 1) %}
select item_id, tier, cast(valid_from as bigint) as valid_from from values
{% if b == 1 %} (1, 'gold', 1000), (2, 'silver', 1000)
{% else %} (1, 'platinum', 2000), (1, 'tin', 1500)
{% endif %}
as t(item_id, tier, valid_from)
"""

EVENTS = """
{{ config(materialized='topic', topic_name=var('topic')) }}
select {{ var('batch', 1) }} * 10 + id as n from values (1), (2) as t(id)
"""

SEEN = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select n from {{ topic_events(ref('events')) }}
"""

MODELS = "keyed history events seen"


def ansi_setting(project) -> str:
    rows = project.run_sql(f"set {ANSI}", fetch="all")
    return str(rows[0][1]).lower()


@pytest.mark.skipif(
    lane_method() != "session", reason="sets the embedded session's SQL conf directly"
)
@pytest.mark.skipif(
    lane_ansi() is not None, reason="JAMMI_TEST_ANSI pins the mode this test switches"
)
class AnsiModeBase:
    ansi = ""

    @pytest.fixture(scope="class")
    def models(self):
        return {"keyed.sql": KEYED, "history.sql": HISTORY, "events.sql": EVENTS, "seen.sql": SEEN}

    def test_same_results_and_the_setting_is_left_alone(self, project):
        before = ansi_setting(project)
        project.run_sql(f"set {ANSI} = {self.ansi}")
        try:
            for batch in (1, 2):
                dbt_vars = f"{{batch: {batch}, topic: ansi_{self.ansi}.events}}"
                run_dbt(["run", "--select", MODELS, "--vars", dbt_vars])
                assert ansi_setting(project) == self.ansi, f"batch {batch} changed {ANSI}"
        finally:
            project.run_sql(f"set {ANSI} = {before}")
        schema = project.test_schema
        keyed = project.run_sql(
            f"select id, v, sku, label, seen_ms, price_cents from {schema}.keyed order by id",
            fetch="all",
        )
        history = project.run_sql(
            f"select item_id, tier, valid_from, valid_to from {schema}.history "
            "order by item_id, valid_from",
            fetch="all",
        )
        seen = project.run_sql(f"select n from {schema}.seen order by n", fetch="all")
        seen_ms, cents = 1704164645000, 1235
        assert [tuple(r) for r in keyed] == [
            (1, 2, "a", "one", seen_ms, cents),  # partial update keeps the label
            (2, 1, "b", "two", seen_ms, cents),  # older version ignored
            (4, 1, "d", "four", seen_ms, cents),  # 3 deleted, 4 inserted
        ]
        assert [tuple(r) for r in history] == [
            (1, "gold", 1000, 1500),
            (1, "tin", 1500, 2000),
            (1, "platinum", 2000, None),
            (2, "silver", 1000, None),
        ]
        assert [tuple(r) for r in seen] == [(11,), (12,), (21,), (22,)]


class TestAnsiModeOn(AnsiModeBase):
    ansi = "true"


class TestAnsiModeOff(AnsiModeBase):
    ansi = "false"
