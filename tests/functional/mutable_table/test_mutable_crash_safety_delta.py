"""Crash safety on Delta (the delta lane): the injected failures of
test_mutable_crash_safety, on the MERGE applier and on Delta's first-run registration,
which is all or nothing: a failing ZORDER or registry insert leaves no table, no
registry row and no files. The failures are injected with the test hook var
``jammi_fail_at``."""

import os

import pytest

from tests.conftest import test_method
from tests.functional.mutable_table.test_mutable_crash_safety import CRASHY as PARQUET_CRASHY
from tests.functional.mutable_table.test_mutable_crash_safety import NEW, OLD
from tests.functional.mutable_table.util import (
    file_format,
    leftovers,
    location,
    registry_rows,
    rows,
    run,
    table_exists,
    table_rows,
)

pytestmark = pytest.mark.skipif(file_format() != "delta", reason="needs Delta Lake (delta lane)")

# the parquet test's model and batches, on Delta
CRASHY = PARQUET_CRASHY.replace("file_format='parquet'", "file_format='delta'")

# a secondary index: the first run Z-orders the new table by `label`
FRESH = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='delta',
          indexes=[{'name': 'by_label', 'columns': ['label']}]) }}
select 1 as id, 'fresh' as label
"""


def operations(project, table: str) -> list[str]:
    """Delta's commit log of ``table``, oldest first: WRITE, MERGE, OPTIMIZE, ..."""
    history = rows(project, f"describe history {project.test_schema}.{table}")
    return [r[4] for r in sorted(history, key=lambda r: r[0])]


class TestMutableCrashSafetyDelta:
    @pytest.fixture(scope="class")
    def models(self):
        return {"crashy.sql": CRASHY, "fresh.sql": FRESH}

    def test_a_failed_merge_commits_nothing(self, project):
        run(project, "crashy", {"batch": 1})
        committed = operations(project, "crashy")
        for phase in ("write", "before_commit"):
            result = run(project, "crashy", {"batch": 2, "jammi_fail_at": phase}, expect_pass=False)
            assert f"jammi_fail_at={phase}" in result.results[0].message
            assert table_rows(project, "crashy", "id, label") == OLD
            assert operations(project, "crashy") == committed  # no Delta commit at all
        assert leftovers(project, "crashy") == []

        run(project, "crashy", {"batch": 2})
        assert table_rows(project, "crashy", "id, label") == NEW
        assert operations(project, "crashy")[len(committed) :] == ["MERGE"]

    def test_a_failed_zorder_or_registry_insert_leaves_nothing(self, project):
        base = location(project, "crashy").rsplit("/", 1)[0].replace("file:", "", 1)
        for phase in ("zorder", "register"):
            result = run(project, "fresh", {"jammi_fail_at": phase}, expect_pass=False)
            assert f"jammi_fail_at={phase}" in result.results[0].message
            assert not table_exists(project, "fresh")
            assert registry_rows(project, "fresh") == []
            assert leftovers(project, "fresh") == []
            if test_method() == "session":  # the files are gone too (local file system)
                assert not os.path.exists(os.path.join(base, "fresh"))

        run(project, "fresh")
        assert table_rows(project, "fresh", "id, label") == [(1, "fresh")]
        assert registry_rows(project, "fresh") == [("fresh", "delta")]
        # the create and its Z-order, one commit each, in that order
        assert operations(project, "fresh") == ["CREATE TABLE AS SELECT", "OPTIMIZE"]
