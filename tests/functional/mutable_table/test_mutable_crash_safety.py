"""Crash safety of the rewrite applier (parquet): a run that fails while writing the
next version, or after writing it but before the commit, leaves the old version intact;
the next run converges and leaves no orphan version directory. The failures are
injected with the test hook var ``jammi_fail_at``."""

import os

import pytest

from tests.conftest import test_method
from tests.functional.mutable_table.util import (
    leftovers,
    location,
    registry_rows,
    rows,
    run,
    table_exists,
    table_rows,
    version_dirs,
)

# parquet's rewrite applier and version claims; Delta's are in their own tests
pytestmark = pytest.mark.parquet_only

CRASHY = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet') }}
select * from values
{% if var('batch', 1) == 1 %} (1, 'one'), (2, 'two') {% else %} (2, 'TWO'), (3, 'three') {% endif %}
as t(id, label)
"""

FRESH = """
{{ config(materialized='mutable_table', primary_key=['id'], file_format='parquet') }}
select 1 as id, 'fresh' as label
"""

# Removing version directories needs file system access, which only the embedded
# session has (docs/mutable_table.md); over thrift the old directories stay.
CLEANS_UP = test_method() == "session"

OLD = [(1, "one"), (2, "two")]
NEW = [(1, "one"), (2, "TWO"), (3, "three")]


class TestMutableCrashSafety:
    @pytest.fixture(scope="class")
    def models(self):
        return {"crashy.sql": CRASHY, "fresh.sql": FRESH}

    def test_failure_during_write_and_before_commit(self, project):
        run(project, "crashy", {"batch": 1})
        committed = location(project, "crashy")
        assert version_dirs(project, "crashy") == [committed.rsplit("/", 1)[-1]]

        for phase in ("write", "before_commit"):
            result = run(project, "crashy", {"batch": 2, "jammi_fail_at": phase}, expect_pass=False)
            assert f"jammi_fail_at={phase}" in result.results[0].message
            # the old version is intact and still the committed one
            assert table_rows(project, "crashy", "id, label") == OLD
            assert location(project, "crashy") == committed
        # a failed run removes the version directory it was writing; only the committed
        # version remains (over thrift, without file system access, they stay)
        if CLEANS_UP:
            assert version_dirs(project, "crashy") == [committed.rsplit("/", 1)[-1]]
        # and leaves none of its run relations behind
        assert leftovers(project, "crashy") == []

        run(project, "crashy", {"batch": 2})
        assert table_rows(project, "crashy", "id, label") == NEW
        # the next committing run removed every directory but the committed versions it
        # keeps (versions_kept, default 3: here both)
        if CLEANS_UP:
            current = location(project, "crashy").rsplit("/", 1)[-1]
            assert version_dirs(project, "crashy") == [committed.rsplit("/", 1)[-1], current]
        assert (
            project.run_sql(
                f"show tblproperties {project.test_schema}.crashy ('jammi.version')", fetch="one"
            )[1]
            == "2"
        )

    def test_a_run_that_loses_its_commit_re_plans(self, project):
        # another run commits between this run's plan and its commit: this run's commit
        # is refused, and it re-plans against the other run's version
        run(project, "crashy", {"batch": 1, "jammi_fail_at": "concurrent_commit"})
        assert table_rows(project, "crashy", "id, label") == [(1, "one"), (2, "two"), (3, "three")]
        assert "concurrent" not in location(project, "crashy")
        assert leftovers(project, "crashy") == []
        if CLEANS_UP:
            # the simulated other run logged no version, so the chain of kept versions
            # ends at its version: this run's version and the other run's remain
            current = location(project, "crashy").rsplit("/", 1)[-1]
            kept = version_dirs(project, "crashy")
            assert len(kept) == 2 and kept[-1] == current and "concurrent" in kept[0]

    def test_failed_registration_leaves_nothing(self, project):
        base = location(project, "crashy").rsplit("/", 2)[0].replace("file:", "", 1)
        result = run(project, "fresh", {"jammi_fail_at": "register"}, expect_pass=False)
        assert "jammi_fail_at=register" in result.results[0].message
        assert not table_exists(project, "fresh")
        assert registry_rows(project, "fresh") == []
        if CLEANS_UP:
            assert not os.path.exists(os.path.join(base, "fresh"))

        run(project, "fresh")
        assert table_rows(project, "fresh", "id, label") == [(1, "fresh")]
        assert registry_rows(project, "fresh") == [("fresh", "parquet")]
        assert rows(project, f"select count(*) from {project.test_schema}.mutable_tables") == [(2,)]
