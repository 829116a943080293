"""identity_column: new keys are numbered 1, 2, 3, ... in key order; a key keeps its
number through updates, partial updates and re-sent rows; a number is never handed out
again after its key is deleted (the high-water mark is committed with the rows); the
model's own values for the column are ignored. Runs on parquet, in the Delta lane on
Delta and in the Iceberg lane on Iceberg (each commit path keeps the mark differently:
docs/mutable_table.md)."""

from __future__ import annotations

import pytest

from tests.functional.mutable_table.util import MutableProjectBase, run, table_rows

# var rows: [[sku, label, deleted], ...]; the identity column is not in the output
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['sku'], identity_column='item_no',
          delete_when='is_deleted') }}
select * from values
{% for sku, label, deleted in var('rows', []) or [['none', '', 'false']] %}
  ('{{ sku }}', '{{ label }}', {{ deleted }}){{ ',' if not loop.last }}
{% endfor %}
as t(sku, label, is_deleted)
{% if not var('rows', []) %} where false {% endif %}
"""

# the model outputs the identity column with values of its own: they are ignored;
# partial updates keep the stored label when the batch's is NULL
SUPPLIED = """
{{ config(materialized='mutable_table', primary_key=['sku'], identity_column='item_no',
          partial_updates=true) }}
select * from values
{% for sku, label, item_no in var('rows', []) %}
  ('{{ sku }}', {{ "'" ~ label ~ "'" if label else 'cast(null as string)' }},
   cast({{ item_no }} as bigint)){{ ',' if not loop.last }}
{% endfor %}
as t(sku, label, item_no)
"""


def numbers(project, table: str) -> list[tuple]:
    return table_rows(project, table, "sku, label, item_no", "item_no")


def affected(results) -> int:
    return int(results[0].adapter_response.get("rows_affected", -1))


def items(project, rows):
    return run(project, "items", {"rows": rows})


# connection_agnostic: numbering is planner SQL; test_identity_races.py races it over Thrift
@pytest.mark.connection_agnostic
class TestIdentityColumn(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"items.sql": ITEMS, "supplied.sql": SUPPLIED}

    def test_numbers_survive_updates_deletes_and_re_runs(self, project):
        # new keys: 1..n in key order, whatever order the batch lists them in
        items(project, [["c", "C", "false"], ["a", "A", "false"], ["b", "B", "false"]])
        assert numbers(project, "items") == [("a", "A", 1), ("b", "B", 2), ("c", "C", 3)]

        # an update keeps the number; a re-sent identical row changes nothing
        results = items(project, [["a", "A", "false"], ["b", "B2", "false"]])
        assert affected(results) == 1
        assert numbers(project, "items") == [("a", "A", 1), ("b", "B2", 2), ("c", "C", 3)]

        # the same batch again is a no-op
        results = items(project, [["a", "A", "false"], ["b", "B2", "false"]])
        assert affected(results) == 0
        assert numbers(project, "items") == [("a", "A", 1), ("b", "B2", 2), ("c", "C", 3)]

        # delete the highest key: its number is never handed out again
        items(project, [["c", "", "true"]])
        assert numbers(project, "items") == [("a", "A", 1), ("b", "B2", 2)]
        items(project, [["d", "D", "false"]])
        assert numbers(project, "items") == [("a", "A", 1), ("b", "B2", 2), ("d", "D", 4)]

        # a delete of the highest key and new keys in one run: numbered above it
        items(project, [["d", "", "true"], ["e", "E", "false"], ["f", "F", "false"]])
        assert numbers(project, "items") == [
            ("a", "A", 1),
            ("b", "B2", 2),
            ("e", "E", 5),
            ("f", "F", 6),
        ]

        # a run that changes nothing keeps the mark for the next one
        items(project, [])
        items(project, [["f", "", "true"]])
        items(project, [["g", "G", "false"]])
        assert numbers(project, "items")[-1] == ("g", "G", 7)

    def test_the_models_values_are_ignored(self, project):
        run(project, "supplied", {"rows": [["x", "X", 100], ["y", "Y", 100]]})
        assert numbers(project, "supplied") == [("x", "X", 1), ("y", "Y", 2)]

        # a partial update with another value of its own keeps label and number
        results = run(project, "supplied", {"rows": [["y", "", 555], ["z", "Z", -1]]})
        assert affected(results) == 1  # only z: y's row is unchanged
        assert numbers(project, "supplied") == [("x", "X", 1), ("y", "Y", 2), ("z", "Z", 3)]
