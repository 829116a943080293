"""rule_columns (docs/mutable_table.md#rule-columns): columns the rules read that the
table does not store. ``op`` (read by delete_when and truncate_when) and ``org`` (read
by tenant_from) are not columns of the table; a version column listed there is kept as
``_jammi_version_<name>``, so a late, older change is still ignored. Runs on the lane's
format."""

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run, table_rows

# var rows: [[id, name, ver, op]]; op 'd' deletes the key, 't' truncates
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          delete_when="op = 'd'", truncate_when="op = 't'", rule_columns=['op', 'ver']) }}
select id, name, ver, op from values
{% for id, name, ver, op in var('rows', [[0, '', 0, 'x']]) %}
  (cast({{ id if id is not none else 'null' }} as int), '{{ name }}',
   {{ ver }}L, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, ver, op)
where op <> 'x'
"""

# a topic consumer's version: [[id, name, event_offset, event_row_idx, org]]
EVENTS = """
{{ config(materialized='mutable_table', primary_key=['id'], tenant_from='org',
          version_column=['event_offset', 'event_row_idx'],
          rule_columns=['event_offset', 'event_row_idx', 'org']) }}
select id, name, event_offset, event_row_idx, org from values
{% for id, name, event_offset, row_idx, org in var('events', [[0, '', 0, 0, 'x']]) %}
  ({{ id }}, '{{ name }}', {{ event_offset }}L, {{ row_idx }},
   '{{ org }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, event_offset, event_row_idx, org)
where org <> 'x'
"""

# with its changelog: the changes carry the stored columns
LOGGED = ITEMS.replace("rule_columns=", "changelog=true, rule_columns=").replace(
    "'rows'", "'logged_rows'"
)

# the same table, its model later lists a stored column in rule_columns
LATER = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          rule_columns=var('later_rule_columns', [])) }}
select * from values (1, 'one', 1L, 'n') as t(id, name, ver, note)
"""


def columns(project, table):
    return [r[0] for r in rows(project, f"describe {project.test_schema}.{table}")][:4]


class TestRuleColumns(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": ITEMS, "events.sql": EVENTS, "later.sql": LATER, "logged.sql": LOGGED}

    @pytest.mark.spark4_path
    def test_rule_columns_are_read_not_stored(self, project):
        run(
            project,
            "items",
            {"rows": [[1, "one", 1, "c"], [2, "two", 1, "c"], [3, "three", 2, "c"]]},
        )
        assert columns(project, "items") == ["id", "name", "_jammi_version_ver", "tenant_id"]
        # a delete, a late older change, a newer one
        run(project, "items", {"rows": [[1, "", 5, "d"], [2, "two+", 4, "u"]]})
        run(
            project,
            "items",
            {"rows": [[1, "late", 3, "u"], [2, "old", 2, "u"], [3, "three+", 3, "u"]]},
        )
        assert table_rows(project, "items", "id, name, _jammi_version_ver") == [
            (2, "two+", 4),
            (3, "three+", 3),
        ]
        # a truncate at 6 ends both; 3's change at 7 comes after it
        run(project, "items", {"rows": [[None, "", 6, "t"], [3, "three++", 7, "u"]]})
        run(project, "items", {"rows": [[2, "late", 5, "u"]]})
        assert table_rows(project, "items", "id, name") == [(3, "three++")]

    def test_a_version_list_and_the_tenant_column_are_not_stored(self, project):
        run(
            project,
            "events",
            {
                "events": [
                    [1, "a", 10, 0, "acme"],
                    [1, "b", 10, 1, "acme"],
                    [2, "c", 10, 2, "globex"],
                ]
            },
        )
        assert columns(project, "events") == [
            "id",
            "name",
            "_jammi_version_event_offset",
            "_jammi_version_event_row_idx",
        ]
        # an older event (offset 9) changes nothing; a later one does
        run(project, "events", {"events": [[1, "old", 9, 5, "acme"], [2, "d", 11, 0, "globex"]]})
        found = rows(
            project, f"select tenant_id, id, name from {project.test_schema}.events order by 1, 2"
        )
        assert found == [("acme", 1, "b"), ("globex", 2, "d")]

    def test_listing_a_stored_column_later_is_refused_without_sync(self, project):
        run(project, "later")
        result = run(project, "later", {"later_rule_columns": ["note"]}, expect_pass=False)
        message = result.results[0].message
        assert "rule_columns lists note, which the stored table holds" in message
        assert "on_schema_change: sync_all_columns" in message
        moved = run(project, "later", {"later_rule_columns": ["ver"]}, expect_pass=False)
        assert "kept as _jammi_version_ver" in moved.results[0].message
        assert columns(project, "later") == ["id", "name", "ver", "note"]

    def test_the_changelog_names_the_version_as_the_model_does(self, project):
        run(project, "logged", {"logged_rows": [[1, "one", 1, "c"]]})
        run(project, "logged", {"logged_rows": [[1, "one+", 2, "u"], [1, "late", 1, "u"]]})
        backing = rows(
            project,
            f"select backing_table from {project.test_schema}.topics "
            "where relation_name = 'logged'",
        )[0][0]
        changes = rows(
            project,
            f"select change_kind, id, name, ver, previous_ver from "
            f"{project.test_schema}.{backing} order by _offset",
        )
        assert changes == [("insert", 1, "one", 1, None), ("update", 1, "one+", 2, 1)]
        names = [r[0] for r in rows(project, f"describe {project.test_schema}.{backing}")]
        assert "op" not in names and "_jammi_version_ver" not in names
