"""Adopting a table another materialization built (mutable_table/adoption.py): what is
refused before anything is written, what adoption adds, and the stored-key check. The
runs themselves: tests/functional/mutable_table/test_adoption.py."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.mutable_table import adoption
from dbt.adapters.jammi.mutable_table.run_config import run_definition
from tests.unit.rejections import rejects

STORED = [["id", "int"], ["amount", "bigint"]]


def definition(config: dict | None = None, columns=(("id", "int"), ("amount", "bigint"))):
    return run_definition(
        "orders", [list(c) for c in columns], {"primary_key": ["id"], **(config or {})}
    )


def plan(
    config=None, stored=STORED, provider="parquet", partitioned=False, requested=None, tenant=None
):
    return adoption.plan_adoption(
        "orders", "s.orders", definition(config), stored, provider, partitioned, requested, tenant
    )


def test_a_plain_table_is_adopted_with_a_tenant_column():
    adopted = plan()
    assert adopted.file_format == "parquet"
    assert adopted.add_tenant_column
    assert adopted.key == ["id"]
    assert adopted.violations_sql == (
        "select `id`, count(*) as rows_held from s.orders group by `id` "
        "having count(*) > 1 or `id` is null limit 5"
    )


def test_a_stored_tenant_column_is_kept_and_keys_are_per_tenant():
    adopted = plan(stored=[*STORED, ["tenant_id", "string"]], provider="delta")
    assert not adopted.add_tenant_column
    assert adopted.key == ["tenant_id", "id"]
    # a NULL tenant is a shared row, not a violation
    assert "`tenant_id` is null" not in adopted.violations_sql
    assert "having count(*) > 1 or `id` is null" in adopted.violations_sql


@pytest.mark.parametrize(
    "kwargs, fragments",
    [
        (
            {"provider": "hudi"},
            ["is a 'hudi' table", "adopts parquet, orc, delta, iceberg and Hive"],
        ),
        (
            {"provider": "delta", "requested": "iceberg"},
            ["stored as 'delta'", "set file_format: delta"],
        ),
        ({"partitioned": True}, ["partitioned parquet table", "unpartitioned table"]),
        ({"tenant": "acme"}, ["bound to tenant 'acme'", "without jammi_tenant"]),
        ({"config": {"changelog": True}}, ["sets changelog", "without changelog"]),
        ({"stored": [["amount", "bigint"]]}, ["no column 'id' of the primary_key"]),
        ({"config": {"history": "scd2"}}, ["lacks the column(s) ['valid_from', 'valid_to']"]),
        ({"config": {"identity_column": "order_no"}}, ["lacks the column(s) ['order_no']"]),
        ({"stored": [*STORED, ["tenant_id", "int"]]}, ["'tenant_id' of type int"]),
    ],
    ids=[
        "hudi_table",
        "format_change",
        "partitioned_rewrite_format",
        "bound_run",
        "changelog",
        "key_not_stored",
        "scd2_columns_missing",
        "identity_column_missing",
        "tenant_id_not_string",
    ],
)
def test_refused_before_anything_is_written(kwargs, fragments):
    rejects(lambda: plan(**kwargs), "mutable_table 'orders'", "s.orders exists", *fragments)


def test_what_is_refused_on_a_rewrite_format_is_adopted_in_place_on_delta_and_iceberg():
    for provider in ("delta", "iceberg"):
        assert plan(provider=provider, partitioned=True).file_format == provider
    assert plan(provider="delta", requested="auto").file_format == "delta"


def test_a_hive_table_is_rewritten_as_the_requested_or_the_auto_format():
    adopted = plan(provider="hive", partitioned=True)
    # auto resolves to the session's format (here the default, parquet); a Hive table's
    # partitions are rewritten as rows, so a partitioned one is adopted too
    assert (adopted.file_format, adopted.from_hive) == ("parquet", True)
    # the rewrite adds the NULL tenant_id itself
    assert not adopted.add_tenant_column
    assert plan(provider="hive", requested="orc").file_format == "orc"
    assert (
        adoption.plan_adoption(
            "orders", "s.orders", definition(), STORED, "hive", False, None, None, "delta"
        ).file_format
        == "delta"
    )
    assert not plan(provider="parquet").from_hive


def test_stored_key_violations_name_samples_and_the_fix():
    assert adoption.key_violations_error("orders", "s.orders", ["id"], []) is None
    error = adoption.key_violations_error("orders", "s.orders", ["id"], [[1, 2], [None, 1]])
    message = str(error)
    assert "NULL or duplicate primary keys" in message
    assert "(id=1: 2 rows); (id=None: 1 rows)" in message
    assert "nothing was changed" in message and "Fix:" in message


def test_describe_rows_give_the_provider_and_partitioning():
    described = [
        ["id", "int", None],
        ["# Partition Information", "", ""],
        ["# col_name", "data_type", "comment"],
        ["Provider", "Delta", ""],
    ]
    assert adoption.describe_provider(described) == "delta"
    assert adoption.describe_partitioned(described)
    assert adoption.describe_provider([["id", "int", None]]) == "hive"
    assert not adoption.describe_partitioned([["id", "int", None]])
