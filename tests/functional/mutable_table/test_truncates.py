"""Truncates (docs/mutable_table.md#truncates): a ``truncate_when`` row empties the run's
scope at its version. Stored keys older than it are deleted and keep tombstones, so a
late change from before the truncate stays ignored; keys newer than it are kept; batch
rows newer than it apply after it. Runs on the lane's format."""

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

# var rows: [[id, name, ver, op]]; op 'd' deletes the key, op 't' truncates (id may be NULL)
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          delete_when="op = 'd'", truncate_when="op = 't'") }}
select id, name, ver, op from values
{% for id, name, ver, op in var('rows', [[0, '', 0, 'x']]) %}
  (cast({{ id if id is not none else 'null' }} as int), '{{ name }}',
   {{ ver }}L, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, ver, op)
where op <> 'x'
"""

# a version rule of two columns, compared in order: [[id, name, batch_at, seq, op]]
PAIRS = """
{{ config(materialized='mutable_table', primary_key=['id'],
          version_column=['batch_at', 'seq'], truncate_when="op = 't'") }}
select id, name, batch_at, seq, op from values
{% for id, name, batch_at, seq, op in var('pair_rows', [[0, '', 0, 0, 'x']]) %}
  (cast({{ id if id is not none else 'null' }} as int), '{{ name }}',
   {{ batch_at }}L, {{ seq }}, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, batch_at, seq, op)
where op <> 'x'
"""

# the tenant of each row: [[tenant, id, name, ver, op]]
TENANTED = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          tenant_from='org', truncate_when="op = 't'") }}
select org, id, name, ver, op from values
{% for org, id, name, ver, op in var('tenant_rows', [['', 0, '', 0, 'x']]) %}
  ('{{ org }}',
   cast({{ id if id is not none else 'null' }} as int), '{{ name }}',
   {{ ver }}L, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(org, id, name, ver, op)
where op <> 'x'
"""


# history: scd2, the effective time in valid_from: [[id, tier, ver, valid_from, op]]
HISTORY = """
{{ config(materialized='mutable_table', primary_key=['id'], history='scd2',
          version_column='ver', truncate_when="op = 't'") }}
select id, tier, ver, valid_from, op from values
{% for id, tier, ver, at, op in var('history_rows', [[0, '', 0, 0, 'x']]) %}
  (cast({{ id if id is not none else 'null' }} as int), '{{ tier }}',
   {{ ver }}L, {{ at }}L, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, tier, ver, valid_from, op)
where op <> 'x'
"""

# one table per case (a truncate's tombstones outlive the case)
CASES = ("in_order", "newer", "late", "late_truncate", "redelivered", "delete_after")


def names(project, table):
    return table_rows(project, table, "id, name")


def response(results, node):
    return next(r for r in results.results if r.node.name == node).adapter_response


