"""is_incremental(), --full-refresh, and the generic tests."""

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import MutableProjectBase, run, table_rows

INCREMENTAL = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
{% if is_incremental() %}
select 2 as id, 'incremental' as phase
{% else %}
select 1 as id, 'first' as phase
{% endif %}
"""

KEPT = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select {{ var('batch', 1) }} as id
"""

REBUILDABLE = """
{{ config(materialized='mutable_table', primary_key=['id'], full_refresh=true) }}
select {{ var('batch', 1) }} as id
"""

DUPLICATED = """
{{ config(materialized='table') }}
select * from values (1, 'A', 'acme'), (1, 'A', 'acme'), (2, 'B', 'acme'), (1, 'C', 'globex')
as t(id, code, tenant_id)
"""

SCHEMA_YML = """
models:
  - name: incremental
    data_tests:
      - mutable_primary_key:
          columns: [id]
      - mutable_unique_index:
          columns: [phase]
  - name: duplicated
    data_tests:
      - mutable_primary_key:
          columns: [id]
      - mutable_unique_index:
          columns: [code]
"""


class TestMutableLifecycle(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "incremental.sql": INCREMENTAL,
            "kept.sql": KEPT,
            "rebuildable.sql": REBUILDABLE,
            "duplicated.sql": DUPLICATED,
            "schema.yml": SCHEMA_YML,
        }

    def test_is_incremental(self, project):
        run(project, "incremental")
        assert table_rows(project, "incremental", "id, phase") == [(1, "first")]
        run(project, "incremental")
        assert table_rows(project, "incremental", "id, phase") == [(1, "first"), (2, "incremental")]

    def test_full_refresh_needs_opt_in(self, project):
        run(project, "kept rebuildable", {"batch": 1})
        run(project, "kept rebuildable", {"batch": 2}, extra=["--full-refresh"])
        # kept: the flag is refused (warning), the batch is applied as usual
        assert table_rows(project, "kept", "id") == [(1,), (2,)]
        # rebuildable: full_refresh: true lets --full-refresh rebuild from the output
        assert table_rows(project, "rebuildable", "id") == [(2,)]
        # without the flag, full_refresh: true does not rebuild
        run(project, "rebuildable", {"batch": 3})
        assert table_rows(project, "rebuildable", "id") == [(2,), (3,)]

    def test_generic_tests(self, project):
        run(project, "incremental duplicated")
        results = run_dbt(["test", "--select", "incremental"])
        assert len(results) == 2 and all(r.status == "pass" for r in results)
        results = run_dbt(["test", "--select", "duplicated"], expect_pass=False)
        failures = {r.node.name.split("_duplicated")[0]: r.failures for r in results}
        assert failures == {"mutable_primary_key": 1, "mutable_unique_index": 1}
