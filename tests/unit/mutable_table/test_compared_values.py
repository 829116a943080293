"""Values Spark cannot compare, compared by their JSON text (mutable_table/
compared_values.py), with every microsecond; the planner's macro writes the same text."""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.jammi.mutable_table import compared_values

CHANGE_SET_SQL = (
    Path(compared_values.__file__).parents[3]
    / "include/jammi/macros/mutable_table/planner/change_set.sql"
)


def test_maps_and_types_holding_them_are_compared_by_text_with_every_microsecond():
    options = compared_values.JSON_OPTIONS
    assert "SSSSSS" in options
    assert compared_values.compared_text("v", "map<string,timestamp>") == (
        "to_json(array_sort(map_entries(v), (l, r) -> case when l.key < r.key then -1 "
        f"when l.key > r.key then 1 else 0 end), {options})"
    )
    assert compared_values.compared_text("v", "array<map<string,int>>") == (
        f"to_json(v, {options})"
    )
    # a variant prints its own way and takes no options
    assert compared_values.compared_text("v", "variant") == "to_json(v)"
    assert compared_values.compared_text("v", "struct<p:variant,m:map<string,int>>") == (
        "to_json(v)"
    )
    for spark_type in ("timestamp", "array<int>", "struct<a:timestamp>", "string"):
        assert compared_values.compared_text("v", spark_type) is None


def test_the_planner_macro_writes_the_same_options():
    assert compared_values.JSON_OPTIONS in CHANGE_SET_SQL.read_text()
