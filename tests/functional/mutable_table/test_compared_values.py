"""A value holding a map is compared by its JSON text (mutable_table/compared_values.py)
with every microsecond of a timestamp in it: a map timestamp that moves by one
microsecond is a change, and two re-delivered rows that differ only so are two rows,
not one."""

from __future__ import annotations

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, rows, run

STAMPS = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select 1 as id, map('seen', timestamp'{{ var("at") }}') as marks,
  array(map('seen', timestamp'{{ var("at") }}')) as history
"""

TWICE = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v') }}
select 1 as id, 1 as v, map('seen', timestamp'2024-01-02 03:04:05.000001') as marks
union all
select 1 as id, 1 as v, map('seen', timestamp'2024-01-02 03:04:05.000002') as marks
"""

AT = "2024-01-02 03:04:05.00000{}"


class TestMapTimestampsToTheMicrosecond(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"stamps.sql": STAMPS, "twice.sql": TWICE}

    def stored(self, project):
        found = rows(
            project,
            "select cast(marks['seen'] as string), cast(history[0]['seen'] as string) "
            f"from {project.test_schema}.stamps",
        )
        return found[0]

    def test_a_microsecond_in_a_map_is_a_change(self, project):
        first = run(project, "stamps", {"at": AT.format(1)})
        assert first.results[0].message.startswith("INSERT 1")
        moved = run(project, "stamps", {"at": AT.format(2)})
        assert moved.results[0].message == "INSERT 0, UPDATE 1, DELETE 0"
        assert self.stored(project) == (AT.format(2), AT.format(2))
        again = run(project, "stamps", {"at": AT.format(2)})
        assert again.results[0].message == "INSERT 0, UPDATE 0, DELETE 0"

    def test_rows_a_microsecond_apart_are_not_collapsed_as_one(self, project):
        results = run(project, "twice", expect_pass=False)
        message = results.results[0].message
        assert "several rows for the same key with the same highest version_column" in message
