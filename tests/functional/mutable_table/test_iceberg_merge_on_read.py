"""Iceberg merge-on-read tables and snapshot expiry (docs/mutable_table.md, Iceberg).

Merge-on-read: a model asks for it with dbt-spark's `tblproperties` config
(mutable_table/tblproperties_config.py). The tests assert the rows of upserts, deletes,
version rules, partial updates, scd2, history, as-of reads and rollback on such a table,
and that Iceberg really wrote delete files (the snapshot summaries' `added-delete-files`)
instead of rewriting data files -- so the test fails if the table were copy-on-write.

Expiry: `expire_snapshots: true` with `versions_kept: 2` leaves two snapshots where the
same model without it keeps every one; rollback to a kept snapshot works, an expired one
is refused (mutable_table/versions/iceberg_expiry.py). The Iceberg lane runs this;
elsewhere it is skipped."""

import pytest
from dbt.tests.util import run_dbt_and_capture

from tests.functional.mutable_table.util import (
    file_format,
    properties,
    rows,
    run,
    table_exists,
    table_rows,
)

pytestmark = pytest.mark.skipif(
    file_format() != "iceberg", reason="needs Iceberg's session catalog (iceberg lane)"
)

MOR = (
    "tblproperties={'write.merge.mode': 'merge-on-read', "
    "'write.update.mode': 'merge-on-read', 'write.delete.mode': 'merge-on-read'}"
)

# version rule + partial updates; batch 2: an older version of 1 (ignored), 2 paid with
# no amount (the stored one kept), 4 new
ORDERS = f"""
{{{{ config(materialized='mutable_table', primary_key=['id'], version_column='v',
          partial_updates=true, versions_kept=5, {MOR}) }}}}
{{% if var('batch', 1) == 1 %}}
select * from values (1, 'new', 10, 1), (2, 'new', 20, 1), (3, 'new', 30, 1)
  as t(id, status, amount, v)
{{% else %}}
select * from values (1, 'stale', 0, 0), (2, 'paid', cast(null as int), 2), (4, 'new', 40, 1)
  as t(id, status, amount, v)
{{% endif %}}
"""

REMOVALS = f"""
{{{{ config(materialized='mutable_table', primary_key=['id'], delete_when='gone', {MOR}) }}}}
{{% if var('batch', 1) == 1 %}}
select * from values (1, 'a', false), (2, 'b', false), (3, 'c', false) as t(id, label, gone)
{{% else %}}
select * from values (2, 'b', true), (3, 'C', false) as t(id, label, gone)
{{% endif %}}
"""

PRICES = f"""
{{{{ config(materialized='mutable_table', primary_key=['sku'], history='scd2', {MOR}) }}}}
select 'a' as sku, {{{{ var('price', 1) }}}} as price,
  cast({{{{ var('at', 1000) }}}} as bigint) as valid_from
"""

# switched to merge-on-read by a later run's config (an ALTER before that run writes)
SWITCHED = """
{{ config(materialized='mutable_table', primary_key=['id'],
          tblproperties=({'write.merge.mode': 'merge-on-read'} if var('mor', false) else none)) }}
select * from values (1, {{ var('n', 1) }}), (2, 2) as t(id, n)
"""


def as_of(table: str) -> str:
    return f"""
{{{{ config(materialized='table') }}}}
select * from {{{{ mutable_table_as_of(ref('{table}'), version=var('as_of', 0)) }}}} as o
"""


KEPT = f"""
{{{{ config(materialized='mutable_table', primary_key=['id'], versions_kept=2,
          expire_snapshots=true, {MOR}) }}}}
select * from values (1, {{{{ var('n', 1) }}}}) as t(id, n)
"""

KEPT_ALL = """
{{ config(materialized='mutable_table', primary_key=['id'], versions_kept=2) }}
select * from values (1, {{ var('n', 1) }}) as t(id, n)
"""

EXPIRE_ON_PARQUET = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet',
          expire_snapshots=true) }}
