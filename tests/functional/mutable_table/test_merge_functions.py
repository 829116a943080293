"""merge_functions: per-column combination with the stored value, batch-internal
aggregation, the version rule, deletes that restart a key, and the re-run rule."""

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    run,
    stored_definition,
    table_rows,
)

# a feature-store counter: clicks add up, first/last seen widen, the country is the
# first one ever seen, the plan the last one reported
COUNTERS = """
{{ config(materialized='mutable_table', primary_key=['user_id'], version_column='v',
          delete_when='gone',
          merge_functions={'clicks': 'sum', 'first_seen': 'min', 'last_seen': 'max',
                           'country': 'first', 'plan': 'last_non_null'}) }}
{% set b = var('batch', 1) %}
select user_id, v, clicks, first_seen, last_seen, country, plan, gone from values
{% if b == 1 %}
  ('u1', 1L, 2, 100L, 100L, 'de', 'free', false),
  ('u1', 2L, 3, 150L, 150L, 'fr', cast(null as string), false),
  ('u2', 1L, 1, 50L, 50L, cast(null as string), 'pro', false)
{% elif b == 3 %}
  ('u1', 2L, 100, 1L, 999L, 'xx', 'stale', false),
  ('u1', 3L, 1, 90L, 200L, 'us', 'pro', false),
  ('u2', 2L, 4, 60L, 40L, 'it', cast(null as string), false),
  ('u2', 3L, 0, 0L, 0L, cast(null as string), cast(null as string), true),
  ('u3', 1L, 7, 10L, 10L, 'se', 'free', false),
  ('u3', 2L, 0, 0L, 0L, cast(null as string), cast(null as string), true),
  ('u3', 3L, 1, 20L, 30L, 'no', 'pro', false)
{% elif b == 4 %}
  ('u1', 4L, 0, 0L, 0L, cast(null as string), cast(null as string), true),
  ('u1', 5L, 1, 300L, 300L, 'jp', cast(null as string), false),
  ('u2', 5L, 2, 10L, 10L, 'es', cast(null as string), false)
{% endif %}
as t(user_id, v, clicks, first_seen, last_seen, country, plan, gone)
"""

# without a version column: one row per key and batch; min/max/first need no version
SEEN = """
{{ config(materialized='mutable_table', primary_key=['id'],
          merge_functions={'low': 'min', 'high': 'max', 'origin': 'first'}) }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} (1, 5, 5, 'a'), (2, 1, 1, cast(null as string))
{% else %} (1, 3, 4, 'b'), (2, 9, 9, 'c')
{% endif %}
as t(id, low, high, origin)
"""

# a snapshot feed of counters: the batch is the complete set (hard_deletes: delete), so
# a stored key the batch lacks is deleted, and a key whose rows are all at or below its
# stored version is present, not absent
SNAPSHOT_COUNTERS = """
{{ config(materialized='mutable_table', primary_key=['k'], version_column='v',
          hard_deletes='delete', merge_functions={'n': 'sum', 'hi': 'max'}) }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} ('a', 1L, 2, 5), ('a', 2L, 3, 1), ('b', 1L, 1, 1)
{% else %} ('a', 2L, 100, 100), ('a', 3L, 4, 9), ('c', 1L, 7, 7)
{% endif %}
as t(k, v, n, hi)
"""

COLUMNS = "user_id, v, clicks, first_seen, last_seen, country, plan"


# spark4_path: sums (decimals, overflow) under ANSI
@pytest.mark.spark4_path
# connection_agnostic: the planner combines values; the same SQL on every connection
@pytest.mark.connection_agnostic
class TestMergeFunctions(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "counters.sql": COUNTERS,
            "seen.sql": SEEN,
            "snapshot_counters.sql": SNAPSHOT_COUNTERS,
        }

    def test_counters_combine_and_rerun_is_a_no_op(self, project):
        # rows of one key in one batch combine first: u1's two rows sum to 5
        run(project, "counters", {"batch": 1})
        first = [
            ("u1", 2, 5, 100, 150, "de", "free"),
            ("u2", 1, 1, 50, 50, None, "pro"),
        ]
        assert table_rows(project, "counters", COLUMNS) == first
        assert stored_definition(project, "counters")["merge_functions"]["clicks"] == "sum"

        # the same batch again: every row is at or below its key's stored version
        result = run(project, "counters", {"batch": 1})
        assert result.results[0].message == "INSERT 0, UPDATE 0, DELETE 0"
        assert table_rows(project, "counters", COLUMNS) == first

        # u1: the stale v2 row is ignored, v3 combines with the stored values;
        # u2: its newest row deletes it; u3: a delete inside the batch restarts the key,
        # so only its v3 row counts
        run(project, "counters", {"batch": 3})
        assert table_rows(project, "counters", COLUMNS) == [
            ("u1", 3, 6, 90, 200, "de", "pro"),
            ("u3", 3, 1, 20, 30, "no", "pro"),
        ]

        # u1 is deleted and written again in one batch: the stored values are dropped
        # (first/last_non_null start over); u2 comes back as a new key
        run(project, "counters", {"batch": 4})
        assert table_rows(project, "counters", COLUMNS) == [
            ("u1", 5, 1, 300, 300, "jp", None),
            ("u2", 5, 2, 10, 10, "es", None),
            ("u3", 3, 1, 20, 30, "no", "pro"),
        ]

    def test_functions_without_version_column(self, project):
        run(project, "seen", {"batch": 1})
        run(project, "seen", {"batch": 2})
        # first keeps a value once set; a NULL first value is filled by a later one
        assert table_rows(project, "seen", "id, low, high, origin") == [
            (1, 3, 5, "a"),
            (2, 1, 9, "c"),
        ]
        # min/max/first are idempotent: the same batch again changes nothing
        run(project, "seen", {"batch": 2})
        assert table_rows(project, "seen", "id, low, high, origin") == [
            (1, 3, 5, "a"),
            (2, 1, 9, "c"),
        ]

    def test_snapshot_feed_combines_deletes_absent_keys_and_reruns_as_a_no_op(self, project):
        run(project, "snapshot_counters", {"batch": 1})
        assert table_rows(project, "snapshot_counters", "k, v, n, hi") == [
            ("a", 2, 5, 5),
            ("b", 1, 1, 1),
        ]
        # a: its stale v2 row is ignored, v3 adds to the stored sum; b is absent: deleted;
        # c is new
        run(project, "snapshot_counters", {"batch": 2})
        after = [("a", 3, 9, 9), ("c", 1, 7, 7)]
        assert table_rows(project, "snapshot_counters", "k, v, n, hi") == after
        # the same snapshot again: every row is at or below its key's stored version, and
        # no key is absent, so nothing changes (nothing is deleted)
        result = run(project, "snapshot_counters", {"batch": 2})
        assert result.results[0].message == "INSERT 0, UPDATE 0, DELETE 0"
        assert table_rows(project, "snapshot_counters", "k, v, n, hi") == after
