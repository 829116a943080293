"""A snapshot feed: the source re-sends the whole table each run and a few rows changed.
A batch that changes nothing commits nothing (no new version); on Delta the MERGE is
given only the changed rows (merge_batch.sql), so it rewrites only the files holding
them, and the changelog carries exactly the changes."""

import pytest

from tests.functional.mutable_table.util import (
    MutableProjectBase,
    rows,
    run,
    table_rows,
    table_version,
)

# hard_deletes: delete declares each batch the complete set. Batch 1: ids 1-3; 2: ids
# 1-3 again and 11-13 (on Delta a file of their own: 1-3 are not touched); 3: the
# whole table, one row changed; 4: the same again; 5: the same plus an older row of 12
FEED = """
{{ config(materialized='mutable_table', primary_key=['id'], version_column='v',
          hard_deletes='delete') }}
{% set b = var('batch', 1) %}
select * from values
  (1, 'a', 1L), (2, 'b', 1L), (3, 'c', 1L)
{% if b == 2 %}
  , (11, 'k', 1L), (12, 'l', 1L), (13, 'm', 1L)
{% elif b > 2 %}
  , (11, 'k', 1L), (12, 'l2', 2L), (13, 'm', 1L)
  {%- if b == 5 %}, (12, 'stale', 1L){% endif %}
{% endif %}
as t(id, label, v)
"""

# hard_deletes: a key the snapshot lacks is deleted (batch 2 drops key 2, changes 3)
FEED_DELETES = """
{{ config(materialized='mutable_table', primary_key=['id'], hard_deletes='delete') }}
{% set b = var('batch', 1) %}
select * from values
{% if b == 1 %} (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')
{% else %} (1, 'a'), (3, 'c2'), (4, 'd') {% endif %}
as t(id, label)
"""

AFTER = [(1, "a", 1), (2, "b", 1), (3, "c", 1), (11, "k", 1), (12, "l2", 2), (13, "m", 1)]


class TestSnapshotFeed(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {"feed.sql": FEED, "feed_deletes.sql": FEED_DELETES}

    def test_an_unchanged_snapshot_commits_nothing(self, project, fmt):
        run(project, "feed", {"batch": 1})
        run(project, "feed", {"batch": 2})
        before = table_version(project, "feed", fmt)
        run(project, "feed", {"batch": 3})
        assert table_rows(project, "feed", "id, label, v") == AFTER
        changed = table_version(project, "feed", fmt)
        assert changed != before  # one changed row: one commit
        if fmt == "delta":
            history = rows(project, f"describe history {project.test_schema}.feed limit 1")
            metrics = history[0][12]  # operationMetrics
            assert history[0][4] == "MERGE"
            assert metrics["numTargetRowsUpdated"] == "1"
            # one file holds the changed row: the first run's file is not touched
            # (before snapshot feeds dropped unchanged rows, every file was rewritten)
            assert metrics["numTargetFilesRemoved"] == "1"

        # the same snapshot again, and one whose only difference is an older row of a
        # key that appears twice (the newer one wins, it is stored already)
        for batch in (4, 5):
            result = run(project, "feed", {"batch": batch})
            assert table_rows(project, "feed", "id, label, v") == AFTER
            assert table_version(project, "feed", fmt) == changed
            assert result.results[0].adapter_response.get("rows_affected") == 0

    def test_a_snapshot_deletes_the_keys_it_lacks_and_only_those(self, project, fmt):
        run(project, "feed_deletes", {"batch": 1})
        result = run(project, "feed_deletes", {"batch": 2})
        expected = [(1, "a"), (3, "c2"), (4, "d")]
        assert table_rows(project, "feed_deletes", "id, label") == expected
        response = result.results[0].adapter_response
        assert (response["rows_updated"], response["rows_deleted"]) == (1, 1)
        assert response["rows_inserted"] == 0
        changed = table_version(project, "feed_deletes", fmt)
        # the same snapshot again: nothing is absent, nothing changes, nothing commits
        result = run(project, "feed_deletes", {"batch": 2})
        assert table_rows(project, "feed_deletes", "id, label") == expected
        assert result.results[0].adapter_response["rows_affected"] == 0
        assert table_version(project, "feed_deletes", fmt) == changed
