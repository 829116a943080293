"""Spark's own types (type_set: spark, the default) through every step of a mutable
table: write, upsert, partial update, delete, an as-of read and the changelog's events,
one parametrized test per type; then the types where a column identifies, versions,
orders or ages rows, a version of two columns, and a timestamp scd2 history.

Values are compared in SQL as JSON text (`to_json(named_struct('v', column))`), so each
type is compared by Spark's own rendering on every connection method (Thrift returns
nested values as text)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

from tests.functional.mutable_table.util import FILE_FORMATS, MutableProjectBase, rows, run

# column -> (stored type, first value, second value)
TYPES = {
    "ts": ("timestamp", "timestamp'2024-01-02 03:04:05.123456'", "timestamp'2024-06-30 23:59:59'"),
    "tsn": (
        "timestamp_ntz",
        "timestamp_ntz'2024-01-02 03:04:05'",
        "timestamp_ntz'2025-02-03 04:05:06'",
    ),
    "d": ("date", "date'2024-01-02'", "date'1999-12-31'"),
    "amount": (
        "decimal(12,3)",
        "cast(12345.678 as decimal(12,3))",
        "cast(-0.001 as decimal(12,3))",
    ),
    "tags": ("array<string>", "array('new', 'gift')", "array('paid')"),
    "attrs": ("map<string,int>", "map('size', 1, 'qty', 2)", "map('size', 3)"),
    "ship_to": (
        "struct<city:string,zip:int>",
        "named_struct('city', 'Oslo', 'zip', 150)",
        "named_struct('city', 'Bergen', 'zip', 5003)",
    ),
}


def typed_row(id_: int, ver: int, op: str, note: str, values: str) -> str:
    """One batch row: `values` is 'first', 'second' or 'null' for every typed column."""
    cells = []
    for column, (spark_type, first, second) in TYPES.items():
        value = {"first": first, "second": second, "null": f"cast(null as {spark_type})"}[values]
        cells.append(f"{value} as {column}")
    return f"select {id_} as id, {ver} as ver, '{op}' as op, '{note}' as note, " + ", ".join(cells)


BATCHES = {
    # two new keys
    1: [typed_row(1, 1, "u", "a", "first"), typed_row(2, 1, "u", "a", "first")],
    # an upsert of key 1 with new values, a new key 3
    2: [typed_row(1, 2, "u", "b", "second"), typed_row(3, 1, "u", "a", "first")],
    # a partial update of key 2: only `note`; the typed columns are carried
    3: [typed_row(2, 2, "u", "partial", "null")],
    # a delete of key 3
    4: [typed_row(3, 2, "d", "gone", "null")],
}

TYPED = (
    """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='ver',
          partial_updates=true, delete_when="op = 'd'", changelog=true, versions_kept=5) }}
{% set batch = var('batch', 1) %}
"""
    + "\n".join(
        f"{{% {'if' if n == 1 else 'elif'} batch == {n} %}}\n" + "\nunion all\n".join(batch)
        for n, batch in BATCHES.items()
    )
    + "\n{% endif %}\n"
)

# no version rule: whether a re-sent row changed is the value comparison itself
PLAIN = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
""" + "\nunion all\n".join(BATCHES[1])

AS_OF = """
{{ config(materialized='table') }}
select * from {{ mutable_table_as_of(ref('typed'), version=var('as_of', 0)) }} as t
"""


def as_json(expression: str, spark_type: str = "") -> str:
    """A value as JSON text; a map as its entries in key order (orc keeps its own)."""
    if spark_type.startswith("map<"):
        expression = f"array_sort(map_entries({expression}))"
    return f"to_json(named_struct('v', {expression}))"


def stored_type(project, table: str, column: str) -> str:
    described = rows(project, f"describe table {project.test_schema}.{table}")
    return next(str(r[1]).replace(" ", "").lower() for r in described if r[0] == column)


def holds(project, relation: str, where: str, column: str, literal: str) -> bool:
    """Whether the one row of `relation` matching `where` holds `literal` in `column`."""
    spark_type = TYPES[column.removeprefix("previous_")][0]
    found = rows(
        project,
        f"select {as_json(column, spark_type)} = {as_json(literal, spark_type)} "
        f"from {relation} where {where}",
    )
    assert len(found) == 1, (relation, where, found)
    return bool(found[0][0])


