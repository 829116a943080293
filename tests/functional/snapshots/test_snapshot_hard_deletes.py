"""dbt snapshots' `hard_deletes` (`ignore`, `invalidate`, `new_record`) and
`dbt_valid_to_current` under `type: jammi`, on Delta and on Iceberg (the delta and iceberg
lanes), for the timestamp and the check strategy (docs/snapshots.md).

The source loses rows 3 and 4 in its second batch and gets row 3 back, changed, in its
third; rows 2 and 5 never change. Two of the cases broke dbt-databricks:

- databricks/dbt-databricks#902: `new_record` with the check strategy over
  `check_cols: [id, name]` failed its MERGE when a row was deleted (several source rows
  matched one target row);
- databricks/dbt-databricks#1281: `invalidate` closed rows still in the source (2 and 5
  here), not only the deleted ones.
"""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.conftest import test_file_format
from tests.functional.mutable_table.util import rows

FORMAT = test_file_format()
pytestmark = pytest.mark.skipif(
    FORMAT not in ("delta", "iceberg"),
    reason="dbt snapshots need Delta or Iceberg (the delta and iceberg lanes)",
)

SOURCE = """
{{ config(materialized='table', file_format=var('format')) }}
{% set b = var('batch', 1) %}
select id, name, cast(updated_at as timestamp) as updated_at from values
{% if b == 1 %}
  (1, 'a', '2026-01-01'), (2, 'b', '2026-01-01'), (3, 'c', '2026-01-01'),
  (4, 'd', '2026-01-01'), (5, 'e', '2026-01-01')
{% elif b == 2 %}
  (1, 'a2', '2026-01-02'), (2, 'b', '2026-01-01'), (5, 'e', '2026-01-01')
{% else %}
  (1, 'a2', '2026-01-02'), (2, 'b', '2026-01-01'), (3, 'c3', '2026-01-03'),
  (5, 'e', '2026-01-01')
{% endif %}
as t(id, name, updated_at)
"""

MODES = ("ignore", "invalidate", "new_record")
STRATEGIES = {
    "timestamp": "strategy='timestamp', updated_at='updated_at'",
    "check": "strategy='check', check_cols=['id', 'name']",
}
CURRENT = "to_timestamp('9999-12-31')"


def snapshot_sql(name: str, strategy: str, mode: str, valid_to_current: bool = False) -> str:
    current = f', dbt_valid_to_current="{CURRENT}"' if valid_to_current else ""
    return (
        f"{{% snapshot {name} %}}\n"
        f"{{{{ config(unique_key='id', {STRATEGIES[strategy]}, hard_deletes='{mode}', "
        f"file_format=var('format'){current}) }}}}\n"
        "select * from {{ ref('source_rows') }}\n"
        "{% endsnapshot %}\n"
    )


SNAPSHOTS = {
    f"snap_{strategy}_{mode}.sql": snapshot_sql(f"snap_{strategy}_{mode}", strategy, mode)
    for strategy in STRATEGIES
    for mode in MODES
}
SNAPSHOTS["snap_current_invalidate.sql"] = snapshot_sql(
    "snap_current_invalidate", "timestamp", "invalidate", valid_to_current=True
)
SNAPSHOTS["snap_current_new_record.sql"] = snapshot_sql(
    "snap_current_new_record", "check", "new_record", valid_to_current=True
)

# (id, name, open), sorted, after the three batches
KEPT = [(1, "a", False), (1, "a2", True), (2, "b", True)]
EXPECTED = {
    "ignore": [*KEPT, (3, "c", False), (3, "c3", True), (4, "d", True), (5, "e", True)],
    "invalidate": [*KEPT, (3, "c", False), (3, "c3", True), (4, "d", False), (5, "e", True)],
}


def history(project, snapshot: str, current: str | None = None) -> list[tuple]:
    """The snapshot's rows, sorted: id, name, whether the row is open, and dbt_is_deleted
    where the table has it; open means dbt_valid_to is NULL, or ``current`` with
    dbt_valid_to_current. Sorted rather than ordered by dbt_valid_from: the timestamp
    strategy dates a row by its updated_at, a deletion record by the snapshot's time."""
    table = f"{project.test_schema}.{snapshot}"
    columns = [str(r[0]) for r in rows(project, f"describe {table}")]
    open_row = f"dbt_valid_to = {current}" if current else "dbt_valid_to is null"
    deleted = "dbt_is_deleted" in columns
    selected = f"id, name, coalesce({open_row}, false)" + (", dbt_is_deleted" if deleted else "")
    found = rows(project, f"select {selected} from {table}")
    return sorted(found, key=lambda row: [(value is not None, value) for value in row])


def build(batch: int) -> None:
    variables = f"{{format: {FORMAT}, batch: {batch}}}"
    run_dbt(["run", "--select", "source_rows", "--vars", variables])
    run_dbt(["snapshot", "--vars", variables])


class TestSnapshotHardDeletes:
    @pytest.fixture(scope="class")
    def models(self):
        return {"source_rows.sql": SOURCE}

    @pytest.fixture(scope="class")
    def snapshots(self):
        return SNAPSHOTS

    @pytest.fixture(scope="class")
    def built(self, project):
        for batch in (1, 2, 3):
            build(batch)
        return project

    @pytest.mark.parametrize("strategy", sorted(STRATEGIES))
    @pytest.mark.parametrize("mode", ["ignore", "invalidate"])
    def test_ignore_and_invalidate(self, built, strategy, mode):
        # invalidate closes the deleted rows 3 and 4 only (dbt-databricks#1281: not 2
        # and 5); the re-inserted 3 opens a new row; ignore keeps 3 and 4 open
        assert history(built, f"snap_{strategy}_{mode}") == EXPECTED[mode]

    @pytest.mark.parametrize("strategy", sorted(STRATEGIES))
    def test_new_record(self, built, strategy):
        # a delete closes the row and opens a deletion record with the deleted row's
        # values (dbt-databricks#902: the check strategy's MERGE ran); the re-insert
        # closes the deletion record and opens the new row
        assert history(built, f"snap_{strategy}_new_record") == [
            (1, "a", False, "False"),
            (1, "a2", True, "False"),
            (2, "b", True, "False"),
            (3, "c", False, "False"),
            (3, "c", False, "True"),
            (3, "c3", True, "False"),
            (4, "d", False, "False"),
            (4, "d", True, "True"),
            (5, "e", True, "False"),
        ]

    def test_dbt_valid_to_current(self, built):
        assert history(built, "snap_current_invalidate", CURRENT) == EXPECTED["invalidate"]
        assert history(built, "snap_current_new_record", CURRENT)[3:6] == [
            (3, "c", False, "False"),
            (3, "c", False, "True"),
            (3, "c3", True, "False"),
        ]
        # the open rows carry the configured value, not NULL
        open_nulls = rows(
            built,
            f"select count(*) from {built.test_schema}.snap_current_invalidate "
            "where dbt_valid_to is null",
        )
        assert open_nulls == [(0,)]