class TestTruncates(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        cases = {f"{case}.sql": ITEMS for case in CASES}
        return {
            **cases,
            "pairs.sql": PAIRS,
            "first_pairs.sql": PAIRS,
            "tenanted.sql": TENANTED,
            "history.sql": HISTORY,
        }

    @pytest.mark.spark4_path
    def test_in_order_a_truncate_empties_the_table_and_counts(self, project):
        run(
            project,
            "in_order",
            {"rows": [[1, "one", 1, ""], [2, "two", 1, ""], [3, "three", 2, ""]]},
        )
        results = run(project, "in_order", {"rows": [[None, "", 5, "t"]]})
        assert names(project, "in_order") == []
        reported = response(results, "in_order")
        assert reported["truncates"] == 1
        assert reported["rows_deleted"] == 3
        assert reported["rows_inserted"] == 0
        assert "TRUNCATE 1" in reported["_message"]

    def test_rows_newer_than_the_truncate_apply_after_it(self, project):
        run(project, "newer", {"rows": [[1, "one", 1, ""], [2, "two", 1, ""], [3, "three", 1, ""]]})
        # in one batch: a newer change of 1, an older one of 2 and a new key 4 before the
        # truncate, a new key 5 after it
        run(
            project,
            "newer",
            {
                "rows": [
                    [1, "one+", 7, ""],
                    [None, "", 5, "t"],
                    [2, "two+", 4, ""],
                    [4, "four", 3, ""],
                    [5, "five", 6, ""],
                ]
            },
        )
        assert table_rows(project, "newer", "id, name, ver") == [(1, "one+", 7), (5, "five", 6)]

    def test_late_older_changes_of_truncated_keys_stay_ignored(self, project):
        run(project, "late", {"rows": [[1, "one", 1, ""], [2, "two", 1, ""]]})
        run(project, "late", {"rows": [[None, "", 5, "t"]]})
        # older than the truncate, or at its version: ignored; newer: back
        run(project, "late", {"rows": [[1, "late", 4, ""], [2, "same", 5, ""]]})
        assert names(project, "late") == []
        run(project, "late", {"rows": [[2, "back", 6, ""]]})
        assert names(project, "late") == [(2, "back")]

    def test_a_late_truncate_keeps_keys_changed_after_it(self, project):
        # the truncate arrives after a change that is newer than it
        run(project, "late_truncate", {"rows": [[1, "one", 8, ""], [2, "two", 3, ""]]})
        run(project, "late_truncate", {"rows": [[None, "", 5, "t"]]})
        assert names(project, "late_truncate") == [(1, "one")]

    def test_a_redelivered_truncate_changes_nothing(self, project):
        run(project, "redelivered", {"rows": [[1, "one", 1, ""], [2, "two", 6, ""]]})
        batch = {"rows": [[None, "", 5, "t"], [3, "three", 7, ""]]}
        run(project, "redelivered", batch)
        assert names(project, "redelivered") == [(2, "two"), (3, "three")]
        again = response(run(project, "redelivered", batch), "redelivered")
        assert (again["rows_inserted"], again["rows_updated"], again["rows_deleted"]) == (0, 0, 0)
        assert names(project, "redelivered") == [(2, "two"), (3, "three")]

    def test_a_delete_after_the_truncate_and_the_newest_of_two_truncates(self, project):
        run(
            project,
            "delete_after",
            {"rows": [[1, "one", 1, ""], [2, "two", 4, ""], [3, "three", 9, ""]]},
        )
        run(
            project,
            "delete_after",
            {
                "rows": [
                    [None, "", 3, "t"],
                    [None, "", 5, "t"],
                    [3, "", 10, "d"],
                    [4, "four", 6, ""],
                ]
            },
        )
        # 1 and 2 are older than the newer truncate (5); 3's delete is newer than both
        assert names(project, "delete_after") == [(4, "four")]
        run(project, "delete_after", {"rows": [[2, "late", 4, ""], [3, "late", 9, ""]]})
        assert names(project, "delete_after") == [(4, "four")]

    def test_first_run_with_a_truncate(self, project):
        run(
            project,
            "first_pairs",
            {"pair_rows": [[1, "one", 1, 1, ""], [None, "", 1, 5, "t"], [2, "two", 1, 6, ""]]},
        )
        assert names(project, "first_pairs") == [(2, "two")]

    def test_two_column_version(self, project):
        run(project, "pairs", {"pair_rows": [[1, "one", 2, 1, ""], [3, "three", 3, 0, ""]]})
        # (2, 9) is newer than (2, 1) and older than (3, 0)
        run(project, "pairs", {"pair_rows": [[None, "", 2, 9, "t"]]})
        assert names(project, "pairs") == [(3, "three")]
        run(project, "pairs", {"pair_rows": [[1, "late", 2, 5, ""], [1, "late", 2, 9, ""]]})
        assert names(project, "pairs") == [(3, "three")]

    def test_a_bound_run_truncates_its_tenant_only(self, project):
        for tenant in ("acme", "globex"):
            run(
                project,
                "tenanted",
                {"tenant_rows": [[tenant, 1, tenant, 1, ""]], "jammi_tenant": tenant},
            )
        run(
            project,
            "tenanted",
            {"tenant_rows": [["acme", None, "", 5, "t"]], "jammi_tenant": "acme"},
        )
        found = rows(
            project, f"select tenant_id, id from {project.test_schema}.tenanted order by 1"
        )
        assert found == [("globex", 1)]
        # an unbound run speaks for every tenant: its truncate empties them all
        run(
            project,
            "tenanted",
            {"tenant_rows": [["acme", 2, "two", 6, ""], ["globex", None, "", 5, "t"]]},
        )
        found = rows(
            project, f"select tenant_id, id from {project.test_schema}.tenanted order by 1"
        )
        assert found == [("acme", 2)]

    def test_scd2_closes_every_open_interval_at_the_truncate_and_keeps_history(self, project):
        run(
            project,
            "history",
            {"history_rows": [[1, "gold", 1, 1000, ""], [2, "silver", 1, 1000, ""]]},
        )
        # a truncate at 3000 between a change of 1 before it and a new key after it
        run(
            project,
            "history",
            {
                "history_rows": [
                    [1, "platinum", 2, 2000, ""],
                    [None, "", 3, 3000, "t"],
                    [3, "bronze", 4, 4000, ""],
                ]
            },
        )
        intervals = table_rows(
            project, "history", "id, tier, valid_from, valid_to", "id, valid_from"
        )
        assert intervals == [
            (1, "gold", 1000, 2000),
            (1, "platinum", 2000, 3000),
            (2, "silver", 1000, 3000),
            (3, "bronze", 4000, None),
        ]
        # a late truncate, older than a key's last change, ends the interval open then
        run(project, "history", {"history_rows": [[None, "", 5, 3500, "t"]]})
        assert table_rows(project, "history", "id, valid_from, valid_to", "id, valid_from")[-1] == (
            3,
            4000,
            None,
        )
