"""What a run reports (docs/run_results.md): a mutable_table run's adapter_response
carries its inserted/updated/deleted counts and the table's version after it, a no-op
run included; a topic publish carries the events it published and their offset; a
consumer carries the events it read. Asserted on the results dbt returns and on the
run_results.json it writes, on the lane's format and connection method."""

import json
from pathlib import Path

import pytest

from tests.functional.mutable_table.test_tombstones import current_version
from tests.functional.mutable_table.util import (
    MutableProjectBase,
    rows,
    run,
    unchanged_batch_commits,
)

# var rows: [[id, name, op]]; op 'd' deletes the key
ITEMS = """
{{ config(materialized='mutable_table', primary_key=['id'], delete_when="op = 'd'") }}
select id, name, op from values
{% for id, name, op in var('rows', [[0, '', 'x']]) %}
  ({{ id }}, '{{ name }}', '{{ op }}'){{ ',' if not loop.last }}
{% endfor %}
as t(id, name, op)
where op <> 'x'
"""

EVENTS = """
{{ config(materialized='topic') }}
select id, concat('event ', id) as label from range({{ var('lo', 0) }}, {{ var('hi', 0) }})
"""

# a consumer: appends what it has not read yet
READER = """
{{ config(materialized='incremental', incremental_strategy='append', file_format='parquet') }}
select event_offset, id from {{ topic_events(ref('events')) }}
"""


def stored_version(project, fmt) -> int:
    """The table's version as the format keeps it (Iceberg: the current snapshot)."""
    if fmt == "iceberg":
        table = f"{project.test_schema}.items"
        return rows(
            project,
            f"select snapshot_id from {table}.history where is_current_ancestor "
            "order by made_current_at desc limit 1",
        )[0][0]
    return current_version(project, fmt)


def response(project, result, node: str) -> dict:
    """The node's adapter_response, as dbt returned it and as run_results.json holds it
    (they must agree)."""
    returned = next(r for r in result.results if r.node.name == node).adapter_response
    written = json.loads((Path(project.project_root) / "target" / "run_results.json").read_text())
    stored = next(r for r in written["results"] if r["unique_id"].endswith(f".{node}"))
    assert stored["adapter_response"] == returned
    return returned


class TestRunResults(MutableProjectBase):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "items.sql": ITEMS,
            "events.sql": EVENTS,
            "reader.sql": READER,
            "quiet_events.sql": EVENTS,
        }

    def test_mutable_table_counts_and_version(self, project, fmt):
        first = response(
            project,
            run(project, "items", {"rows": [[1, "a", ""], [2, "b", ""], [3, "c", ""]]}),
            "items",
        )
        assert first["rows_inserted"] == 3 and first["rows_affected"] == 3
        assert (first["rows_updated"], first["rows_deleted"]) == (0, 0)
        assert first["table_version"] == stored_version(project, fmt)
        assert first["_message"] == "INSERT 3, UPDATE 0, DELETE 0"

        batch = {"rows": [[1, "a2", ""], [2, "", "d"], [4, "d", ""]]}
        changed = response(project, run(project, "items", batch), "items")
        assert (changed["rows_inserted"], changed["rows_updated"], changed["rows_deleted"]) == (
            1,
            1,
            1,
        )
        assert changed["rows_affected"] == 3
        assert changed["table_version"] == stored_version(project, fmt)
        assert changed["table_version"] != first["table_version"]  # Iceberg's ids are unordered

        # the same batch again changes nothing
        same = response(project, run(project, "items", batch), "items")
        assert (same["rows_affected"], same["rows_inserted"], same["rows_updated"]) == (0, 0, 0)
        assert same["rows_deleted"] == 0
        assert same["table_version"] == stored_version(project, fmt)
        if not unchanged_batch_commits(fmt):  # commits nothing; a batch-sourced MERGE commits
            assert same["table_version"] == changed["table_version"]

    def test_publish_offset_and_events_read(self, project):
        published = response(project, run(project, "events", {"lo": 0, "hi": 5}), "events")
        assert (published["rows_affected"], published["offset"]) == (5, 1)
        read = response(project, run(project, "reader"), "reader")
        topic = f"{project.test_schema}.events"
        assert read["events_read"] == 5
        assert read["offsets_read"] == {topic: [0, 1]}

        again = response(project, run(project, "events", {"lo": 5, "hi": 7}), "events")
        assert (again["rows_affected"], again["offset"]) == (2, 2)
        read = response(project, run(project, "reader"), "reader")
        assert read["events_read"] == 2 and read["offsets_read"] == {topic: [1, 2]}

        # nothing new: the consumer reads nothing and reports no range
        idle = response(project, run(project, "reader"), "reader")
        assert "events_read" not in idle and "offsets_read" not in idle

    def test_an_empty_publish_claims_no_offset(self, project, fmt):
        """A batch without rows publishes nothing: it claims no offset, its result says
        so, and the next publish takes the offset after the last one that had events
        (on Iceberg both used to report the same offset)."""
        first = response(project, run(project, "quiet_events", {"lo": 0, "hi": 3}), "quiet_events")
        empty = response(project, run(project, "quiet_events", {"lo": 3, "hi": 3}), "quiet_events")
        after = response(project, run(project, "quiet_events", {"lo": 3, "hi": 5}), "quiet_events")
        published = [(r["rows_affected"], r.get("offset")) for r in (first, empty, after)]
        assert published == [(3, 1), (0, None), (2, 2)]
        assert empty["_message"] == "PUBLISH 0: an empty batch claims no offset"
        schema = project.test_schema
        (backing,) = rows(
            project, f"select backing_table from {schema}.topics where name = 'quiet.events'"
        )[0]
        stored = f"select _offset, count(*) from {schema}.{backing} group by 1 order by 1"
        assert rows(project, stored) == [(1, 3), (2, 2)]
        if fmt == "parquet":  # no partition of no rows either
            partitions = rows(project, f"show partitions {schema}.{backing}")
            assert [p[0] for p in partitions] == ["_offset=1", "_offset=2"]
