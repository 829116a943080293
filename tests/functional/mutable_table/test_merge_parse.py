"""The MERGE / change-set / write statements, rendered offline, parse with Spark's own
SQL parser (MERGE INTO parses without Delta Lake; only executing it needs Delta)."""

import pytest
from pyspark.sql import SparkSession

from tests.unit.mutable_table.test_mutable_render import statements_for_parsing

STATEMENTS = statements_for_parsing()


# Statements rendered offline, parsed by Spark's parser: the same on every lane, so only
# the embedded parquet lane runs it (on Thrift it would start a JVM in pytest for it).
@pytest.mark.embedded_parquet_only
class TestMergeParses:
    @pytest.fixture(scope="class")
    def parser(self, project):
        # the project fixture has opened dbt's embedded session (with the test profile's
        # settings); getOrCreate returns that session instead of starting another
        spark = SparkSession.builder.getOrCreate()
        return spark._jsparkSession.sessionState().sqlParser()

    @pytest.mark.parametrize("name", sorted(STATEMENTS))
    def test_statement_parses(self, parser, name):
        plan = parser.parsePlan(STATEMENTS[name])
        kind = plan.getClass().getSimpleName()
        if name.startswith("merge_"):
            assert kind == "MergeIntoTable"
        elif name.startswith("write_"):
            assert kind == "InsertIntoDir"
        else:
            assert plan.resolved() is False  # an unresolved query over the batch/target
