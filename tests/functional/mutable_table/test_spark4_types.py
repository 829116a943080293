"""Spark 4's new column types: collations reach the type checks with their fixes, and a
variant is a value column.

`string collate UTF8_LCASE` would make 'A' and 'a' one key and hide case-only updates,
so only the default (byte-wise) collation is a string. A `variant` is stored as it is
where the format keeps it (parquet, Delta 4), and a change is decided by its JSON text
(Spark compares no variants); orc and Iceberg refuse it with the fix.
Runs where PySpark is 4.x (the home line's lanes, and `make spark43-lane`); Spark 3.5
has neither type.
"""

import pyspark
import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    registry_rows,
    rows,
    run,
    table_exists,
    table_rows,
)

pytestmark = pytest.mark.skipif(
    int(pyspark.__version__.split(".")[0]) < 4,
    reason="collations and VARIANT are Spark 4 types (the home line, Spark 4.1, runs this)",
)

CASE_INSENSITIVE_KEY = """
{{ config(materialized='mutable_table', primary_key=['code']) }}
select 'A' collate UTF8_LCASE as code, 1 as n
"""

VARIANT_VALUE = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
select id, parse_json(payload) as payload from values
{%- if var('step', 1) == 1 %} (1, '{"a": 1}'), (2, '{"b": [1, 2]}')
{%- elif var('step') == 2 %} (1, '{"a":1}'), (2, '{"b": [1, 2]}'), (2, '{"b": [1, 2]}')
{%- else %} (1, '{"a": 2}'), (2, '{"b": [1, 2]}')
{%- endif %} as t(id, payload)
"""

VARIANT_ON_ORC = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='orc') }}
select 1 as id, parse_json('{"a": 1}') as payload
"""

# The fixes the errors name, and the default collation spelled out.
FIXED = """
{{ config(materialized='mutable_table', primary_key=['code']) }}
select collate(code, 'UTF8_BINARY') as code, to_json(payload) as payload,
       label collate UTF8_BINARY as label
from values ('A' collate UTF8_LCASE, parse_json('{"a": 1}'), 'upper'),
            ('a' collate UTF8_LCASE, parse_json('{"b": 2}'), 'lower')
as t(code, payload, label)
"""


# spark4_path: Spark 4's own types (collations, variant)
@pytest.mark.spark4_path
class TestSpark4Types(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "case_insensitive_key.sql": CASE_INSENSITIVE_KEY,
            "variant_value.sql": VARIANT_VALUE,
            "variant_on_orc.sql": VARIANT_ON_ORC,
            "fixed.sql": FIXED,
        }

    def test_rejected_with_the_fix_and_nothing_written(self, project):
        results = run(project, "case_insensitive_key variant_on_orc", expect_pass=False)
        messages = {r.node.name: r.message for r in results.results}
        assert "string collate UTF8_LCASE" in messages["case_insensitive_key"]
        assert "collate(code, 'UTF8_BINARY') as code" in messages["case_insensitive_key"]
        assert "holds a variant, which file_format orc" in messages["variant_on_orc"]
        assert "to_json(payload) as payload" in messages["variant_on_orc"]
        for name in messages:
            assert not table_exists(project, name), name
            assert registry_rows(project, name) == []

    def test_a_variant_changes_by_its_json_text(self, project, fmt):
        def stored():
            return table_rows(project, "variant_value", "id, to_json(payload)", "id")

        first = run(project, "variant_value").results[0].adapter_response
        assert first["rows_inserted"] == 2
        assert stored() == [(1, '{"a":1}'), (2, '{"b":[1,2]}')]
        # the same JSON (spelled with other blanks), and a row delivered twice: no change
        again = run(project, "variant_value", {"step": 2}).results[0].adapter_response
        assert again["rows_affected"] == 0 and again["rows_collapsed"] == 1
        changed = run(project, "variant_value", {"step": 3}).results[0].adapter_response
        assert changed["rows_updated"] == 1
        assert stored() == [(1, '{"a":2}'), (2, '{"b":[1,2]}')]
        types = {r[0]: r[1] for r in rows(project, f"describe {project.test_schema}.variant_value")}
        assert types["payload"] == "variant"

    def test_the_fixes_keep_keys_that_differ_in_case(self, project):
        run(project, "fixed")
        assert table_rows(project, "fixed", "code, payload, label", "code") == [
            ("A", '{"a":1}', "upper"),
            ("a", '{"b":2}', "lower"),
        ]
