"""Kept versions, reads as of a version, history and rollback (docs/versions.md): the
recovery walkthrough on parquet and Delta -- a bad batch goes out, it is found in the
history, the version before it is read, the table is rolled back, the fixed model runs.
And mutable_table_as_of() in a tenant-bound run: scoped exactly like tenant_scoped(),
accepted by the tenant read guard, while a read of a version's files without the scope
is refused."""

import os

import pyspark
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.jammi.mutable_table.commit.iceberg_merge import counts_in_snapshot
from tests.functional.mutable_table.util import (
    MutableProjectBase,
    leftovers,
    location,
    rows,
    run,
    table_rows,
    version_dirs,
)

ORDERS = """
{{ config(materialized='mutable_table', primary_key=['id'], versions_kept=3, changelog=true) }}
{% set batch = var('batch', 1) %}
{% if batch == 1 %} select * from values (1, 'new', 10), (2, 'new', 20) as t(id, status, amount)
{% elif batch == 2 %} select * from values (2, 'paid', 20), (3, 'new', 30) as t(id, status, amount)
{% elif batch == 'bad' %}
  select * from values (1, 'lost', 0), (2, 'lost', 0), (3, 'lost', 0) as t(id, status, amount)
{% else %} select * from values ({{ batch }}, 'new', {{ batch }}) as t(id, status, amount)
{% endif %}
"""

AS_OF = """
{{ config(materialized='table') }}
select id, status, amount
from {{ mutable_table_as_of(ref('orders'), version=var('as_of', 0)) }} as o
"""

PLAIN = """
{{ config(materialized='table') }}
select 1 as id
"""

PRICES = """
{{ config(materialized='mutable_table', primary_key=['sku'], tenant_from='tenant') }}
select * from values ('acme', 'a', {{ var('price', 1) }}), ('globex', 'g', 2),
  (cast(null as string), 's', 3) as t(tenant, sku, price)
"""

PRICES_AS_OF = """
{{ config(materialized='table') }}
select sku, price from {{ mutable_table_as_of(ref('prices'), version=var('as_of', 0)) }} as p
"""

UNSCOPED = """
{{ config(materialized='table') }}
select sku, price from parquet.`{{ var('path', '/nowhere') }}` as p
"""


AFTER_BATCH_2 = [(1, "new", 10), (2, "paid", 20), (3, "new", 30)]


def iceberg_snapshots(project, table: str) -> list[int]:
    """The table's snapshot ids in the order they were made current."""
    history = rows(
        project,
        f"select snapshot_id from {project.test_schema}.{table}.history "
        "where is_current_ancestor order by made_current_at, snapshot_id",
    )
    return [int(r[0]) for r in history]


def current_version(project, fmt: str) -> int:
    if fmt == "iceberg":
        return iceberg_snapshots(project, "orders")[-1]
    if fmt == "delta":
        history = rows(project, f"describe history {project.test_schema}.orders")
        return max(int(r[0]) for r in history)
    return int(location(project, "orders").rsplit("/", 1)[-1][1:11])


def first_prices_version(project, fmt: str) -> int:
    if fmt == "iceberg":
        return iceberg_snapshots(project, "prices")[0]
    if fmt == "delta":
        history = rows(project, f"describe history {project.test_schema}.prices")
        return min(int(r[0]) for r in history)
    return 1


def operation(name: str, args: str, expect_pass: bool = True) -> str:
    _, output = run_dbt_and_capture(
        ["run-operation", name, "--args", args], expect_pass=expect_pass
    )
    return output


