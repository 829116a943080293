"""At-least-once delivery (mutable_table/redelivery.py): the collapsed batch's SQL, when
a run collapses, and what it reports. The runs: tests/functional/mutable_table/
test_redelivery.py."""

from __future__ import annotations

from dbt.adapters.jammi.common.run_report import mutable_run_response
from dbt.adapters.jammi.mutable_table import compared_values, redelivery
from dbt.adapters.jammi.mutable_table.commit.merge_commit import change_counts


def test_identical_rows_collapse_with_distinct():
    sql = redelivery.collapsed_batch_sql("(select * from feed)", [["id", "int"], ["v", "bigint"]])
    assert sql == "(select distinct * from (select * from feed) as delivered)"


def test_a_map_or_variant_is_compared_by_its_json_text():
    """Spark compares no maps and no variants (a DISTINCT over one fails): grouped by
    their JSON text instead, a map by its entries in key order (as the planner compares
    a changed map)."""
    sql = redelivery.collapsed_batch_sql(
        "(b)",
        [
            ["id", "int"],
            ["tags", "map<string,int>"],
            ["nested", "array<map<string, int>>"],
            ["payload", "variant"],
        ],
    )
    options = compared_values.JSON_OPTIONS  # every microsecond of a timestamp
    entries = (
        "to_json(array_sort(map_entries(`tags`), (l, r) -> case when l.key < r.key then -1 "
        f"when l.key > r.key then 1 else 0 end), {options})"
    )
    assert sql == (
        "(select `id`, any_value(`tags`) as `tags`, any_value(`nested`) as `nested`, "
        "any_value(`payload`) as `payload` from (b) as delivered "
        f"group by `id`, {entries}, to_json(`nested`, {options}), to_json(`payload`))"
    )


def test_a_sum_collapses_from_the_start_and_duplicates_on_rejection():
    assert redelivery.collapses_always({"merge_functions": {"clicks": "sum"}})
    assert not redelivery.collapses_always({"merge_functions": {"seen": "max"}})
    assert not redelivery.collapses_always({})
    assert redelivery.collapses_on_rejection("duplicate_key")
    assert redelivery.collapses_on_rejection("duplicate_version")
    assert not redelivery.collapses_on_rejection("null_key")


def test_the_response_counts_the_rows_collapsed():
    response = mutable_run_response(change_counts(1, 2, 0), 7, 3)
    assert response.rows_collapsed == 3 and response.rows_affected == 3
    assert mutable_run_response(change_counts(1, 0, 0), 7).rows_collapsed is None