# spark4_path: every type through each step, with ANSI casts on Spark 4
@pytest.mark.spark4_path
class TestEveryStepOfEachType(MutableProjectBase):
    # orc too, on the embedded Spark 3.5 lane (the rewrite applier writes either format;
    # Thrift and Spark 4 show their own paths with parquet, the Delta lane with delta)
    @pytest.fixture(
        scope="class",
        params=[*FILE_FORMATS, pytest.param("orc", marks=pytest.mark.embedded_parquet_only)],
    )
    def fmt(self, request):
        return request.param

    @pytest.fixture(scope="class")
    def models(self):
        return {"typed.sql": TYPED, "typed_as_of.sql": AS_OF, "typed_plain.sql": PLAIN}

    @pytest.fixture(scope="class")
    def history(self, project):
        """Runs the four batches; returns the table version batch 2 committed and the
        changelog's backing table."""
        run(project, "typed", {"batch": 1})
        run(project, "typed", {"batch": 2})
        backing = rows(
            project,
            f"select backing_table from {project.test_schema}.topics where relation_name = 'typed'",
        )[0][0]
        version_2 = rows(
            project, f"select max(table_version) from {project.test_schema}.{backing}"
        )[0][0]
        run(project, "typed", {"batch": 3})
        run(project, "typed", {"batch": 4})
        run(project, "typed_as_of", {"as_of": int(version_2)})
        return {"backing": f"{project.test_schema}.{backing}"}

    def test_a_resent_batch_changes_nothing(self, project):
        """Every type compares equal to itself, maps whatever key order the format
        stores them in."""
        first = run(project, "typed_plain").results[0].message
        again = run(project, "typed_plain").results[0].message
        assert first.startswith("INSERT 2, UPDATE 0, DELETE 0"), first
        assert again.startswith("INSERT 0, UPDATE 0, DELETE 0"), again

    @pytest.mark.parametrize("column", list(TYPES))
    def test_round_trip(self, project, history, column):
        spark_type, first, second = TYPES[column]
        table = f"{project.test_schema}.typed"
        assert stored_type(project, "typed", column) == spark_type
        assert stored_type(project, "typed_as_of", column) == spark_type
        # upsert: key 1 holds the second values; partial update: key 2 keeps the first
        assert holds(project, table, "id = 1", column, second)
        assert holds(project, table, "id = 2 and note = 'partial'", column, first)
        # delete: key 3 is gone
        assert rows(project, f"select count(*) from {table} where id = 3") == [(0,)]
        # as of batch 2: key 3 is there, key 1 has its second values
        as_of = f"{project.test_schema}.typed_as_of"
        assert holds(project, as_of, "id = 3", column, first)
        assert holds(project, as_of, "id = 1", column, second)
        # the changelog: key 1's update carries both values, key 3's delete the stored
        events = history["backing"]
        update = "change_kind = 'update' and id = 1"
        assert holds(project, events, update, column, second)
        assert holds(project, events, update, f"previous_{column}", first)
        delete = "change_kind = 'delete' and id = 3"
        assert holds(project, events, delete, f"previous_{column}", first)
        # the partial update publishes key 2 with its carried value
        partial = "change_kind = 'update' and id = 2"
        assert holds(project, events, partial, column, first)


# Where a column identifies, versions, orders or ages rows: a date and a decimal key, a
# timestamp version, order and TTL age, a timestamp_ntz unique index, a decimal sum.
ROLES = """
{{ config(materialized='mutable_table', primary_key=['placed_on', 'store'],
          version_column='updated_at', ordering_column='updated_at',
          indexes=[{'name': 'by_receipt', 'columns': ['receipt_at'], 'unique': true}],
          merge_functions={'total': 'sum'}, ttl_ms=2592000000, ttl_column='updated_at') }}
{% set batch = var('batch', 1) %}
select cast(placed_on as date) as placed_on, cast(store as decimal(6,2)) as store,
       cast(updated_at as timestamp) as updated_at,
       cast(receipt_at as timestamp_ntz) as receipt_at, cast(total as decimal(10,2)) as total
from values
{% if batch == 1 %}
  ('2024-05-01', 1.5, current_timestamp() - interval 2 hours, '2024-05-01 10:00:00', 10.25),
  ('2024-05-02', 1.5, timestamp'2001-01-01 00:00:00', '2024-05-02 10:00:00', 1.00)
{% elif batch == 2 %}
  ('2024-05-01', 1.5, current_timestamp() - interval 1 hour, '2024-05-01 11:00:00', 0.50),
  ('2024-05-01', 1.5, current_timestamp() - interval 3 hours, '2024-05-01 09:00:00', 99.00)
{% endif %}
as t(placed_on, store, updated_at, receipt_at, total)
"""

