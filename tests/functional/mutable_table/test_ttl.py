"""ttl_ms / ttl_column: a run deletes exactly the aged rows of its scope, with its own
changes; scd2 trims closed intervals only; expire_mutable_table does it without a batch."""

import json

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import MutableProjectBase, run, table_rows

HOUR = 3_600_000
MINUTE = 60_000

# seen_ms is relative to the run's clock: var ages = {id: age in minutes}
SESSIONS = """
{{ config(materialized='mutable_table', primary_key=['id'], ttl_column='seen_ms',
          ttl_ms=var('ttl_ms', 3600000), tenant_from='org') }}
{% set now = 'unix_millis(current_timestamp())' %}
select * from values
{% for id, age in var('ages', {}).items() %}
  ({{ id }}, {{ now }} - {{ age }} * 60000L, '{{ var("org", "a") }}'){{ ',' if not loop.last }}
{% endfor %}
{% if not var('ages', {}) %} (0, 0L, 'none') {% endif %}
as t(id, seen_ms, org)
{% if not var('ages', {}) %} where false {% endif %}
"""

# bound to a tenant by var jammi_tenant (no tenant_from)
SCOPED = """
{{ config(materialized='mutable_table', primary_key=['id'], ttl_column='seen_ms',
          ttl_ms=var('ttl_ms', 3600000)) }}
{% set now = 'unix_millis(current_timestamp())' %}
select * from values
{% for id, age in var('ages', {}).items() %}
  ({{ id }}, {{ now }} - {{ age }} * 60000L){{ ',' if not loop.last }}
{% endfor %}
as t(id, seen_ms)
"""

HISTORY = """
{{ config(materialized='mutable_table', primary_key=['id'], history='scd2',
          ttl_ms=var('ttl_ms', 3600000)) }}
{% set now = 'unix_millis(current_timestamp())' %}
select * from values
{% for id, label, age in var('history_rows', []) %}
  ({{ id }}, '{{ label }}', {{ now }} - {{ age }} * 60000L){{ ',' if not loop.last }}
{% endfor %}
as t(id, label, valid_from)
"""

# no ttl_column: the age is when the key's row last changed (engine column _written_at)
WRITTEN = """
{{ config(materialized='mutable_table', primary_key=['id'], ttl_ms=var('ttl_ms', 3600000)) }}
select * from values
{% for id, label in var('written_rows', []) %}
  ({{ id }}, '{{ label }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, label)
"""


def ids(project, table):
    return [r[0] for r in table_rows(project, table, "id")]


# spark4_path: timestamp arithmetic under ANSI
@pytest.mark.spark4_path
# connection_agnostic: the planner selects aged keys; the same SQL on every connection
@pytest.mark.connection_agnostic
class TestTtl(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sessions.sql": SESSIONS,
            "scoped.sql": SCOPED,
            "history.sql": HISTORY,
            "written.sql": WRITTEN,
        }

    def test_expires_exactly_the_aged_keys(self, project):
        # key 1 arrives already older than an hour: it is never stored; a NULL age
        # never expires
        run(project, "sessions", {"ages": {1: 120, 2: 10, 3: 30, 4: 50}})
        assert ids(project, "sessions") == [2, 3, 4]

        # ttl 40 minutes: key 4 (50 min) expires untouched, key 3 is updated to an
        # aged time (its update becomes the delete), key 5 is new; key 2 stays
        result = run(project, "sessions", {"ttl_ms": 40 * MINUTE, "ages": {3: 45, 5: 0}})
        assert result.results[0].message == "INSERT 1, UPDATE 0, DELETE 2"
        assert ids(project, "sessions") == [2, 5]

        # a run with an empty batch expires too (ttl 5 minutes: only key 5 is younger)
        run(project, "sessions", {"ttl_ms": 5 * MINUTE})
        assert ids(project, "sessions") == [5]

    def test_tenant_scope_holds(self, project):
        for tenant in ("acme", "globex"):
            run(project, "scoped", {"ages": {1: 30, 2: 1}, "jammi_tenant": tenant})
        # acme's run with ttl 20 minutes expires acme's key 1 only
        run(project, "scoped", {"ages": {3: 0}, "jammi_tenant": "acme", "ttl_ms": 20 * MINUTE})
        assert table_rows(project, "scoped", "tenant_id, id", "1, 2") == [
            ("acme", 2),
            ("acme", 3),
            ("globex", 1),
            ("globex", 2),
        ]
        # expire_mutable_table bound to globex, with a one-off age of 10 minutes
        args = {"table": "scoped", "ttl_ms": 10 * MINUTE}
        run_dbt(
            ["run-operation", "expire_mutable_table", "--args", json.dumps(args)]
            + ["--vars", json.dumps({"jammi_tenant": "globex", "ages": {}})]
        )
        assert table_rows(project, "scoped", "tenant_id, id", "1, 2") == [
            ("acme", 2),
            ("acme", 3),
            ("globex", 2),
        ]

    def test_scd2_trims_closed_intervals_only(self, project):
        # key 1: 'a' opens 3 h ago; key 2: 'x' opens 5 h ago and stays open
        run(project, "history", {"history_rows": [[1, "a", 180], [2, "x", 300]]})
        # 'b' closes 'a' 2 h ago: the closed interval is already past the hour
        run(project, "history", {"history_rows": [[1, "b", 120]]})
        assert table_rows(project, "history", "id, label, valid_to is null", "1, 2") == [
            (1, "b", True),
            (2, "x", True),
        ]
        # 'c' closes 'b' 30 minutes ago: kept
        run(project, "history", {"history_rows": [[1, "c", 30]]})
        assert table_rows(project, "history", "id, label, valid_to is null", "1, 2") == [
            (1, "b", False),
            (1, "c", True),
            (2, "x", True),
        ]
        # the operation with the configured ttl changes nothing; with 20 minutes the
        # closed 'b' goes and both open rows stay
        run_dbt(["run-operation", "expire_mutable_table", "--args", '{"table": "history"}'])
        assert len(table_rows(project, "history")) == 3
        args = json.dumps({"table": "history", "ttl_ms": 20 * MINUTE})
        run_dbt(["run-operation", "expire_mutable_table", "--args", args])
        assert table_rows(project, "history", "id, label, valid_to is null", "1, 2") == [
            (1, "c", True),
            (2, "x", True),
        ]

    def test_engine_written_time(self, project):
        # ttl 1 ms: rows written by this run are never expired by it (one clock per plan)
        run(project, "written", {"ttl_ms": 1, "written_rows": [[1, "a"], [2, "b"]]})
        assert ids(project, "written") == [1, 2]
        written = dict(table_rows(project, "written", "id, _written_at"))
        assert all(isinstance(ms, int) and ms > 1_700_000_000_000 for ms in written.values())

        # the next run: key 1 (not written since) expires, key 2 is rewritten and stays
        result = run(project, "written", {"ttl_ms": 1, "written_rows": [[2, "b2"], [3, "c"]]})
        assert result.results[0].message == "INSERT 1, UPDATE 1, DELETE 1"
        assert table_rows(project, "written", "id, label") == [(2, "b2"), (3, "c")]
        assert dict(table_rows(project, "written", "id, _written_at"))[2] > written[2]

        # an unchanged row is no write: re-sending key 3 as it is leaves its time alone
        before = dict(table_rows(project, "written", "id, _written_at"))
        result = run(project, "written", {"written_rows": [[3, "c"]]})
        assert result.results[0].message == "INSERT 0, UPDATE 0, DELETE 0"
        assert dict(table_rows(project, "written", "id, _written_at")) == before
