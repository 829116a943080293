"""``partial_updates`` as a column list: NULL keeps the stored value in the listed columns
only; every planner path (the change set, the batch MERGE, merge functions' aggregate)
renders the keep for those columns and the batch's value for the others, and a column
the model stops outputting is kept only when it is listed."""

from __future__ import annotations

import pytest

from dbt.adapters.jammi.common.errors import JammiValidationError
from dbt.adapters.jammi.mutable_table.definition import MutableTableDefinition
from dbt.adapters.jammi.mutable_table.planner_rules import planner_rules
from dbt.adapters.jammi.mutable_table.schema_reconciliation import reconcile_schema
from tests.unit.mutable_table.test_mutable_render import render

PRICES = {"sku": "string", "price": "bigint", "label": "string", "v": "bigint"}


def definition(partial_updates, **config) -> dict:
    config.setdefault("primary_key", ["sku"])
    data = MutableTableDefinition.from_config(
        "prices", PRICES, {"partial_updates": partial_updates, **config}
    ).to_dict()
    data["batch_columns"] = list(PRICES)
    return data


def change_set(defn: dict) -> str:
    return render("get_change_set_sql", defn, "prices__jammi_batch", "analytics.prices", None)


def test_the_planner_keeps_only_the_listed_columns():
    rules = planner_rules(definition(["label"]))
    assert [rules.keeps_stored_on_null(c) for c in ("price", "label", "v")] == [
        False,
        True,
        False,
    ]
    every = planner_rules(definition(True))
    assert all(every.keeps_stored_on_null(c) for c in ("price", "label", "v"))


def test_the_change_set_coalesces_the_listed_column_only():
    sql = change_set(definition(["label"], version_column="v"))
    assert "coalesce(s_label, t_label)" in sql
    assert "coalesce(s_price, t_price)" not in sql
    assert "s_price <=> t_price" in sql
    # true keeps today's rendering: every value column coalesces
    every = change_set(definition(True, version_column="v"))
    assert "coalesce(s_price, t_price)" in every and "coalesce(s_label, t_label)" in every


def test_the_batch_merge_coalesces_the_listed_column_only():
    sql = render(
        "get_merge_batch_sql",
        definition(["label"], version_column="v"),
        "analytics.prices",
        "prices__jammi_batch",
        None,
        False,
    )
    assert "t.`label` = coalesce(s.`label`, t.`label`)" in sql
    assert "t.`price` = s.`price`" in sql
    assert "coalesce(s.`price`, t.`price`)" not in sql


def test_merge_functions_combine_the_listed_column_over_its_non_null_rows():
    sql = change_set(definition(["label"], version_column="v", merge_functions={"price": "max"}))
    # the listed column: its newest non-NULL batch value; the others: the newest row's
    assert "max_by(`label`, case when `label` is not null and not is_delete then" in sql
    assert "max(`price`) filter (where not is_delete)" in sql


def reconcile(partial_updates, output, on_schema_change="fail"):
    """The run's reconciliation when the model outputs only ``output`` of the stored
    PRICES columns."""
    schema = {n: PRICES[n] for n in output}
    batch = MutableTableDefinition.from_config(
        "prices",
        schema,
        {
            "primary_key": ["sku"],
            "partial_updates": partial_updates,
            "on_schema_change": on_schema_change,
        },
    ).to_dict()
    return reconcile_schema("prices", batch, list(PRICES.items()))


def test_a_column_the_model_stops_outputting_is_kept_only_when_listed_or_true():
    kept = reconcile(True, ["sku", "label", "v"])
    assert [c[0] for c in kept.definition["columns"]] == list(PRICES)
    assert kept.missing_columns == ["price"]
    # a list names output columns only, so a column the model dropped is not kept
    with pytest.raises(JammiValidationError) as refused:
        reconcile(["label"], ["sku", "label", "v"])
    assert "stored column(s) price are missing from the model's output" in str(refused.value)
    assert "set partial_updates: true" in str(refused.value)
