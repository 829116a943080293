"""Deletes stay deleted (docs/mutable_table.md#deletes-stay-deleted): under a version
rule a delete leaves a tombstone, so a change of that key with a lower or equal version
that arrives later is ignored (no row, no changelog event) and a higher one brings the
key back; readers never see tombstones; they expire after tombstone_retention; rollback
and --full-refresh keep them consistent with the rows. Runs on the lane's format."""

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    location,
    rows,
    run,
    table_exists,
    table_rows,
)

# var rows: [[id, name, ver, op]]; op 'd' deletes the key
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          delete_when="op = 'd'", full_refresh=true,
          tombstone_retention=var('retention', '7d')) }}
select id, name, ver, op from values
{% for id, name, ver, op in var('rows', []) %}
  ({{ id }}, '{{ name }}', {{ ver }}L, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
{% if not var('rows', []) %} (0, '', 0L, '') {% endif %}
as t(id, name, ver, op)
{% if not var('rows', []) %} where false {% endif %}
"""

# the same with its changelog
LOGGED = ITEMS.replace("full_refresh=true", "changelog=true").replace("'rows'", "'logged_rows'")

# a version rule of two columns compared in order: [[id, name, batch_at, seq, op]]
PAIRS = """
{{ config(materialized='mutable_table', primary_key=['id'],
          version_column=['batch_at', 'seq'], delete_when="op = 'd'") }}
select id, name, batch_at, seq, op from values
{% for id, name, batch_at, seq, op in var('pair_rows', [[0, '', 0, 0, 'x']]) %}
  ({{ id }}, '{{ name }}', {{ batch_at }}L, {{ seq }}, '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, batch_at, seq, op)
where op <> 'x'
"""


def names(project, table="items"):
    return table_rows(project, table, "id, name")


def operation(name: str, args: str) -> str:
    _, output = run_dbt_and_capture(["run-operation", name, "--args", args])
    return output


def current_version(project, fmt, table="items") -> int:
    if fmt == "iceberg":  # the current snapshot
        return int(
            rows(
                project,
                f"select snapshot_id from {project.test_schema}.{table}.history "
                "where is_current_ancestor order by made_current_at desc limit 1",
            )[0][0]
        )
    if fmt == "delta":
        return max(
            int(r[0]) for r in rows(project, f"describe history {project.test_schema}.{table}")
        )
    return int(location(project, table).rsplit("/", 1)[-1][1:11])


class TestTombstones(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": ITEMS, "logged.sql": LOGGED, "pairs.sql": PAIRS}

    # spark4_path: the version comparison against tombstones under ANSI
    @pytest.mark.spark4_path
    def test_late_older_change_stays_deleted(self, project):
        run(project, "items", {"rows": [[1, "one", 1, ""], [2, "two", 1, ""]]})
        run(project, "items", {"rows": [[1, "", 3, "d"]]})
        assert names(project) == [(2, "two")]
        # a late change at a lower version, and one at the delete's own version
        run(project, "items", {"rows": [[1, "late", 2, ""]]})
        run(project, "items", {"rows": [[1, "same", 3, ""], [2, "two+", 2, ""]]})
        assert names(project) == [(2, "two+")]
        # a higher version brings the key back
        run(project, "items", {"rows": [[1, "back", 4, ""]]})
        assert table_rows(project, "items", "id, name, ver") == [(1, "back", 4), (2, "two+", 2)]

    def test_tombstones_are_invisible_to_readers(self, project, fmt):
        run(project, "items", {"rows": [[3, "three", 1, ""]]})
        run(project, "items", {"rows": [[3, "", 5, "d"]]})
        found = rows(project, f"select * from {project.test_schema}.items where id = 3")
        assert found == []
        columns = [r[0] for r in rows(project, f"describe {project.test_schema}.items")]
        assert columns[:5] == ["id", "name", "ver", "op", "tenant_id"]
        if fmt in ("delta", "iceberg"):
            assert table_exists(project, "items__jammi_tombstones")
            tombstones = rows(
                project, f"select id, ver from {project.test_schema}.items__jammi_tombstones"
            )
            assert (3, 5) in tombstones
        else:
            path = location(project, "items").replace("file:", "", 1)
            tombstones = rows(project, f"select id, ver from {fmt}.`{path}/_jammi_tombstones`")
            assert (3, 5) in tombstones

    # connection_agnostic: planner SQL; the late change, readers and rollback run over Thrift
    @pytest.mark.connection_agnostic
    def test_tombstones_expire_after_the_retention(self, project):
        run(project, "items", {"rows": [[4, "four", 1, ""]]})
        run(project, "items", {"rows": [[4, "", 3, "d"]]})
        run(project, "items", {"rows": [[4, "late", 2, ""]]})
        assert (4, "late") not in names(project)
        # a retention of 1 ms: the tombstone written by an earlier run has expired
        run(project, "items", {"rows": [[4, "late", 2, ""]], "retention": 1})
        assert (4, "late") in names(project)

    def test_rollback_restores_the_tombstones_of_its_version(self, project, fmt):
        run(project, "items", {"rows": [[5, "five", 1, ""]]})
        before_delete = current_version(project, fmt)
        run(project, "items", {"rows": [[5, "", 3, "d"]]})
        operation("rollback_mutable_table", f"{{model: items, to_version: {before_delete}}}")
        assert (5, "five") in names(project)
        # the restored version had no tombstone for key 5: a newer change than its row applies
        run(project, "items", {"rows": [[5, "five+", 2, ""]]})
        assert (5, "five+") in names(project)

    def test_a_tenant_bound_delete_stays_deleted_for_its_tenant_only(self, project):
        # a bound run commits its tombstones as an unbound one does (on Iceberg through
        # the run's branch); each tenant's keys keep their own tombstones
        for tenant in ("acme", "globex"):
            run(project, "items", {"rows": [[8, tenant, 1, ""]], "jammi_tenant": tenant})
        run(project, "items", {"rows": [[8, "", 3, "d"]], "jammi_tenant": "acme"})
        for tenant in ("acme", "globex"):
            run(project, "items", {"rows": [[8, "late", 2, ""]], "jammi_tenant": tenant})
        found = rows(
            project,
            f"select tenant_id, name from {project.test_schema}.items where id = 8 order by 1",
        )
        assert found == [("globex", "late")]

    def test_iceberg_clean_up_keeps_a_fresh_branch_and_drops_a_published_one(self, project, fmt):
        if fmt != "iceberg":
            pytest.skip("the run's branch is Iceberg's (commit/branch_commit.py)")
        table = f"{project.test_schema}.items"

        def run_branches():
            found = rows(project, f"select name from {table}.refs where name like 'jammi_run_%'")
            return sorted(r[0] for r in found)

        run(project, "items", {"rows": [[9, "nine", 1, ""]]})
        # a run in progress made its branch from the current snapshot a moment ago
        project.run_sql(f"alter table {table} create branch jammi_run_other")
        run(project, "items", {"rows": [[9, "", 3, "d"]]})
        assert run_branches() == ["jammi_run_other"]
        assert (9, "nine") not in names(project)
        # the table has moved past it: a published leftover, dropped by the next run
        run(project, "items", {"rows": [[9, "", 4, "d"]]})
        assert run_branches() == []

    # connection_agnostic: planner SQL; the late change, readers and rollback run over Thrift
    @pytest.mark.connection_agnostic
    def test_full_refresh_starts_without_tombstones(self, project):
        run(project, "items", {"rows": [[6, "six", 1, ""]]})
        run(project, "items", {"rows": [[6, "", 3, "d"]]})
        run_dbt(
            ["run", "--select", "items", "--full-refresh", "--vars", '{"rows": [[7, "x", 1, ""]]}']
        )
        run(project, "items", {"rows": [[6, "six again", 2, ""]]})
        assert names(project) == [(6, "six again"), (7, "x")]

    # connection_agnostic: planner SQL; the late change, readers and rollback run over Thrift
    @pytest.mark.connection_agnostic
    # spark4_path: a named_struct version comparison under ANSI
    @pytest.mark.spark4_path
    def test_two_column_version(self, project):
        run(project, "pairs", {"pair_rows": [[1, "a", 10, 1, ""]]})
        run(project, "pairs", {"pair_rows": [[1, "", 10, 5, "d"]]})
        run(project, "pairs", {"pair_rows": [[1, "late", 10, 4, ""]]})
        run(project, "pairs", {"pair_rows": [[1, "late", 9, 9, ""]]})
        assert names(project, "pairs") == []
        run(project, "pairs", {"pair_rows": [[1, "back", 11, 0, ""]]})
        assert names(project, "pairs") == [(1, "back")]

    # connection_agnostic: planner SQL; the late change, readers and rollback run over Thrift
    @pytest.mark.connection_agnostic
    def test_changelog_publishes_nothing_for_an_ignored_change(self, project):
        run(project, "logged", {"logged_rows": [[1, "one", 1, ""]]})
        run(project, "logged", {"logged_rows": [[1, "", 3, "d"]]})
        backing = rows(
            project,
            f"select backing_table from {project.test_schema}.topics "
            "where relation_name = 'logged'",
        )[0][0]
        events = f"select change_kind from {project.test_schema}.{backing} order by _offset"
        assert [r[0] for r in rows(project, events)] == ["insert", "delete"]
        run(project, "logged", {"logged_rows": [[1, "late", 2, ""]]})
        assert names(project, "logged") == []
        assert [r[0] for r in rows(project, events)] == ["insert", "delete"]
