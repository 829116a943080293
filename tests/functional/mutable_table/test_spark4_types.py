"""Spark 4's new column types reach the closed type set's checks with their fixes.

`string collate UTF8_LCASE` would make 'A' and 'a' one key and hide case-only updates,
so only the default (byte-wise) collation is a string; `variant` is stored as JSON.
Runs where PySpark is 4.x (`make spark4-lane`); Spark 3.5 has neither type.
"""

import pyspark
import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    registry_rows,
    run,
    table_exists,
    table_rows,
)

pytestmark = pytest.mark.skipif(
    int(pyspark.__version__.split(".")[0]) < 4,
    reason="collations and VARIANT are Spark 4 types (make spark4-lane runs this)",
)

CASE_INSENSITIVE_KEY = """
{{ config(materialized='mutable_table', primary_key=['code']) }}
select 'A' collate UTF8_LCASE as code, 1 as n
"""

VARIANT_VALUE = """
{{ config(materialized='mutable_table', primary_key=['id']) }}
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
            "fixed.sql": FIXED,
        }

    def test_rejected_with_the_fix_and_nothing_written(self, project):
        results = run(project, "case_insensitive_key variant_value", expect_pass=False)
        messages = {r.node.name: r.message for r in results.results}
        assert "string collate UTF8_LCASE" in messages["case_insensitive_key"]
        assert "collate(code, 'UTF8_BINARY') as code" in messages["case_insensitive_key"]
        assert "type variant" in messages["variant_value"]
        assert "to_json(payload) as payload" in messages["variant_value"]
        for name in messages:
            assert not table_exists(project, name), name
            assert registry_rows(project, name) == []

    def test_the_fixes_keep_keys_that_differ_in_case(self, project):
        run(project, "fixed")
        assert table_rows(project, "fixed", "code, payload, label", "code") == [
            ("A", '{"a":1}', "upper"),
            ("a", '{"b":2}', "lower"),
        ]
