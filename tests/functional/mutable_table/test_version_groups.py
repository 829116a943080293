"""version_groups (docs/mutable_table.md#version-groups): each group of columns changes
only for a newer version of its own, whatever order the writers' batches arrive in; a
NULL group version leaves the group alone; deletes follow version_column. Runs on the
lane's format."""

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

# var rows: [[id, status, order_ver, carrier, ship_ver, ver, op]]; op 'd' deletes
ORDERS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          delete_when="op = 'd'", rule_columns=['op'], partial_updates=['carrier'],
          version_groups={'order_ver': ['status'], 'ship_ver': ['carrier']}) }}
select id, status, order_ver, carrier, ship_ver, ver, op from values
{% for r in var('rows', [[0, none, none, none, none, 0, 'x']]) %}
  ({{ r[0] }}, {{ "'" ~ r[1] ~ "'" if r[1] is not none else 'cast(null as string)' }},
   cast({{ r[2] if r[2] is not none else 'null' }} as int),
   {{ "'" ~ r[3] ~ "'" if r[3] is not none else 'cast(null as string)' }},
   cast({{ r[4] if r[4] is not none else 'null' }} as int), {{ r[5] }}L,
   '{{ r[6] }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, status, order_ver, carrier, ship_ver, ver, op)
where op <> 'x'
"""

# no version_column: every value column in a group; [[id, a, a_ver, b, b_ver]]
PAIRS = """
{{ config(materialized='mutable_table', primary_key=['id'],
          version_groups={'a_ver': ['a'], 'b_ver': ['b']}) }}
select id, a, a_ver, b, b_ver from values
{% for r in var('pairs', [[0, '', 0, '', 0]]) %}
  ({{ r[0] }}, '{{ r[1] }}', cast({{ r[2] if r[2] is not none else 'null' }} as int),
   '{{ r[3] }}', cast({{ r[4] if r[4] is not none else 'null' }} as int)){{ ',' if not loop.last }}
{% endfor %}
as t(id, a, a_ver, b, b_ver)
where id > 0
"""

# with its changelog: each change carries the stored row before it
LOGGED = ORDERS.replace("rule_columns=", "changelog=true, rule_columns=")

# a merge function in a group: [[id, parcels, ship_ver, status, order_ver, ver]]
COUNTED = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          merge_functions={'parcels': 'sum'},
          version_groups={'ship_ver': ['parcels'], 'order_ver': ['status']}) }}
select id, parcels, ship_ver, status, order_ver, ver from values
{% for r in var('counted', [[0, 0, 0, '', 0, 0]]) %}
  ({{ r[0] }}, cast({{ r[1] if r[1] is not none else 'null' }} as int),
   cast({{ r[2] if r[2] is not none else 'null' }} as int), '{{ r[3] }}',
   cast({{ r[4] if r[4] is not none else 'null' }} as int), {{ r[5] }}L){{ ',' if not loop.last }}
{% endfor %}
as t(id, parcels, ship_ver, status, order_ver, ver)
where id > 0
"""

# with truncates: op 't' empties the table at its ver (its id may be NULL)
TRUNCATED = ORDERS.replace(
    "delete_when=\"op = 'd'\",", "delete_when=\"op = 'd'\", truncate_when=\"op = 't'\","
).replace("({{ r[0] }},", "(cast({{ r[0] if r[0] is not none else 'null' }} as int),")

CASES = ("writers", "deletes", "ambiguous")
STORED = "id, status, order_ver, carrier, ship_ver, ver"


def response(results, node):
    return next(r for r in results.results if r.node.name == node).adapter_response


class TestVersionGroups(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        cases = {f"{case}.sql": ORDERS for case in CASES}
        return {
            **cases,
            "logged.sql": LOGGED,
            "truncated.sql": TRUNCATED,
            "pairs.sql": PAIRS,
            "counted.sql": COUNTED,
        }

    @pytest.mark.spark4_path
    def test_each_writer_changes_its_own_columns_in_its_own_order(self, project):
        run(project, "writers", {"rows": [[1, "placed", 1, None, None, 10, "u"]]})
        # the shipping writer: its group only (status NULL at a NULL order_ver is kept)
        run(project, "writers", {"rows": [[1, None, None, "ups", 5, 12, "u"]]})
        # a late order change: older by ver, newer by order_ver -- status changes, ver not
        run(project, "writers", {"rows": [[1, "paid", 2, None, None, 9, "u"]]})
        # a stale shipping change (ship_ver 4 < 5) changes no group; ver is newer
        run(project, "writers", {"rows": [[1, None, None, "fedex", 4, 13, "u"]]})
        assert table_rows(project, "writers", STORED) == [(1, "paid", 2, "ups", 5, 13)]
        # a newer ship_ver with a NULL carrier: partial_updates keeps the carrier
        run(project, "writers", {"rows": [[1, None, None, None, 6, 14, "u"]]})
        assert table_rows(project, "writers", STORED) == [(1, "paid", 2, "ups", 6, 14)]
        # two writers in one batch, each row's groups at their own versions
        both = {
            "rows": [
                [2, None, None, "dhl", 3, 21, "u"],
                [2, "placed", 1, None, None, 20, "u"],
                [2, "old", 0, "old", 2, 19, "u"],
            ]
        }
        run(project, "writers", both)
        assert table_rows(project, "writers", STORED)[1] == (2, "placed", 1, "dhl", 3, 21)
        # the same batch again changes nothing
        again = response(run(project, "writers", both), "writers")
        assert (again["rows_inserted"], again["rows_updated"], again["rows_deleted"]) == (0, 0, 0)

    def test_deletes_follow_the_version_column(self, project):
        run(
            project,
            "deletes",
            {
                "rows": [
                    [1, "placed", 1, "ups", 1, 10, "u"],
                    [2, "placed", 1, "ups", 1, 10, "u"],
                    [3, "placed", 1, "ups", 1, 10, "u"],
                ]
            },
        )
        # 1 deleted at 20; a late group change (ver 19) of it stays out
        run(project, "deletes", {"rows": [[1, None, None, None, None, 20, "d"]]})
        run(project, "deletes", {"rows": [[1, "late", 9, "late", 9, 19, "u"]]})
        # 2: deleted and written again in one batch -- it starts afresh (no carrier)
        # 3: a stale delete (ver 5 < 10), then a newer order change: the carrier stays
        run(
            project,
            "deletes",
            {
                "rows": [
                    [2, None, None, None, None, 30, "d"],
                    [2, "again", 1, None, None, 31, "u"],
                    [2, "gone", 5, "gone", 5, 29, "u"],
                    [3, None, None, None, None, 5, "d"],
                    [3, "paid", 2, None, None, 11, "u"],
                ]
            },
        )
        assert table_rows(project, "deletes", STORED) == [
            (2, "again", 1, None, None, 31),
            (3, "paid", 2, "ups", 1, 11),
        ]

    def test_two_different_rows_at_one_group_version_are_refused(self, project):
        run(project, "ambiguous", {"rows": [[1, "placed", 1, None, None, 10, "u"]]})
        clash = {"rows": [[1, "a", 2, None, None, 11, "u"], [1, "b", 2, None, None, 12, "u"]]}
        result = run(project, "ambiguous", clash, expect_pass=False)
        message = result.results[0].message
        assert "two different rows of key (id=1) at the newest order_ver" in message
        assert "send one row per key and order_ver value" in message
        assert table_rows(project, "ambiguous", STORED) == [(1, "placed", 1, None, None, 10)]
        # identical rows are one change
        same = [1, "a", 2, None, None, 11, "u"]
        run(project, "ambiguous", {"rows": [same, same]})
        assert table_rows(project, "ambiguous", "status") == [("a",)]

    def test_without_a_version_column_the_groups_alone_order(self, project):
        run(project, "pairs", {"pairs": [[1, "a1", 1, "b1", 1]]})
        run(project, "pairs", {"pairs": [[1, "a0", 0, "b2", 2], [2, "x", None, "y", 1]]})
        assert table_rows(project, "pairs", "id, a, a_ver, b, b_ver") == [
            (1, "a1", 1, "b2", 2),
            (2, None, None, "y", 1),
        ]

    def test_the_changelog_carries_each_groups_previous_values(self, project):
        run(project, "logged", {"rows": [[1, "placed", 1, "ups", 1, 10, "u"]]})
        run(project, "logged", {"rows": [[1, "paid", 2, "dhl", 0, 9, "u"]]})
        backing = rows(
            project,
            f"select backing_table from {project.test_schema}.topics "
            "where relation_name = 'logged'",
        )[0][0]
        changes = rows(
            project,
            "select change_kind, status, previous_status, carrier, previous_carrier, ver "
            f"from {project.test_schema}.{backing} order by _offset",
        )
        assert changes == [
            ("insert", "placed", None, "ups", None, 10),
            ("update", "paid", "placed", "ups", "ups", 10),
        ]

    def test_a_merge_function_combines_only_its_groups_newer_rows(self, project):
        stored = "id, parcels, ship_ver, status, order_ver, ver"
        run(project, "counted", {"counted": [[1, 2, 1, "placed", 1, 10]]})
        two = {"counted": [[1, 3, 2, "", None, 11], [1, 1, 3, "", None, 12]]}
        run(project, "counted", two)
        assert table_rows(project, "counted", stored) == [(1, 6, 3, "placed", 1, 12)]
        # re-sent, and a stale shipping change: nothing is added again
        run(project, "counted", two)
        run(project, "counted", {"counted": [[1, 5, 1, "", None, 13]]})
        # the order writer's change leaves the parcels as they are
        run(project, "counted", {"counted": [[1, None, None, "paid", 2, 14]]})
        assert table_rows(project, "counted", stored) == [(1, 6, 3, "paid", 2, 14)]

    def test_a_truncate_ends_every_group_and_later_rows_start_afresh(self, project):
        run(
            project,
            "truncated",
            {
                "rows": [
                    [1, "placed", 1, "ups", 1, 10, "u"],
                    [2, "placed", 1, "ups", 1, 10, "u"],
                ]
            },
        )
        # a truncate at ver 20; 2's order change at 25 comes after it: 2 starts afresh
        truncate = [None, None, None, None, None, 20, "t"]
        run(project, "truncated", {"rows": [truncate, [2, "paid", 2, None, None, 25, "u"]]})
        assert table_rows(project, "truncated", STORED) == [(2, "paid", 2, None, None, 25)]
        # a late change of 1 from before the truncate stays out, a group change included
        run(project, "truncated", {"rows": [[1, "late", 9, "late", 9, 15, "u"]]})
        assert table_rows(project, "truncated", STORED) == [(2, "paid", 2, None, None, 25)]