select 1 as id
"""

BAD_EXPIRE = """
{{ config(materialized='mutable_table', primary_key=['id'], expire_snapshots='yes') }}
select 1 as id
"""


def snapshots(project, table: str) -> list[tuple]:
    """(snapshot id, operation, added delete files, added data files) per snapshot, in
    the order they were made current."""
    return rows(
        project,
        "select s.snapshot_id, s.operation, "
        "cast(coalesce(s.summary['added-delete-files'], '0') as int), "
        "cast(coalesce(s.summary['added-data-files'], '0') as int) "
        f"from {project.test_schema}.{table}.history as h "
        f"join {project.test_schema}.{table}.snapshots as s on h.snapshot_id = s.snapshot_id "
        "where h.is_current_ancestor order by h.made_current_at, h.snapshot_id",
    )


def merge_on_read(project, table: str) -> bool:
    shown = properties(project, table)
    modes = ("write.merge.mode", "write.update.mode", "write.delete.mode")
    return all(shown.get(mode) == "merge-on-read" for mode in modes)


def operation(name: str, args: str, expect_pass: bool = True) -> str:
    _, output = run_dbt_and_capture(
        ["run-operation", name, "--args", args], expect_pass=expect_pass
    )
    return output


class TestMergeOnRead:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS,
            "removals.sql": REMOVALS,
            "prices.sql": PRICES,
            "switched.sql": SWITCHED,
            "as_of.sql": as_of("orders"),
        }

    def test_upserts_version_rule_and_partial_updates(self, project):
        run(project, "orders", {"batch": 1})
        assert merge_on_read(project, "orders")
        run(project, "orders", {"batch": 2})
        assert table_rows(project, "orders", "id, status, amount, v") == [
            (1, "new", 10, 1),  # version 0 < 1: ignored
            (2, "paid", 20, 2),  # partial update: the NULL amount kept 20
            (3, "new", 30, 1),
            (4, "new", 40, 1),
        ]
        # the update went out as a delete file beside a new data file, not a rewrite
        _, operation_name, delete_files, data_files = snapshots(project, "orders")[-1]
        assert operation_name == "overwrite" and delete_files >= 1 and data_files >= 1

        # history, as-of and rollback on the merge-on-read table
        first, second = [s[0] for s in snapshots(project, "orders")]
        output = operation("mutable_table_history", "{model: orders}")
        assert any(line.startswith(f"{second} |") and "yes" in line for line in output.splitlines())
        run(project, "as_of", {"as_of": first})
        assert table_rows(project, "as_of", "id, status, amount") == [
            (1, "new", 10),
            (2, "new", 20),
            (3, "new", 30),
        ]
        operation("rollback_mutable_table", f"{{model: orders, to_version: {first}}}")
        assert table_rows(project, "orders", "id, status, amount") == [
            (1, "new", 10),
            (2, "new", 20),
            (3, "new", 30),
        ]
        history = snapshots(project, "orders")
        assert [s[0] for s in history[:2]] == [first, second] and len(history) == 3
        assert history[-1][2] >= 1  # the rollback's MERGE wrote delete files too

    def test_deletes(self, project):
        run(project, "removals", {"batch": 1})
        run(project, "removals", {"batch": 2})
        assert table_rows(project, "removals", "id, label") == [(1, "a"), (3, "C")]
        assert snapshots(project, "removals")[-1][2] >= 1
        assert merge_on_read(project, "removals")

    def test_scd2(self, project):
        run(project, "prices", {"price": 1, "at": 1000})
        run(project, "prices", {"price": 2, "at": 2000})
        assert table_rows(project, "prices", "sku, price, valid_from, valid_to", "3") == [
            ("a", 1, 1000, 2000),
            ("a", 2, 2000, None),
        ]
        assert snapshots(project, "prices")[-1][2] >= 1  # the interval closed by a delete file

    def test_a_later_config_switches_an_existing_table(self, project):
        run(project, "switched", {"n": 1})
        assert properties(project, "switched").get("write.merge.mode") in (None, "copy-on-write")
        run(project, "switched", {"n": 5})
        assert snapshots(project, "switched")[-1][2] == 0  # copy-on-write: no delete file
        run(project, "switched", {"n": 7, "mor": True})
        assert properties(project, "switched")["write.merge.mode"] == "merge-on-read"
        assert snapshots(project, "switched")[-1][2] >= 1  # that run wrote merge-on-read
        assert table_rows(project, "switched", "id, n") == [(1, 7), (2, 2)]


class TestSnapshotExpiry:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "kept.sql": KEPT,
            "kept_all.sql": KEPT_ALL,
            "as_of.sql": as_of("kept"),
            "expire_on_parquet.sql": EXPIRE_ON_PARQUET,
            "bad_expire.sql": BAD_EXPIRE,
        }

    def test_expiry_keeps_versions_kept_snapshots(self, project):
        made = []
        for n in (1, 2, 3, 4):
            run(project, "kept", {"n": n})
            run(project, "kept_all", {"n": n})
            made.append(snapshots(project, "kept")[-1][0])
        schema = project.test_schema
        # without expire_snapshots every snapshot stays; with it, versions_kept: 2
        assert rows(project, f"select count(*) from {schema}.kept_all.snapshots") == [(4,)]
        assert rows(project, f"select count(*) from {schema}.kept.snapshots") == [(2,)]
        assert [s[0] for s in snapshots(project, "kept")] == made[-2:]
        # an expired snapshot is gone for Spark too, not only from the history
        with pytest.raises(Exception, match=str(made[0])):
            rows(project, f"select * from {schema}.kept version as of {made[0]}")

        # an expired one is refused, naming the kept ones; nothing is changed
        output = operation(
            "rollback_mutable_table", f"{{model: kept, to_version: {made[1]}}}", False
        )
        assert f"version {made[1]} is not kept (kept versions: {made[3]}, {made[2]})" in output
        result = run(project, "as_of", {"as_of": made[0]}, expect_pass=False)
        assert f"version {made[0]} is not kept" in result.results[0].message
        assert table_rows(project, "kept", "id, n") == [(1, 4)]

        # a rollback to the kept one works, and expires again after its own commit
        operation("rollback_mutable_table", f"{{model: kept, to_version: {made[2]}}}")
        assert table_rows(project, "kept", "id, n") == [(1, 3)]
        assert [s[0] for s in snapshots(project, "kept")][0] == made[3]
        assert rows(project, f"select count(*) from {schema}.kept.snapshots") == [(2,)]

    def test_expire_snapshots_is_refused_before_anything_is_written(self, project):
        result = run(project, "expire_on_parquet", expect_pass=False)
        message = result.results[0].message
        assert "mutable_table 'expire_on_parquet': expire_snapshots: true is set with " in message
        assert "Fix: remove expire_snapshots, or use file_format iceberg" in message
        assert not table_exists(project, "expire_on_parquet")
        result = run(project, "bad_expire", expect_pass=False)
        assert "'expire_snapshots' must be true or false, got 'yes'" in result.results[0].message
        assert not table_exists(project, "bad_expire")