# version_column as two columns compared in order
PAIR_VERSION = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column=['batch_at', 'seq']) }}
{% set batch = var('batch', 1) %}
select id, cast(batch_at as timestamp) as batch_at, seq, val from values
{% if batch == 1 %} (1, '2024-01-01 00:00:00', 1, 'a'), (2, '2024-01-01 00:00:00', 1, 'x'),
                    (2, '2024-01-01 00:00:00', 3, 'y')
{% elif batch == 2 %} (1, '2024-01-01 00:00:00', 2, 'b')
{% elif batch == 3 %} (1, '2024-01-01 00:00:00', 1, 'late'), (1, '2023-12-31 00:00:00', 9, 'older')
{% elif batch == 4 %} (1, '2024-01-02 00:00:00', 0, 'next day')
{% endif %}
as t(id, batch_at, seq, val)
"""

# an scd2 history keyed by a timestamp effective time
TIMED_HISTORY = """
{{ config(materialized='mutable_table', primary_key=['id'], history='scd2',
          valid_from='changed_at') }}
{% set batch = var('batch', 1) %}
select id, cast(changed_at as timestamp) as changed_at, status from values
{% if batch == 1 %} (1, '2024-01-01 08:00:00', 'new')
{% else %} (1, '2024-01-03 09:30:00', 'paid')
{% endif %}
as t(id, changed_at, status)
"""

HISTORY_TESTS = """
version: 2
models:
  - name: timed_history
    data_tests:
      - scd2_valid_history:
          columns: [id]
          valid_from: changed_at
"""


# spark4_path: typed keys, versions, TTL and sums under ANSI
@pytest.mark.spark4_path
# connection_agnostic: typed roles are planner SQL (each type crosses Thrift above)
@pytest.mark.connection_agnostic
class TestTypesInEveryRole(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "roles.sql": ROLES,
            "pair_version.sql": PAIR_VERSION,
            "timed_history.sql": TIMED_HISTORY,
            "timed_history.yml": HISTORY_TESTS,
        }

    def test_keys_versions_order_index_ttl_and_sum(self, project):
        run(project, "roles", {"batch": 1})
        table = f"{project.test_schema}.roles"
        # the row of 2001 is older than ttl_ms: never written
        assert rows(project, f"select cast(placed_on as string), total from {table}") == [
            ("2024-05-01", pytest.approx(10.25))
        ]
        run(project, "roles", {"batch": 2})
        # the newer row of the batch is summed in; the one older than the stored version
        # is ignored
        found = rows(project, f"select total, cast(receipt_at as string) from {table}")
        assert [(float(t), r) for t, r in found] == [(10.75, "2024-05-01 11:00:00")]
        for column, spark_type in (
            ("placed_on", "date"),
            ("store", "decimal(6,2)"),
            ("updated_at", "timestamp"),
            ("receipt_at", "timestamp_ntz"),
            ("total", "decimal(10,2)"),
        ):
            assert stored_type(project, "roles", column) == spark_type

    def test_two_column_version(self, project):
        run(project, "pair_version", {"batch": 1})
        table = f"{project.test_schema}.pair_version"
        assert rows(project, f"select id, seq, val from {table} order by id") == [
            (1, 1, "a"),
            (2, 3, "y"),
        ]
        run(project, "pair_version", {"batch": 2})
        assert rows(project, f"select val from {table} where id = 1") == [("b",)]
        # an equal batch_at with a lower seq, and an earlier batch_at with a higher seq:
        # both older than the stored (2024-01-01, 2)
        run(project, "pair_version", {"batch": 3})
        assert rows(project, f"select val from {table} where id = 1") == [("b",)]
        run(project, "pair_version", {"batch": 4})
        assert rows(project, f"select val from {table} where id = 1") == [("next day",)]

    def test_timestamp_history(self, project):
        run(project, "timed_history", {"batch": 1})
        run(project, "timed_history", {"batch": 2})
        table = f"{project.test_schema}.timed_history"
        assert stored_type(project, "timed_history", "changed_at") == "timestamp"
        assert stored_type(project, "timed_history", "valid_to") == "timestamp"
        found = rows(
            project,
            f"select status, cast(changed_at as string), cast(valid_to as string) "
            f"from {table} order by changed_at",
        )
        assert found == [
            ("new", "2024-01-01 08:00:00", "2024-01-03 09:30:00"),
            ("paid", "2024-01-03 09:30:00", None),
        ]
        results = run_dbt(["test", "--select", "timed_history"])
        assert [r.status for r in results.results] == ["pass"]
