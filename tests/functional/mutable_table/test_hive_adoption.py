"""A Hive-format table (text, or parquet under a Hive SerDe) becomes a mutable table:
its rows are rewritten once as the lane's format under a new location, the Hive table
is kept, renamed, with every row and file, and a run stopped between the rewrite's
statements is completed by the next (docs/mutable_table.md#existing-relations)."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table import hive_adoption
from tests.functional.mutable_table.util import (
    MutableProjectBase,
    properties,
    rows,
    run,
    table_exists,
    table_rows,
)

ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v') }}
select * from values {{ var('rows', '(0, \\'\\', 0)') }} as t(id, name, v) where id > 0
"""

# the format given: a Hive table's rows rewritten as orc, whatever the session's auto
TO_ORC = ITEMS.replace("version_column='v'", "version_column='v', file_format='orc'")

CASES = ("text", "serde", "dupes", "stopped_1", "stopped_2")
STORED = {
    "text": "stored as textfile",
    "serde": "stored as parquet",
    "dupes": "stored as textfile",
    "stopped_1": "stored as textfile",
    "stopped_2": "stored as textfile",
    "to_orc": "stored as orc",
}


def hive_table(project, name: str, values: str) -> str:
    relation = f"{project.test_schema}.{name}"
    project.run_sql(f"create table {relation} (id int, name string, v bigint) {STORED[name]}")
    project.run_sql(f"insert into {relation} values {values}")
    return relation


def provider(project, relation: str) -> str:
    found = rows(project, f"describe table extended {relation}")
    return next(str(r[1]).strip().lower() for r in found if str(r[0]).strip() == "Provider")


def location(project, relation: str) -> str:
    found = rows(project, f"describe table extended {relation}")
    return next(str(r[1]).strip() for r in found if str(r[0]).strip() == "Location")


class TestHiveAdoption(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {**{f"{case}.sql": ITEMS for case in CASES}, "to_orc.sql": TO_ORC}

    @pytest.mark.parametrize("case", ["text", "serde"])
    def test_a_hive_table_is_rewritten_once_and_kept(self, project, fmt, case):
        relation = hive_table(project, case, "(1, 'one', 1), (2, 'two', 1)")
        assert provider(project, relation) == "hive"
        hive_files = location(project, relation)
        # 1 is older than its stored row, 2 newer, 3 new
        run(project, case, {"rows": "(1, 'old', 0), (2, 'two+', 2), (3, 'three', 1)"})
        assert table_rows(project, case, "id, name, v, tenant_id") == [
            (1, "one", 1, None),
            (2, "two+", 2, None),
            (3, "three", 1, None),
        ]
        assert properties(project, case)["jammi.file_format"] == fmt
        assert provider(project, relation) == fmt
        assert location(project, relation) != hive_files
        # the Hive table, renamed, keeps every row it had
        kept = hive_adoption.kept_name(relation)
        assert provider(project, kept) == "hive"
        assert rows(project, f"select id, name, v from {kept} order by 1") == [
            (1, "one", 1),
            (2, "two", 1),
        ]
        assert not table_exists(project, f"{case}{hive_adoption.ADOPTING_SUFFIX}")
        # and it goes on as a mutable table; the same batch again changes nothing
        again = run(project, case, {"rows": "(3, 'three', 1)"})
        reported = again.results[0].adapter_response
        assert (reported["rows_inserted"], reported["rows_updated"]) == (0, 0)

    def test_null_or_duplicate_keys_are_refused_untouched(self, project):
        relation = hive_table(project, "dupes", "(1, 'a', 1), (1, 'b', 1), (null, 'c', 1)")
        result = run(project, "dupes", {"rows": "(3, 'x', 1)"}, expect_pass=False)
        message = result.results[0].message
        assert "NULL or duplicate primary keys" in message
        assert provider(project, relation) == "hive"
        assert rows(project, f"select count(*) from {relation}") == [(3,)]
        assert not table_exists(project, f"dupes{hive_adoption.KEPT_SUFFIX}")
        assert not table_exists(project, f"dupes{hive_adoption.ADOPTING_SUFFIX}")

    @pytest.mark.parametrize("stopped_after", [1, 2])
    def test_a_run_stopped_inside_the_rewrite_is_completed_by_the_next(
        self, project, fmt, stopped_after
    ):
        case = f"stopped_{stopped_after}"
        relation = hive_table(project, case, "(1, 'one', 1), (2, 'two', 1)")
        conversion = hive_adoption.HiveConversion(
            relation=relation,
            file_format=fmt,
            location=hive_adoption.new_location(location(project, relation), "stopped"),
            add_tenant=True,
        )
        # what a run killed after its first (or second) rewrite statement leaves
        for sql in conversion.statements()[:stopped_after]:
            project.run_sql(sql)
        assert table_exists(project, case) == (stopped_after == 1)
        run(project, case, {"rows": "(3, 'three', 1)"})
        assert table_rows(project, case, "id, name, v") == [
            (1, "one", 1),
            (2, "two", 1),
            (3, "three", 1),
        ]
        assert properties(project, case)["jammi.file_format"] == fmt
        kept = hive_adoption.kept_name(relation)
        assert rows(project, f"select count(*) from {kept}") == [(2,)]
        assert not table_exists(project, f"{case}{hive_adoption.ADOPTING_SUFFIX}")

    def test_a_hive_table_becomes_the_format_the_model_gives(self, project):
        relation = hive_table(project, "to_orc", "(1, 'one', 1)")
        run(project, "to_orc", {"rows": "(2, 'two', 1)"})
        assert provider(project, relation) == "orc"
        assert properties(project, "to_orc")["jammi.file_format"] == "orc"
        assert table_rows(project, "to_orc", "id, name") == [(1, "one"), (2, "two")]
        assert provider(project, hive_adoption.kept_name(relation)) == "hive"