class TestVersionsWalkthrough(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self, fmt):
        return {
            "orders.sql": ORDERS,
            "orders_as_of.sql": AS_OF,
            "plain.sql": PLAIN,
            "prices.sql": PRICES,
            "prices_as_of.sql": PRICES_AS_OF,
            "unscoped.sql": UNSCOPED,
        }

    def test_recovery_walkthrough(self, project, fmt):
        run(project, "orders", {"batch": 1})
        run(project, "orders", {"batch": 2})
        good = current_version(project, fmt)
        run(project, "orders", {"batch": "bad"})
        assert table_rows(project, "orders", "id, status, amount") == [
            (1, "lost", 0),
            (2, "lost", 0),
            (3, "lost", 0),
        ]
        bad = current_version(project, fmt)

        # 1. find it: the history lists the bad version as current, with its counts
        output = operation("mutable_table_history", "{model: orders}")
        lines = [line for line in output.splitlines() if " | " in line]
        assert any(line.split(" | ")[0].endswith(str(bad)) and "yes" in line for line in lines)
        assert any(line.split(" | ")[0].endswith(str(good)) for line in lines)

        # 2. read the version before it
        run(project, "orders_as_of", {"as_of": good})
        assert table_rows(project, "orders_as_of", "id, status, amount") == AFTER_BATCH_2

        # a version that is not kept fails clearly, and nothing is changed
        output = operation("rollback_mutable_table", "{model: orders, to_version: 9999}", False)
        assert "version 9999 is not kept" in output
        assert current_version(project, fmt) == bad

        # 3. roll back: version `good`'s rows are current, as a new version
        operation("rollback_mutable_table", f"{{model: orders, to_version: {good}}}")
        assert table_rows(project, "orders", "id, status, amount") == AFTER_BATCH_2
        rolled_back = current_version(project, fmt)
        if fmt == "iceberg":  # snapshot ids are not ordered: a new snapshot, made current
            assert iceberg_snapshots(project, "orders")[-2:] == [bad, rolled_back]
        else:
            assert rolled_back > bad
        # with changelog: true the rollback publishes its diff as its own version
        (backing,) = rows(
            project,
            f"select backing_table from {project.test_schema}.topics "
            "where relation_name = 'orders'",
        )[0]
        published = rows(
            project,
            f"select _offset, change_kind, count(*) from {project.test_schema}.{backing} "
            "group by 1, 2 order by 1, 2",
        )
        # iceberg numbers its changelog versions itself: the rollback's is the newest
        last = max(o for o, _, _ in published) if fmt == "iceberg" else rolled_back
        assert [(kind, n) for offset, kind, n in published if offset == last] == [("update", 3)]
        # history is never rewritten: the bad version can still be read
        run(project, "orders_as_of", {"as_of": bad})
        assert [r[1] for r in table_rows(project, "orders_as_of", "id, status")] == ["lost"] * 3

        # 4. the fixed model runs on top of the rolled-back state
        run(project, "orders", {"batch": 4})
        assert table_rows(project, "orders", "id, status, amount") == [
            *AFTER_BATCH_2,
            (4, "new", 4),
        ]
        assert leftovers(project, "orders") == []

        # five versions committed, versions_kept: 3 -- only those stay on disk, on every
        # connection method (over thrift the server's metastore removed the others; the
        # test server's warehouse is on this machine's disk, so the test can list it)
        if fmt == "parquet":
            current = location(project, "orders").rsplit("/", 1)[-1]
            kept = version_dirs(project, "orders")
            assert len(kept) == 3 and kept[-1] == current
            base = location(project, "orders").rsplit("/", 1)[0].replace("file:", "", 1)
            assert sorted(os.listdir(os.path.join(base, "_jammi_versions"))) == kept
            # the helper table that removes directories over SQL leaves nothing behind
            schema_dir = os.path.dirname(base)
            assert [d for d in os.listdir(schema_dir) if d.startswith("orders__jammi")] == []

    def test_refusals(self, project):
        output = operation("rollback_mutable_table", "{model: plain, to_version: 1}", False)
        assert "materialized as table, not mutable_table" in output
        before = table_rows(project, "orders", "id, status, amount")
        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "rollback_mutable_table",
                "--args",
                "{model: orders, to_version: 1}",
                "--vars",
                "{jammi_tenant: acme}",
            ],
            expect_pass=False,
        )
        assert "refused in a run bound to a tenant" in output
        assert table_rows(project, "orders", "id, status, amount") == before
        run_dbt(["run", "--select", "plain"])

    def test_as_of_is_scoped_and_guarded(self, project, fmt):
        run(project, "prices", {"price": 1})
        run(project, "prices", {"price": 10})
        version = first_prices_version(project, fmt)
        run(project, "prices_as_of", {"as_of": version, "jammi_tenant": "acme"})
        assert table_rows(project, "prices_as_of", "sku, price") == [("a", 1), ("s", 3)]
        run(project, "prices_as_of", {"as_of": version})
        assert table_rows(project, "prices_as_of", "sku, price") == [
            ("a", 1),
            ("g", 2),
            ("s", 3),
        ]
        if fmt == "parquet":
            location = [
                r[1]
                for r in rows(project, f"describe table extended {project.test_schema}.prices")
                if r[0] == "Location"
            ][0]
            result = run(
                project, "unscoped", {"path": location, "jammi_tenant": "acme"}, expect_pass=False
            )
            assert "without the adapter's tenant scope" in result.results[0].message


ACCOUNTS = """
{{ config(materialized='mutable_table', primary_key=['id'], delete_when='gone', versions_kept=5) }}
{% set batch = var('batch', 1) %}
{% if batch == 1 %} select * from values (1, 'a', false), (2, 'b', false) as t(id, label, gone)
{% elif batch == 2 %} select * from values (1, 'A', false) as t(id, label, gone)
{% elif batch == 3 %} select * from values (2, 'b', true) as t(id, label, gone)
{% else %} select * from values (3, 'c', false) as t(id, label, gone)
{% endif %}
"""


def history_counts(output: str) -> list[tuple[str, str, str]]:
    """(inserts, updates, deletes) of each version mutable_table_history prints, newest
    first."""
    lines = [line.split(" | ") for line in output.splitlines() if line.count(" | ") == 6]
    return [tuple(fields[2:5]) for fields in lines if fields[2] != "inserts"]


UNKNOWN = ("?", "?", "?")


class TestHistoryCounts(MutableProjectBase):
    """Every version a run writes lists what it inserted, updated and deleted: the first
    run's create, an update, a delete and an insert. Iceberg reads them from each
    snapshot's summary: a MERGE's from Spark 4.1 on, an append's on every Spark. On Spark
    3.5 a MERGE that rewrote files lists '?' (its summary counts the files' rows), one
    that only removed whole files its deletes: which one depends on the files' layout."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"accounts.sql": ACCOUNTS}

    def test_each_version_lists_its_counts(self, project, fmt):
        for batch in (1, 2, 3, 4):
            run(project, "accounts", {"batch": batch})
        assert table_rows(project, "accounts", "id, label") == [(1, "A"), (3, "c")]
        output = operation("mutable_table_history", "{model: accounts}")
        inserted, deleted, updated, created = history_counts(output)
        assert (inserted, created) == (("1", "0", "0"), ("2", "0", "0"))
        if fmt != "iceberg" or counts_in_snapshot(pyspark.__version__):
            assert (deleted, updated) == (("0", "0", "1"), ("0", "1", "0"))
        else:
            assert deleted in (("0", "0", "1"), UNKNOWN) and updated == UNKNOWN
