"""A dbt unit test whose fixture gives a value its input column cannot hold exactly
(3000000000 for an int) is refused with the column and the value, instead of running on
the value Spark's cast would make of it; a fixture whose values fit runs as before
(unit_testing/fixture_values.py)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, write_file

BASE_SQL = """
{{ config(materialized='table', file_format='parquet') }}
select * from values (1, 10) as t(id, qty)
"""

DOUBLED_SQL = """
select id, cast(qty as bigint) * 2 as doubled from {{ ref('base') }}
"""

UNIT_TESTS_YML = """
unit_tests:
  - name: doubles_{name}
    model: doubled
    given:
      - input: ref('base')
        rows:
          - {{id: 1, qty: {qty}}}
    expect:
      rows:
        - {{id: 1, doubled: {doubled}}}
"""


class TestFixtureValues:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "base.sql": BASE_SQL,
            "doubled.sql": DOUBLED_SQL,
            "unit_tests.yml": UNIT_TESTS_YML.format(name="fitting", qty=7, doubled=14),
        }

    def test_a_value_the_column_cannot_hold_is_refused(self, project):
        run_dbt(["run", "--select", "base"])
        run_dbt(["test", "--select", "doubled"])
        write_file(
            UNIT_TESTS_YML.format(name="wrapping", qty=3000000000, doubled=6000000000),
            project.project_root,
            "models",
            "unit_tests.yml",
        )
        result = run_dbt(["test", "--select", "doubled"], expect_pass=False)
        message = result.results[0].message
        assert "column 'qty' is int, which cannot hold 3000000000 exactly" in message
        assert "Fix:" in message
